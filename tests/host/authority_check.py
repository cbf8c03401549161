"""What tests/motion_runner/memory_lane/test_memory_lane_authority.py does inside the host project,
after `migrate` (issue 40 item 2, issue 42 item 5's AZ5): a row on memory-lane's page counts here as
memory-lane counts it. Prints one JSON object.

`python -m tests.host.authority_check` with DJANGO_SETTINGS_MODULE=tests.host.settings (whose
`MOOD_ADMINS` is ("justin",), as memory-lane's own setting names its admins).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from motion_runner.models import Agent, Scram  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from motion_runner.runner.stopping import lift_scram, raise_scram  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from wakes.decision.steering import steering_for  # noqa: E402


def setting(key: str, value, *, mood=None, agent=None, by=None, note: str = ""):
    with transaction.atomic():
        return host.Setting.objects.create(key=key, value=value, mood=mood, agent=agent, set_by=by, note=note)


def said(motion, contains: str) -> list[str]:
    return list(
        motion.messages.filter(text__contains=contains).order_by("created_at").values_list("text", flat=True)
    )


def main() -> dict:
    seen: dict = {}
    record = binding()
    people = {
        name: host.ThinkingEntity.objects.create(
            name=name, participant_type="human", is_biological_human=True
        )
        for name in ("justin", "skyler")
    }
    magent_entity = host.ThinkingEntity.objects.create(
        name="magent", participant_type="ai", is_biological_human=False
    )
    lobby = host.Mood.objects.create(slug="lobby", title="lobby")
    magent = Agent.objects.create(name="magent", harness="claude-code")
    motion = record.motion_for_mood(lobby)
    motion.agents.add(magent)

    # 1. skyler has no account here: her model row is said as not applied, and does not count.
    setting("model", "sonnet", mood=lobby, agent=magent_entity, by=people["skyler"])
    seen["before"] = {
        "model": steering_for(motion.pk, magent.pk).model,
        "said": said(motion, "sonnet"),
    }
    # 2. memory-lane's MOOD_ALLOWED_SIGNERS brought here: her next row counts and is said as done.
    with tempfile.TemporaryDirectory() as folder:
        key = Path(folder) / "skyler"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "skyler", "-f", str(key)], check=True
        )
        signers = Path(folder) / "allowed_signers"
        signers.write_text(f'skyler namespaces="magenta-moods" {key.with_suffix(".pub").read_text()}')
        call_command("enroll_signers", file=str(signers), stdout=open("/dev/null", "w"))
    seen["enrolled"] = list(
        get_user_model().objects.filter(ssh_keys__isnull=False).values_list("username", flat=True)
    )
    setting("model", "opus", mood=lobby, agent=magent_entity, by=people["skyler"])
    seen["after"] = {"model": steering_for(motion.pk, magent.pk).model, "said": said(motion, "opus")}

    # 3. AZ5 rows: an AI entity's lift does not lift the scram staff raised here; an admin's does.
    raise_scram("staff-ops", "deploy went wrong")
    setting("scram", False, by=magent_entity, note="lifted by magent")
    seen["ai_lift"] = {"holds": Scram.holding() is not None, "said": said(motion, "Not obeyed")}
    setting("scram", False, by=people["skyler"], note="lifted by skyler")  # a person, not an admin
    seen["non_admin_lift"] = {"holds": Scram.holding() is not None, "said": said(motion, "skyler — ")}
    setting("scram", False, by=people["justin"], note="all clear")
    seen["admin_lift"] = {"holds": Scram.holding() is not None, "lifted_by": Scram.objects.get().lifted_by}
    setting("scram", True, by=magent_entity, note="AZ5 by magent")
    seen["ai_raise"] = {"holds": Scram.holding() is not None}
    setting("scram", True, by=people["justin"], note="runaway agents")
    held = Scram.holding()
    seen["admin_raise"] = {
        "raised_by": held.raised_by if held else None,
        "said": said(motion, "Scram raised by"),
    }
    lift_scram("staff-ops")
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
