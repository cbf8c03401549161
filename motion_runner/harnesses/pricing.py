"""Dollar cost of a model call from its token usage: for harnesses that report no dollars
(Codex), and for the turns whose harness figures cannot be trusted (a Claude Code turn with no
result line; the spend guard's running estimate while a turn streams).

OpenAI (OPENAI_PRICES):

Prices are USD per million tokens at the standard (non-batch, non-priority) tier: input
(uncached), cached input, output. Output includes reasoning tokens, which OpenAI bills as
output. Cache writes are not billed separately by OpenAI.

Source: OpenAI's API pricing page (developers.openai.com/api/docs/pricing) as quoted on
2026-06 (morphllm.com/openai-api-pricing: GPT-5.5 $5 / $0.50 / $30, GPT-5.4 $2.50 / $0.25 /
$15, -mini $0.75 / $0.075 / $4.50, -nano $0.20 / $0.02 / $1.25), cross-checked with OpenAI's
Codex rate card (help center, checked 2026-05-13: 25 credits = $1, GPT-5.5 125 / 12.5 / 750
credits) and a 2026-05-05 snapshot of the Codex models (gpt-5.x-codex). Copied here
2026-11-30. Prices change: check before trusting, and add a model here when an agent uses it —
an unknown model costs None, and the turn's end says so rather than guessing.

Anthropic (ANTHROPIC_PRICES), USD per million tokens: input, output, cache write (5 minutes),
cache write (1 hour), cache read. Haiku 4.5 ($1 / $5 / $1.25 / – / $0.10) and Opus 4.5 and
later ($5 / $25 / $6.25 / – / $0.50) as DESIGN.md's checked table gives them; every row,
the 1-hour cache writes and the models DESIGN.md does not list from the model catalog baked
into Claude Code 2.1.332 (its `pricing_tiers`, the prices its own `total_cost_usd` uses:
checked against the recordings in tests/recordings/claude-code/, where claude-opus-5-5 is
priced at $4 / $20 / $5 / $8 / $0.20). Copied 2026-11-30.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Price:
    input: Decimal
    cached_input: Decimal
    output: Decimal


def _p(input_: str, cached: str, output: str) -> Price:
    return Price(Decimal(input_), Decimal(cached), Decimal(output))


PRICES_CHECKED = "2026-11-30"

OPENAI_PRICES: dict[str, Price] = {
    "gpt-5.5": _p("5.00", "0.50", "30.00"),
    "gpt-5.5-pro": _p("30.00", "30.00", "180.00"),  # no cached rate listed: billed as input
    "gpt-5.4": _p("2.50", "0.25", "15.00"),
    "gpt-5.4-mini": _p("0.75", "0.075", "4.50"),
    "gpt-5.4-nano": _p("0.20", "0.02", "1.25"),
    "gpt-5.4-pro": _p("30.00", "30.00", "180.00"),
    "gpt-5.3-codex": _p("1.75", "0.175", "14.00"),
    "gpt-5.2-codex": _p("1.75", "0.175", "14.00"),
    "gpt-5.2": _p("1.75", "0.175", "14.00"),
    "gpt-5.1-codex-max": _p("1.25", "0.125", "10.00"),
    "gpt-5.1-codex": _p("1.25", "0.125", "10.00"),
    "gpt-5.1": _p("1.25", "0.125", "10.00"),
    "gpt-5-codex": _p("1.25", "0.125", "10.00"),
    "gpt-5": _p("1.25", "0.125", "10.00"),
}


@dataclass(frozen=True)
class AnthropicPrice:
    input: Decimal
    output: Decimal
    cache_write: Decimal  # 5-minute cache writes (the default)
    cache_write_1h: Decimal
    cache_read: Decimal


def _a(input_: str, output: str, write: str, write_1h: str, read: str) -> AnthropicPrice:
    return AnthropicPrice(Decimal(input_), Decimal(output), Decimal(write), Decimal(write_1h), Decimal(read))


_HAIKU_35 = _a("0.80", "4", "1", "1.60", "0.08")
_HAIKU_45 = _a("1", "5", "1.25", "2", "0.10")
_HAIKU_55 = _a("0.10", "0.50", "0.125", "0.20", "0.01")  # prompts under 100k tokens
_T2_10 = _a("2", "10", "2.50", "4", "0.20")
_T2_10_R010 = _a("2", "10", "2.50", "4", "0.10")
_T3_15 = _a("3", "15", "3.75", "6", "0.30")
_T4_20_R020 = _a("4", "20", "5", "8", "0.20")
_T5_25 = _a("5", "25", "6.25", "10", "0.50")
_T10_50 = _a("10", "50", "12.50", "20", "1")
_T15_75 = _a("15", "75", "18.75", "30", "1.50")

ANTHROPIC_PRICES: dict[str, AnthropicPrice] = {
    "claude-3-5-haiku": _HAIKU_35,
    "claude-haiku-4-5": _HAIKU_45,
    "claude-haiku-5-5": _HAIKU_55,
    "claude-3-5-sonnet": _T3_15,
    "claude-3-7-sonnet": _T3_15,
    "claude-sonnet-4-0": _T3_15,
    "claude-sonnet-4": _T3_15,
    "claude-sonnet-4-5": _T3_15,
    "claude-sonnet-4-6": _T3_15,
    "claude-sonnet-5": _T2_10,
    "claude-sonnet-5-5": _T2_10_R010,
    "claude-opus-4-0": _T15_75,
    "claude-opus-4": _T15_75,
    "claude-opus-4-1": _T15_75,
    "claude-opus-4-5": _T5_25,
    "claude-opus-4-6": _T5_25,
    "claude-opus-4-7": _T5_25,
    "claude-opus-4-8": _T5_25,
    "claude-opus-5": _T5_25,
    "claude-opus-5-5": _T4_20_R020,
    "claude-fable-5": _T10_50,
}

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def price_for(model: str) -> Price | None:
    """The price of a model by its name; a provider prefix and a dated snapshot suffix are ignored."""
    name = (model or "").strip().lower()
    name = name.rsplit("/", 1)[-1]
    name = _DATED.sub("", name)
    return OPENAI_PRICES.get(name)


def _model_key(model: str) -> str:
    name = (model or "").strip().lower()
    name = name.rsplit("/", 1)[-1]
    return _DATED.sub("", _COMPACT_DATE.sub("", name))


_COMPACT_DATE = re.compile(r"-\d{8}$")  # claude-haiku-4-5-20251001


def anthropic_price_for(model: str) -> AnthropicPrice | None:
    """The price of a Claude model by its name; a provider prefix, a dated snapshot suffix and
    a `[1m]` context suffix are ignored."""
    return ANTHROPIC_PRICES.get(_model_key(model).removesuffix("[1m]"))


def _tokens(usage: dict, key: str) -> int:
    value = usage.get(key)
    return max(0, int(value)) if isinstance(value, (int, float)) else 0


# An API message cut off before its final usage (Claude Code's message_delta) is charged output
# estimated from the bytes its deltas streamed (text, thinking, tool input JSON) at this many
# UTF-8 bytes a token (docs/money.md, "A message cut off", says why 3).
ESTIMATE_BYTES_PER_TOKEN = 3


def estimated_output_tokens(streamed_bytes: int) -> int:
    """Output tokens for an API message that streamed `streamed_bytes` bytes of deltas."""
    return -(-max(0, streamed_bytes) // ESTIMATE_BYTES_PER_TOKEN)


def anthropic_cost(model: str, usage: dict) -> Decimal | None:
    """Dollars for one Messages API usage object (input_tokens excludes cache reads and writes,
    as the API reports it); None when the model has no price here. 1-hour cache writes are
    priced as such when the usage breaks them out (`cache_creation.ephemeral_1h_input_tokens`)."""
    price = anthropic_price_for(model)
    if price is None:
        return None
    writes = _tokens(usage, "cache_creation_input_tokens")
    breakdown = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else {}
    writes_1h = min(writes, _tokens(breakdown, "ephemeral_1h_input_tokens"))
    total = (
        Decimal(_tokens(usage, "input_tokens")) * price.input
        + Decimal(_tokens(usage, "output_tokens")) * price.output
        + Decimal(writes - writes_1h) * price.cache_write
        + Decimal(writes_1h) * price.cache_write_1h
        + Decimal(_tokens(usage, "cache_read_input_tokens")) * price.cache_read
    )
    return (total / MILLION).quantize(Decimal("0.000001"))


def openai_cost(
    model: str, *, input_tokens: int, cached_input_tokens: int, output_tokens: int
) -> Decimal | None:
    """Dollars for `input_tokens` uncached input, `cached_input_tokens` cached input and
    `output_tokens` output (reasoning included); None when the model has no price here."""
    price = price_for(model)
    if price is None:
        return None
    total = (
        Decimal(max(0, input_tokens)) * price.input
        + Decimal(max(0, cached_input_tokens)) * price.cached_input
        + Decimal(max(0, output_tokens)) * price.output
    )
    return (total / MILLION).quantize(Decimal("0.000001"))
