"""Serving cost: USD per hour and month, and per million input and output tokens.

GPU time is split between the two token kinds by where it is spent: the prefill share of a batch
cycle (``batch_prefill_s / cycle_s``) is billed to input tokens, the decode share to output
tokens, the way API prices separate them. Prices are the catalog's editable hourly figures.
"""

from __future__ import annotations

from planner.core.units import SECONDS_PER_HOUR
from planner.formulas.ops import Value, safe_div

PER_MILLION = 1e6


def cost_usd_per_hour(gpus: Value, price_usd_per_gpu_hour: Value) -> Value:
    """``gpus * price_usd_per_gpu_hour``."""
    return gpus * price_usd_per_gpu_hour


def cost_usd_per_month(cost_usd_per_hour: Value, hours_per_month: Value) -> Value:
    """``cost_usd_per_hour * hours_per_month`` (730 h by default)."""
    return cost_usd_per_hour * hours_per_month


def prefill_time_share(batch_prefill_s: Value, cycle_s: Value) -> Value:
    """Share of GPU time spent in prefill: ``batch_prefill_s / cycle_s``."""
    return safe_div(batch_prefill_s, cycle_s, 0.0)


def cost_usd_per_million_input_tokens(cost_usd_per_hour: Value, prefill_time_share: Value,
                                      input_tokens_per_s: Value) -> Value:
    """``cost/h * prefill share / (input tokens/s * 3600) * 1e6``."""
    return safe_div(cost_usd_per_hour * prefill_time_share * PER_MILLION,
                    input_tokens_per_s * SECONDS_PER_HOUR, 0.0)


def cost_usd_per_million_output_tokens(cost_usd_per_hour: Value, prefill_time_share: Value,
                                       throughput_tokens_per_s: Value) -> Value:
    """``cost/h * (1 - prefill share) / (output tokens/s * 3600) * 1e6``."""
    return safe_div(cost_usd_per_hour * (1 - prefill_time_share) * PER_MILLION,
                    throughput_tokens_per_s * SECONDS_PER_HOUR, 0.0)


def tokens_per_day(throughput_tokens_per_s: Value) -> Value:
    """Output tokens per day at the modeled throughput: ``throughput * 86400``."""
    return throughput_tokens_per_s * 24 * SECONDS_PER_HOUR
