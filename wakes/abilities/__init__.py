"""Abilities: the one extra thing a wake may carry for its reason, fixed by the runner.

Why here, in wakes/: an ability is part of what a wake grants a turn (like its mode and its
footer), and it is acted on when a turn ends, where wakes/ already listens (turn_finished).
The watchlist only decides that a change wakes someone with one; other wake reasons may grant
others. A new ability is one module with an Ability subclass, added to ABILITIES below.

The package imports the wakes models, settings and request tag, motion_runner's models, lib/ (the
HTTP wrapper, ids, tasks) and the system lines; never watchlist.
"""

from __future__ import annotations

from typing import Any

from .base import Ability, AbilityError, Done, final_reply
from .wiki_reply import REPLY_ON_WIKI_PAGE, WikiReply

ABILITIES: dict[str, Ability] = {ability.kind: ability for ability in (WikiReply(),)}


def get_ability(kind: Any) -> Ability | None:
    return ABILITIES.get(kind) if isinstance(kind, str) else None


def ability_prompt(spec: dict[str, Any]) -> str:
    ability = get_ability(spec.get("kind"))
    return ability.prompt(spec) if ability else ""


def reply_on_wiki_page(api: str, page: str) -> dict[str, str]:
    """The ability a watched talk page's wake carries: reply on exactly this page."""
    return {"kind": REPLY_ON_WIKI_PAGE, "api": api, "page": page}


__all__ = [
    "ABILITIES",
    "Ability",
    "AbilityError",
    "Done",
    "ability_prompt",
    "final_reply",
    "get_ability",
    "reply_on_wiki_page",
]
