"""Developer script: what transformers builds for the 2025–2026 architectures (issue 26).

Not a runtime dependency: needs ``torch`` and ``transformers==5.23.0``. For every config.json in
``--configs`` (default ``../shared/configs-2026``, the published files, read from there and never
copied into the repository) and in ``tests/fixtures/hf_configs_2026`` (small configs of the same
keys, written for the tests), it

* builds the model on PyTorch's meta device (shapes only) and sums ``p.numel()``: ``total`` and
  ``active`` of the text model (active: minus the ``(E-k)/E`` share of every routed-expert
  tensor), ``embedding``, ``lm_head`` and ``vision`` (the vision tower and projector of a
  multimodal checkpoint);
* runs the text model on the meta device over one sequence of ``T`` tokens, for two lengths past
  every window and a multiple of every compression block, with the routed experts cut to 4 (the
  cache does not depend on them), and measures the cache transformers returns, each tensor once
  (DeepSeek-V4 caches one tensor as both keys and values): ``kv`` (keys, values, indexer keys,
  compressed entries), ``recurrent`` and ``conv`` state (Gated DeltaNet, Mamba-2), the
  compressor's carried ``overlap`` state and its ``buffer`` of a block still filling, in elements
  and in bytes at the dtypes transformers keeps them.

It writes ``tests/fixtures/hf_counts_2026.json``; ``tests/spec/test_models_2026.py`` compares the
planner with it exactly.

    python scripts/hf_counts_2026.py [--configs ../shared/configs-2026] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "hf_counts_2026.json"
SMALL = ROOT / "tests" / "fixtures" / "hf_configs_2026"
_SKIP = ("model_type", "auto_map", "quantization_config", "architectures")
_CONSTANTS = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}


def load(path: Path) -> dict:
    """A config.json as transformers reads it (``json.loads`` with its Infinity/NaN)."""
    return json.loads(path.read_text(), parse_constant=lambda c: _CONSTANTS[c])


def text_of(raw: dict) -> dict:
    """The text model's config (``text_config`` of a multimodal wrapper, else the file)."""
    return raw.get("text_config") or raw


def experts_and_top_k(cfg: dict) -> tuple[int, int]:
    """Routed experts per MoE layer and experts used per token."""
    for key in ("n_routed_experts", "num_local_experts", "num_experts"):
        if cfg.get(key):
            top = cfg.get("num_experts_per_tok") or cfg.get("top_k_experts")
            return int(cfg[key]), int(top)
    return 0, 0


def count(raw: dict) -> dict:
    """Parameters of the model transformers builds from ``raw``, by the components above."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    config = AutoConfig.for_model(raw["model_type"], **{k: v for k, v in raw.items()
                                                        if k not in _SKIP})
    auto = AutoModelForImageTextToText if "vision_config" in raw else AutoModelForCausalLM
    with torch.device("meta"):
        model = auto.from_config(config)
    n_experts, top_k = experts_and_top_k(text_of(raw))
    out = dict.fromkeys(("embedding", "lm_head", "vision", "inactive"), 0)
    total = 0
    for name, p in model.named_parameters():
        n = p.numel()
        if any(part in name for part in ("visual.", "vision_tower.", "embed_vision.",
                                         "mm_projector.", "multi_modal_projector.")):
            out["vision"] += n
            continue
        total += n
        if name.startswith("lm_head."):
            out["lm_head"] += n
        elif "embed_tokens." in name or name.endswith("embeddings.weight"):
            out["embedding"] += n
        if ".experts." in name and "shared" not in name:
            assert (n * (n_experts - top_k)) % n_experts == 0, name
            out["inactive"] += n * (n_experts - top_k) // n_experts
    inactive = out.pop("inactive")
    return {**out, "total": total, "active": total - inactive}


def cache_lengths(cfg: dict) -> list[int]:
    """Two sequence lengths past every window and chunk, multiples of 128 (every block)."""
    window = max(int(cfg.get(k) or 0) for k in ("sliding_window", "attention_chunk_size"))
    first = (window // 128 + 2) * 128
    return [first, first + 512]


def cache_model(raw: dict) -> object:
    """The text model on the meta device with its routed experts cut to 4 (2 per token)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = dict(text_of(raw))
    for key in ("n_routed_experts", "num_experts", "num_local_experts"):
        if cfg.get(key):
            cfg[key] = 4
    for key in ("num_experts_per_tok", "top_k_experts"):
        if cfg.get(key):
            cfg[key] = 2
    for key in ("n_group", "topk_group"):
        if key in cfg:
            cfg[key] = 1
    config = AutoConfig.for_model(cfg["model_type"], **{k: v for k, v in cfg.items()
                                                        if k not in _SKIP})
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config).eval()


def measure_cache(model: object, tokens: int) -> dict:
    """The cache of one sequence of ``tokens`` tokens, in elements and bytes by kind."""
    import torch

    ids = torch.zeros((1, tokens), dtype=torch.long, device="meta")
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).past_key_values
    out = {f"{kind}_{unit}": 0 for kind in ("kv", "recurrent", "conv", "overlap", "buffer")
           for unit in ("elems", "bytes")}
    seen: set[int] = set()
    for layer in cache.layers:
        for attr, value in vars(layer).items():
            for tensor in (value.values() if isinstance(value, dict) else [value]):
                if not isinstance(tensor, torch.Tensor) or tensor.dtype == torch.int64 \
                        or id(tensor) in seen:
                    continue
                seen.add(id(tensor))
                kind = {"recurrent_states": "recurrent", "conv_states": "conv",
                        "overlap_kv": "overlap", "overlap_gate": "overlap",
                        "buffer_kv": "buffer", "buffer_gate": "buffer"}.get(attr, "kv")
                out[f"{kind}_elems"] += tensor.numel()
                out[f"{kind}_bytes"] += tensor.numel() * tensor.element_size()
    return out


def entry(path: Path, label: str) -> dict:
    raw = load(path)
    result = {"model_type": raw["model_type"], "config": label, **count(raw)}
    lengths = cache_lengths(text_of(raw))
    model = cache_model(raw)
    runs = [measure_cache(model, t) for t in lengths]
    result["cache"] = {"tokens": lengths,
                       **{k: [r[k] for r in runs] for k in runs[0]}}
    return result


def main(argv: list[str]) -> int:
    import torch
    import transformers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=Path, default=ROOT.parent / "shared" / "configs-2026",
                        help="folder of the published config.json files")
    parser.add_argument("names", nargs="*", help="only these configs (file stems), keeping "
                        "the other entries of the fixture")
    args = parser.parse_args(argv)
    models = json.loads(OUT.read_text())["models"] if args.names and OUT.exists() else {}
    for folder, published in ((args.configs, True), (SMALL, False)):
        for path in sorted(folder.glob("*.json")):
            if args.names and path.stem not in args.names:
                continue
            label = (f"configs-2026/{path.name}" if published
                     else str(path.relative_to(ROOT)))
            print(f"measuring {label} ...", file=sys.stderr)
            models[path.stem] = {**entry(path, label), "published": published}
    OUT.write_text(json.dumps({
        "generated_by": "scripts/hf_counts_2026.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "models": models,
    }, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(models)} models to {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
