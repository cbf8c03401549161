"""What a post typed on memory-lane's own page vouches for: the trust inputs the wakes app reads.

memory-lane's composer (`api_say`, its `views_auth`) files a post `mood-web` and its `web_client`
marks the device that typed it in `client_version`: `magenta-web[/mobile][/wiki]`, `/wiki` for a
PickiPedia device, every other device an SSH key's. The apps' row of the post gets `sign_in`
`wiki` or `ssh`, so trust (`wakes/decision/trust.py`) decides as for a post typed here.
"""

from __future__ import annotations

from django.db import models

from .host import host_model

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
