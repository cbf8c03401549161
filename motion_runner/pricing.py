"""Dollar cost of a model call from its token usage, for harnesses that report no dollars (Codex).

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

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def price_for(model: str) -> Price | None:
    """The price of a model by its name; a provider prefix and a dated snapshot suffix are ignored."""
    name = (model or "").strip().lower()
    name = name.rsplit("/", 1)[-1]
    name = _DATED.sub("", name)
    return OPENAI_PRICES.get(name)


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
