"""Developer script: count parameters of the real Hugging Face implementations, write test fixtures.

Not a runtime dependency. Needs ``torch`` and ``transformers`` (e.g. ``pip install torch==2.13.0
transformers==5.23.0`` in a separate virtual environment). For every config.json under
``seeds/models`` and ``tests/fixtures/hf_configs`` it instantiates the architecture on PyTorch's
meta device (shapes only, no memory), sums ``p.numel()`` per component and writes
``tests/fixtures/hf_param_counts.json``; ``tests/spec/test_params_fixtures.py`` compares the
planner's estimator to it exactly.

Components, by parameter name: embedding, position, attention, mlp (dense, routed and shared
experts), router (routers and shared-expert gates), norm, lm_head; for a multimodal checkpoint
(a config with ``vision_config``, built with ``AutoModelForImageTextToText``) the vision tower
and projector go to ``vision`` and ``total``/``active`` are the text model's. Active parameters:
the total minus the (E-k)/E share of every routed-expert tensor.

KV cache and fixed state, for the small test configs (under ``CACHE_MAX_PARAMS`` parameters, and
not MLA, whose transformers cache holds decompressed K/V rather than the latent engines cache): the
model runs once on CPU over ``CACHE_TOKENS`` random tokens and the cache it returns is measured:
``kv_elems`` (keys + values of every softmax-attention layer), ``recurrent_state_elems`` and
``conv_state_elems`` (linear-attention layers). ``tests/spec/test_params_fixtures.py`` checks the
planner's per-token KV elements, windows and per-sequence state against them.

    python scripts/hf_param_counts.py            # rewrite the fixture file
    python scripts/hf_param_counts.py NAME ...   # recount only these configs (file stems)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "hf_param_counts.json"
CONFIG_DIRS = (ROOT / "seeds" / "models", ROOT / "tests" / "fixtures" / "hf_configs")

_EMBEDDING = re.compile(r"(embed_tokens|\bwte\b|word_embeddings|embed_in)\.")
_ROUTER = re.compile(r"\.(gate|router|shared_expert_gate)\.")
_NORM = re.compile(r"(norm|\bln_\w+|\bln_f)\.")


_VISION = re.compile(r"^(model\.)?(vision_tower|vision_model|visual|multi_modal_projector)\.")
_TEXT_PREFIXES = (("model.language_model.", "model."), ("language_model.model.", "model."),
                  ("language_model.lm_head.", "lm_head."))


def component(name: str) -> str:
    """The planner's component for one Hugging Face parameter name (``vision`` for a
    multimodal checkpoint's vision tower and projector)."""
    if _VISION.search(name):
        return "vision"
    for prefix, plain in _TEXT_PREFIXES:
        if name.startswith(prefix):
            name = plain + name[len(prefix):]
    if name.startswith("lm_head.") or name.startswith("embed_out."):
        return "lm_head"
    if _EMBEDDING.search(name):
        return "embedding"
    if ".wpe." in name:
        return "position"
    if _NORM.search(name):
        return "norm"
    if _ROUTER.search(name):
        return "router"
    if re.search(r"(self_attn|\.attn\.|self_attention|\.attention\.|linear_attn)", name):
        return "attention"
    if re.search(r"(\.mlp\.|block_sparse_moe|feed_forward)", name):
        return "mlp"
    raise SystemExit(f"unclassified parameter {name}")


def experts_and_top_k(cfg: dict) -> tuple[int, int]:
    """Routed experts per MoE layer and experts used per token, from the (text) config."""
    cfg = cfg.get("text_config") or cfg
    for key in ("n_routed_experts", "num_local_experts", "num_experts"):
        if cfg.get(key):
            return int(cfg[key]), int(cfg["num_experts_per_tok"])
    return 0, 0


CACHE_TOKENS = 70
CACHE_MAX_PARAMS = 2_000_000


def cache_elems(config: object, raw: dict) -> dict:
    """Elements of the cache transformers builds for one sequence of ``CACHE_TOKENS`` tokens."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    ids = torch.randint(0, min(100, int(raw["vocab_size"])), (1, CACHE_TOKENS))
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).past_key_values
    out = {"tokens": CACHE_TOKENS, "kv_elems": 0, "recurrent_state_elems": 0,
           "conv_state_elems": 0}
    for layer in cache.layers:
        for attr, key in (("keys", "kv_elems"), ("values", "kv_elems"),
                          ("recurrent_states", "recurrent_state_elems"),
                          ("conv_states", "conv_state_elems")):
            value = getattr(layer, attr, None)
            tensors = value.values() if isinstance(value, dict) else [value]
            out[key] += sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))
    return out


def count(path: Path) -> dict:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    raw = json.loads(path.read_text())
    kwargs = {k: v for k, v in raw.items()
              if k not in ("model_type", "auto_map", "quantization_config", "architectures")}
    config = AutoConfig.for_model(raw["model_type"], **kwargs)
    multimodal = "vision_config" in raw
    auto = AutoModelForImageTextToText if multimodal else AutoModelForCausalLM
    with torch.device("meta"):
        model = auto.from_config(config)
    n_experts, top_k = experts_and_top_k(raw)
    counts = dict.fromkeys(
        ("embedding", "position", "attention", "mlp", "router", "norm", "lm_head", "vision"), 0)
    inactive = 0
    for name, p in model.named_parameters():  # tied weights are yielded once
        counts[component(name)] += p.numel()
        if ".experts." in name and ".shared_expert" not in name:
            assert (p.numel() * (n_experts - top_k)) % n_experts == 0, name
            inactive += p.numel() * (n_experts - top_k) // n_experts
    vision = counts.pop("vision")
    total = sum(counts.values())
    assert total + vision == sum(p.numel() for p in model.parameters())
    result = {**counts, "vision": vision, "total": total, "active": total - inactive,
              "model_type": raw["model_type"], "config": str(path.relative_to(ROOT))}
    if total < CACHE_MAX_PARAMS and not raw.get("kv_lora_rank") and not multimodal:
        result["cache"] = cache_elems(config, raw)
    return result


def main(names: list[str]) -> int:
    """Count every config, or only the configs named (file stems), keeping the other entries.

    Recounting a subset requires the same transformers and torch versions the file was written
    with, so that every entry still comes from one implementation.
    """
    import torch
    import transformers

    paths = {p.stem: p for folder in CONFIG_DIRS for p in sorted(folder.glob("*.json"))}
    unknown = sorted(set(names) - set(paths))
    if unknown:
        raise SystemExit(f"no config named {', '.join(unknown)} under seeds/models or "
                         "tests/fixtures/hf_configs")
    results = {}
    if names:
        previous = json.loads(OUT.read_text())
        versions = (previous["transformers_version"], previous["torch_version"])
        if versions != (transformers.__version__, torch.__version__):
            raise SystemExit(f"{OUT.relative_to(ROOT)} was written with transformers "
                             f"{versions[0]} and torch {versions[1]}; recount everything "
                             "(no names) to change versions")
        results = {k: v for k, v in previous["models"].items() if k in paths}
    for stem in (names or list(paths)):
        path = paths[stem]
        print(f"counting {path.relative_to(ROOT)} ...", file=sys.stderr)
        results[stem] = count(path)
    OUT.write_text(json.dumps({
        "generated_by": "scripts/hf_param_counts.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "models": results,
    }, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(results)} models to {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
