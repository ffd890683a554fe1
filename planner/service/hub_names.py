"""Short names people type for current model families, and the Hub ids they stand for.

Why: ``--model qwen3-8b`` or ``--model deepseek-v3.2`` is what people write; the shipped catalog
holds seven models, so any other name used to stop at "unknown model". A name here resolves to
its Hub id, whose config.json is then read through the Hugging Face cache (or the Hub when the
network is allowed) by :mod:`planner.service.hub`, with its ``hf download`` hint when the cache
lacks it. A name of the database (the catalog, or a model someone imported) always wins.

Keys are matched case-insensitively: the repo's own name (``Qwen3-8B``, ``gpt-oss-20b``) and
the shorter forms listed in :data:`ALIASES`.
"""

from __future__ import annotations

HUB_IDS: tuple[str, ...] = (
    # Llama 3.1 / 3.3 / 4
    "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct",
    "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    # Qwen3 / Qwen3-Next / Qwen3.5
    "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-235B-A22B-Instruct-2507",
    "Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3-Next-80B-A3B-Thinking",
    "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-397B-A17B",
    # DeepSeek
    "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-V3.1",
    "deepseek-ai/DeepSeek-V3.1-Terminus",
    "deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2-Exp",
    "deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-V4-Pro",
    # gpt-oss
    "openai/gpt-oss-20b", "openai/gpt-oss-120b",
    # Gemma 3 / 4
    "google/gemma-3-1b-it", "google/gemma-3-4b-it", "google/gemma-3-12b-it",
    "google/gemma-3-27b-it", "google/gemma-4-26B-A4B", "google/gemma-4-31B-it",
    # GLM
    "zai-org/GLM-4.5", "zai-org/GLM-4.5-Air", "zai-org/GLM-4.6", "zai-org/GLM-5",
    "zai-org/GLM-5.2",
    # Kimi
    "moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct-0905",
    "moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2.5",
    # MiniMax
    "MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.7",
    # Mistral
    "mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-Small-24B-Instruct-2501",
    "mistralai/Mistral-Large-Instruct-2411", "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/Mixtral-8x22B-Instruct-v0.1",
    # NVIDIA Nemotron 3, Xiaomi MiMo
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
    "XiaomiMiMo/MiMo-V2-Flash",
)
"""Hub ids of current models, each reachable by its repo name."""

ALIASES: dict[str, str] = {
    "llama-3.1-8b-it": "meta-llama/Llama-3.1-8B-Instruct",
    "llama-3.1-70b-it": "meta-llama/Llama-3.1-70B-Instruct",
    "llama-3.3-70b": "meta-llama/Llama-3.3-70B-Instruct",
    "llama-4-scout": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "llama-4-maverick": "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "qwen3-next-80b-a3b": "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "qwen3.5-397b": "Qwen/Qwen3.5-397B-A17B",
    "gemma-3-27b": "google/gemma-3-27b-it", "gemma-4-31b": "google/gemma-4-31B-it",
    "gemma-4-26b": "google/gemma-4-26B-A4B",
    "kimi-k2": "moonshotai/Kimi-K2-Instruct",
    "mistral-7b-instruct": "mistralai/Mistral-7B-Instruct-v0.3",
    "mistral-small-24b": "mistralai/Mistral-Small-24B-Instruct-2501",
    "mistral-large": "mistralai/Mistral-Large-Instruct-2411",
    "mixtral-8x22b": "mistralai/Mixtral-8x22B-Instruct-v0.1",
    "nemotron-3-nano": "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nemotron-3-super": "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
}
"""Shorter names for the ids above."""

_BY_NAME: dict[str, str] = {**{i.split("/", 1)[1].lower(): i for i in HUB_IDS},
                            **{k.lower(): v for k, v in ALIASES.items()}}


def hub_id_for(name: str) -> str | None:
    """The Hub id a typed model name stands for (case-insensitive), or None."""
    return _BY_NAME.get(name.strip().lower())


def known_names() -> list[str]:
    """Every name :func:`hub_id_for` knows, sorted."""
    return sorted(_BY_NAME)
