"""The screen: a small model's PASS / DISMISS before a new-posts consideration.

One request to the Anthropic Messages API (`POST {base}/v1/messages`, `x-api-key`,
`anthropic-version: 2023-06-01`), no tools, no session, its own short system prompt (a dial).
It may only dismiss what is plainly not for the agent: PASS, an answer that is neither, a
timeout and any API error all go to the agent, so a broken screen costs money, never a reply.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx

from motion_runner.lib.http import post_json_to_configured_api
from motion_runner.models import Agent, Message, Motion

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .models import Dials
from .wake import quote_posts

log = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2023-06-01"
VERDICT = re.compile(r"^\W*(PASS|DISMISS)\b\W*(.*)", re.IGNORECASE | re.DOTALL)
MILLION = Decimal(1_000_000)


class ScreenError(Exception):
    """The screen could not answer. `permanent`: retrying the same request cannot help."""

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


@dataclass
class ScreenResult:
    verdict: str  # "PASS" or "DISMISS"
    reason: str
    cost: Decimal = Decimal("0")
    input_tokens: int = 0
    output_tokens: int = 0
    failed: bool = False  # passed because the screen failed (or said something else)
    answered: bool = False  # an HTTP answer with usage came back (so it was paid for)
    off: bool = False  # no screen key: the documented default, where every post passes unsaid

    @property
    def dismissed(self) -> bool:
        return self.verdict == "DISMISS"


def post_json(url: str, *, headers: dict[str, str], body: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The screen's call, through the project's one HTTP module (tests point it at a local fake
    Messages API)."""
    try:
        response = post_json_to_configured_api(url, headers=headers, body=body, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise ScreenError(f"timed out after {timeout:g} s") from exc
    except httpx.HTTPError as exc:
        raise ScreenError(f"{type(exc).__name__}: {exc}") from exc
    if response.status_code >= 400:
        try:
            detail = response.json().get("error", {}).get("message", "")
        except ValueError:
            detail = response.text[:200]
        raise ScreenError(
            f"HTTP {response.status_code}: {detail}".strip(": "),
            permanent=response.status_code in (400, 401, 403, 404),
        )
    try:
        data = response.json()
    except ValueError as exc:
        raise ScreenError(f"not JSON: {response.text[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ScreenError("the answer is not a JSON object")
    return data


def price(usage: dict[str, Any], dials: Dials) -> Decimal:
    def tokens(key: str) -> Decimal:
        value = usage.get(key)
        return Decimal(int(value)) if isinstance(value, (int, float)) else Decimal(0)

    return (
        tokens("input_tokens") * dials.screen_price_in
        + tokens("output_tokens") * dials.screen_price_out
        + tokens("cache_creation_input_tokens") * dials.screen_price_cache_write
        + tokens("cache_read_input_tokens") * dials.screen_price_cache_read
    ) / MILLION


def parse_verdict(text: str) -> tuple[str, str] | None:
    match = VERDICT.match(text.strip())
    if not match:
        return None
    return match.group(1).upper(), match.group(2).strip()[:300]


def screen_posts(motion: Motion, agent: Agent, posts: list[Message], dials: Dials) -> ScreenResult:
    key = settings.WAKES_SCREEN_API_KEY
    if not key:
        return ScreenResult("PASS", "no screen key: every post passes", off=True)
    body = {
        "model": dials.screen_model,
        "max_tokens": dials.screen_max_tokens,
        "system": dials.screen_system_prompt.replace("{agent}", agent.name),
        "messages": [
            {
                "role": "user",
                "content": f"Motion: {motion}\nNew posts:\n{quote_posts(posts, dials.prompt_max_posts)}",
            }
        ],
    }
    headers = {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
    url = settings.WAKES_SCREEN_API_BASE.rstrip("/") + "/v1/messages"
    try:
        data = post_json(url, headers=headers, body=body, timeout=dials.screen_timeout_seconds)
    except ScreenError as exc:
        log.warning("screen failed for %s in %s: %s", agent, motion.pk, exc)
        return ScreenResult("PASS", f"screen failed ({exc}): passed on", failed=True)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    result = ScreenResult(
        "PASS",
        "",
        cost=price(usage, dials),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        answered=True,
    )
    text = " ".join(
        str(block.get("text", ""))
        for block in data.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    )
    verdict = parse_verdict(text)
    if verdict is None:
        result.failed = True
        result.reason = f"screen answered neither PASS nor DISMISS ({text[:80]!r}): passed on"
    else:
        result.verdict, result.reason = verdict[0], verdict[1] or verdict[0].lower()
    return result
