from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from motion_runner.api.auth import create_key, revoke_key
from motion_runner.models import Agent, AgentKey


class Command(BaseCommand):
    help = "Create an API key for an agent (shown once), list its keys, or revoke one by prefix."

    def add_arguments(self, parser):
        parser.add_argument("agent", help="The agent's name, without the @.")
        parser.add_argument("--label", default="", help="What the key is for.")
        parser.add_argument("--revoke", metavar="PREFIX", help="Revoke the key with this prefix.")
        parser.add_argument("--list", action="store_true", help="List the agent's keys.")

    def handle(self, *args, agent, label="", revoke=None, list=False, **options):
        try:
            record = Agent.objects.get(name=agent.lstrip("@"))
        except Agent.DoesNotExist:
            raise CommandError(f"no agent named {agent!r}") from None
        if list:
            for key in AgentKey.objects.filter(agent=record):
                state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
                used = f"{key.last_used_at:%Y-%m-%d %H:%M}" if key.last_used_at else "never"
                self.stdout.write(f"{key.prefix}  {state}  last used {used}  {key.label}")
            return
        if revoke:
            if not AgentKey.objects.filter(agent=record, prefix=revoke).exists():
                raise CommandError(f"@{record.name} has no key with prefix {revoke!r}")
            count = revoke_key(revoke)
            self.stdout.write(f"revoked {revoke}" if count else f"{revoke} was already revoked")
            return
        key_record, key = create_key(record, label)
        self.stderr.write(f"A new key for @{record.name} (prefix {key_record.prefix}). It is shown only now:")
        self.stdout.write(key)
