"""What a call costs, from its token counts and a judge's prices (no database: the engine's worker threads use it)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

MILLION = Decimal(1_000_000)
CENT_PLACES = Decimal("1e-8")


def token_cost(*, judge, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> Decimal | None:
    """USD for one call: cached prompt tokens at the cached price (the input price when unset);
    None, unknown, when the judge has no input or no output price.

    `judge` is anything with the three prices (a Judge, or the engine's copy of them).
    """
    if judge.input_price is None or judge.output_price is None:
        return None
    cached_price = judge.input_price if judge.cached_input_price is None else judge.cached_input_price
    total = (
        Decimal(prompt_tokens - cached_tokens) * Decimal(judge.input_price)
        + Decimal(cached_tokens) * Decimal(cached_price)
        + Decimal(completion_tokens) * Decimal(judge.output_price)
    ) / MILLION
    # The stored precision: a run's cost is the exact sum of its calls' stored costs.
    return total.quantize(CENT_PLACES, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class BatchPrices:
    """A judge's prices through the Batch API, in the shape `pricing.token_cost` reads."""

    input_price: Decimal | None
    cached_input_price: Decimal | None
    output_price: Decimal | None


def _half(price) -> Decimal | None:
    return None if price is None else Decimal(price) * Decimal("0.5")


def batch_prices(judge) -> BatchPrices:
    """The judge's batch prices; an empty one is half the synchronous price (the discount of
    OpenAI's and Azure's Batch APIs), and unknown when that is. Cached prompt tokens: half the
    cached price, never more than the batch input price; none set: the batch input price."""
    input_price = _half(judge.input_price) if judge.batch_input_price is None else Decimal(judge.batch_input_price)
    output_price = _half(judge.output_price) if judge.batch_output_price is None else Decimal(judge.batch_output_price)
    cached = _half(judge.cached_input_price)
    if cached is not None and input_price is not None:
        cached = min(cached, input_price)
    return BatchPrices(input_price=input_price, cached_input_price=cached, output_price=output_price)
