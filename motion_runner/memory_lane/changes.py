"""A post taken back, in either record: memory-lane's retract reaches the apps, the apps' reaches it.

memory-lane takes a post back (its `services/retract.py`, read late 2026) with a queryset update of
the row's content (`[deleted]`, or the new words: no `post_save` for the row) and then a
`MessageChange` row (`update_or_create`: who, when, `deleted`/`edited`/`restored`). The binding
listens to what it leaves: a `post_save` of `MessageChange` (`on_change_save`), and, for a change
written where no receiver ran (a shell, a bulk write, a process without the apps), a sweep on the
beat (`sweep_changes`: the newest changes, each applied once: an apps' copy that already says what
the row says is left alone). Either hands the change to the runner through
`signals.host_post_taken_back` (the binding imports nothing of the write path).

The other way (`show_taken_back`, on `signals.message_taken_back`): a post taken back here (the
thread's control, the API) is taken back in memory-lane's row and a `MessageChange` kept, as its
own retract keeps one; a host with no `message_change` model gets the row alone. Either way the
host's own copies of the wakes the apps wrote there lose the words too: the prompts' echoes
(`system`'s rows) and the apps' lines the runner scrubbed (as memory-lane scrubs its poller's wakes).
Mixed into `MemoryLaneRecord` (binding.py), which connects it.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from .. import signals
from ..lib.scrubbing import codes_in, quote_header, scrub_all
from ..models import Message
from .host import host_model, is_writing, writing
from .host_posts import text_of
from .rows import SYSTEM_SENDER

log = logging.getLogger(__name__)

SWEEP_WINDOW = timedelta(minutes=15)  # changes older than this were swept already (beat: every minute)
MOST_PROBED = 20
DELETED = "[deleted]"


def change_model():
    try:
        return host_model("message_change")
    except (LookupError, KeyError):
        return None


class HostChanges:
    def on_change_save(self, sender, instance, raw: bool = False, **kwargs) -> None:
        """memory-lane kept a MessageChange: its row's words (already changed) reach the apps."""
        if raw or is_writing():
            return
        try:
            self.hand_change_to_apps(instance)
        except Exception:  # memory-lane's own retract must never fail because of the apps
            log.exception("a change to memory-lane's post %s could not reach the apps", instance.pk)

    def hand_change_to_apps(self, change: Any) -> None:
        row = host_model("message").objects.filter(pk=change.message_id).only("pk", "content").first()
        if row is None:
            return
        signals.host_post_taken_back.send(
            sender=Message,
            message_id=row.pk,
            kind=str(change.kind),
            text=text_of(row.content),
            by=str(change.by),
        )

    def sweep_changes(self, window: timedelta = SWEEP_WINDOW) -> int:
        """memory-lane's changes of the last `window` whose post the apps still hold otherwise:
        applied now. How many were applied."""
        model = change_model()
        if model is None:
            return 0
        changes = list(model.objects.filter(at__gte=timezone.now() - window).order_by("at"))
        if not changes:
            return 0
        rows = {
            row.pk: text_of(row.content)
            for row in host_model("message")
            .objects.filter(pk__in=[c.message_id for c in changes])
            .only("content")
        }
        ours = dict(Message.objects.filter(pk__in=list(rows)).values_list("pk", "text"))
        applied = 0
        for change in changes:
            if change.message_id not in ours or change.message_id not in rows:
                continue
            said = rows[change.message_id]
            if change.kind == "deleted" and ours[change.message_id] == DELETED:
                continue
            if change.kind != "deleted" and ours[change.message_id] == said:
                continue
            self.hand_change_to_apps(change)
            applied += 1
        return applied

    def show_taken_back(self, sender, message: Message, change: Any, gone: list[str], **kwargs) -> None:
        """A post taken back in the apps: memory-lane's row says the same, with its MessageChange
        when it came from here; the host's copies of the apps' wakes lose the words."""
        host_message = host_model("message")
        row = host_message.objects.filter(pk=message.pk).first()
        with writing():
            if row is not None and text_of(row.content) != message.text:
                content = (
                    message.text if isinstance(row.content, str) else [{"type": "text", "text": message.text}]
                )
                host_message.objects.filter(pk=row.pk).update(content=content)
                model = change_model()
                if model is not None and row.mood_id is not None:
                    model.objects.update_or_create(
                        message_id=row.pk,
                        defaults={
                            "mood_id": row.mood_id,
                            "kind": change.kind,
                            "by": change.by[:50],
                            "reached": [],
                        },
                    )
            self.scrub_host_copies(message, gone, DELETED if change.kind == "deleted" else "[edited]")

    def scrub_host_copies(self, message: Message, gone: list[str], mark: str) -> int:
        """memory-lane's rows since the post that hold its lines and are the apps' copies: a wake
        prompt's echo (`system`'s, which the apps' index never keeps), or an apps' line the runner
        scrubbed (its own copy here no longer says it: an agent's note loses the same lines and codes)."""
        if not gone:
            return 0
        host_message = host_model("message")
        codes = codes_in(gone)  # what the runner takes out of an agent's notes besides the lines
        probe = Q(pk__in=[])
        for line in [*gone[:MOST_PROBED], *codes[:MOST_PROBED]]:
            probe |= Q(as_text__contains=json.dumps(line, ensure_ascii=False)[1:-1])
        rows = (
            host_message.objects.filter(created_at__gte=message.created_at - timedelta(seconds=1))
            .exclude(pk=message.pk)
            .annotate(as_text=Cast("content", TextField()))
            .filter(probe)
        )
        candidates = list(rows.only("pk", "content", "sender_id"))
        ours = dict(Message.objects.filter(pk__in=[r.pk for r in candidates]).values_list("pk", "text"))
        scrubbed = 0
        for row in candidates:
            lines = gone
            if row.pk in ours:
                if any(line in ours[row.pk] for line in gone):
                    continue  # the apps kept it (an agent's own words): so does memory-lane
                # and the codes the runner took out of it (a note's "door code 4471"), only those
                lines = gone + [code for code in codes if code not in ours[row.pk]]
            elif str(row.sender_id) != SYSTEM_SENDER:
                continue  # memory-lane's own row (its watcher's, its people's): memory-lane's to judge
            content = scrub_all(row.content, quote_header(message.pk), lines, mark)
            if content != row.content:
                with writing():
                    host_message.objects.filter(pk=row.pk).update(content=content)
                scrubbed += 1
        return scrubbed
