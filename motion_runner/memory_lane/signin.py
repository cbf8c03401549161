"""What a post typed on memory-lane's own page vouches for: the trust inputs the wakes app reads;
and a sign-in on that page, heard as one here.

memory-lane's composer (`api_say`, its `views_auth`) files a post `mood-web` and its `web_client`
marks the device that typed it in `client_version`: `magenta-web[/mobile][/wiki]`, `/wiki` for a
PickiPedia device, every other device an SSH key's. The apps' row of the post gets `sign_in`
`wiki` or `ssh`, so trust (`wakes/decision/trust.py`) decides as for a post typed here.

A sign-in there is no Django `login()`: memory-lane's `mood_auth` (`redeem_login_code` as its login
link is spent, `enrol_device`) creates a `Device` row whose token goes in the browser's cookie. The
binding hears that row's `post_save` (created) and, when its entity is a person memory-lane knows
(`is_biological_human`) with an account here of that name, sends `signals.host_signed_in`: the wakes
app greets it as it greets a sign-in here (once, within `greet_gap_hours`). A device only *used*
again (`device_for` moves `last_used_at` by a queryset update, at most hourly) or renewed
(`renew_device`, an update too) saves no row, so it is no arrival: as a browser already signed in
here is none.
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.db import models
from django.db.models.signals import post_save

from .. import signals
from .host import host_model

log = logging.getLogger(__name__)

# memory-lane's own page (views_auth): its composer's posts (`api_say`), and its web client's mark.
HOST_COMPOSER_SOURCE = "mood-web"
HOST_WEB_CLIENT = "magenta-web"


def composer_sign_in(post: models.Model) -> str:
    """How the person who typed a composer post signed in: memory-lane's `web_client` writes
    `magenta-web[/mobile][/wiki]`, `/wiki` for a PickiPedia device; its other devices are SSH keys'.
    Anything else (no client_version, another writer) vouches for nothing."""
    client, *parts = str(getattr(post, "client_version", "") or "").split("/")
    if client != HOST_WEB_CLIENT:
        return ""
    return "wiki" if "wiki" in parts else "ssh"


def typed_by_a_person(post: models.Model) -> bool:
    """A composer post whose sender memory-lane itself knows as a person: its ThinkingEntity says
    `is_biological_human`. Not our Agent table's names: an AI entity renamed or removed here, or
    spelled in another case, is still no person."""
    if post.source_file != HOST_COMPOSER_SOURCE:
        return False
    entities = host_model("thinking_entity").objects
    return entities.filter(pk=post.sender_id, is_biological_human=True).exists()


class HostSignIns:
    """Mixed into MemoryLaneRecord: memory-lane's device sign-ins are arrivals here."""

    def connect_sign_ins(self) -> None:
        try:
            device = host_model("device")
        except (LookupError, KeyError):
            log.warning("the host has no Device model: a sign-in on its page is no arrival here")
            return
        post_save.connect(self.on_device_save, sender=device, dispatch_uid="motion_runner.record.host_device")

    def on_device_save(self, sender, instance: models.Model, created: bool = False, **kwargs) -> None:
        if not created or getattr(instance, "revoked_at", None) is not None:
            return
        name = instance.entity_id
        if not host_model("thinking_entity").objects.filter(pk=name, is_biological_human=True).exists():
            return  # an AI entity's device: no person arrived
        user = get_user_model().objects.filter(username__iexact=name, is_active=True).first()
        if user is None:
            return  # nobody here of that name: nobody to greet
        signals.host_signed_in.send_robust(sender=sender, user=user)
