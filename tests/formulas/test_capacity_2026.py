"""Token capacity and the engine KV pool of the 2026 models (issue 26): KV bytes as a function
of the context.

Full-attention layers (and DeepSeek-V4's compressed entries, sparse-attention indexer keys)
grow per token; sliding-window (and Llama-4's chunked) layers hold at most their window per
sequence; Gated DeltaNet and Mamba-2 layers hold a fixed state per sequence. Every figure
below is derived by hand from the keys of the published config.json files in
``../shared/configs-2026`` (read from there), and from vLLM's rules, cited where used:

* a sliding layer holds ``min(ceil(T/16), ceil(w/16) + 1)`` blocks of 16 tokens
  (``SlidingWindowManager.remove_skipped_blocks``; the +1 of
  ``SlidingWindowSpec.max_memory_usage_bytes``);
* a state layer's state is one page per sequence padded to an attention page, the attention
  block enlarged to ``16 * ceil(state_page / (16 * attn_page_1_token))`` tokens
  (``HybridAttentionMambaModelConfig.verify_and_update_config``,
  ``vllm/model_executor/models/config.py``);
* a layer class's KV heads split over TP as ``max(1, n_kv // tp)`` (``Attention`` in
  ``models/gemma4.py``; the planner's ``ceil(n_kv/tp)/n_kv``).

Context: 1,024 prompt + 128 output tokens, 1,151 cached at the end; KV in bf16 (2 B); 8 x B200
at TP 8. The pool per GPU (``engine_kv_bytes_per_gpu``, vLLM's profile-run accounting) is taken
from the estimate: these tests check what the pool holds, not how large it is.
"""

from __future__ import annotations

from math import ceil
from pathlib import Path
from typing import Any

import pytest

from planner.spec.catalog import load_gpus, spec_from_file
from planner.spec.figures import model_figures
from tests.conftest import estimate, gpu

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT.parent / "shared" / "configs-2026"
CONTEXT = 1024 + 128 - 1
B200 = load_gpus()["b200"]


def _spec(name: str) -> Any:
    return spec_from_file(PUBLISHED / f"{name}.json", name)


def _vllm(name: str, **inputs: Any) -> dict[str, Any]:
    return estimate(_spec(name), B200, engine="vllm", gpus=8, tp=8, prompt_tokens=1024,
                    output_tokens=128, max_num_seqs=100_000, **inputs)


def _window_blocks_tokens(window: int, block: int = 16) -> int:
    """Tokens of the blocks a vLLM sliding layer holds at CONTEXT."""
    return min(ceil(CONTEXT / block), ceil(window / block) + 1) * block


# name -> (growing KV elements/token, window elements/token, window, growing KV heads,
#          window KV heads)
FIGURES = {
    # 60 layers, every 6th global: 10 x 2*4*512 grow, 50 x 2*16*256 local in a 1024 window
    "Gemma-4-31B-IT-NVFP4": (10 * 2 * 4 * 512, 50 * 2 * 16 * 256, 1024, 4, 16),
    # 30 layers: 5 x 2*2*512 global, 25 x 2*8*256 local
    "gemma-4-26B-A4B": (5 * 2 * 2 * 512, 25 * 2 * 8 * 256, 1024, 2, 8),
    # 48 layers, full on layer 0 and every 6th (9): 4 KV heads of 192 + 128; 39 sliding layers
    # with twice the KV heads, window sliding_window_size + 1 = 129
    "MiMo-V2-Flash": (9 * 4 * (192 + 128), 39 * 8 * (192 + 128), 129, 4, 8),
    # 48 layers, every 4th global (12), 36 chunked (chunk 8192): 8 KV heads of 128
    "Llama-4-Maverick-17B-128E-Instruct": (12 * 2 * 8 * 128, 36 * 2 * 8 * 128, 8192, 8, 8),
    # 43 layers: 21 CSA (ratio 4: (512 + 128)/4 a token), 20 HCA (ratio 128: 512/128), all
    # over a 128-token window of 512 (shared K = V), 2 pure sliding layers of K and V (2*512)
    "DeepSeek-V4-Flash": (21 * 160 + 20 * 4, 41 * 512 + 2 * 1024, 128, 1, 1),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_growing_and_windowed_figures(name: str) -> None:
    full, window, w, heads_growing, heads_window = FIGURES[name]
    f = model_figures(_spec(name))
    assert f.model_kv_elems_per_token_full == full
    assert f.model_kv_elems_per_token_window == window
    assert f.model_sliding_window_tokens == w
    assert f.model_kv_heads_growing == heads_growing
    assert f.model_kv_heads_window == heads_window


def test_deepseek_v4_flash_in_transformers_layout_is_6880_bytes_a_token_not_52960() -> None:
    """Under SGLang (transformers' layout at ``kv_dtype``): 3,440 growing elements x 2 B =
    6,880 B per token (one shared KV vector, replicated on every TP rank); its windows (23,040
    elements x 2 B x min(T, 128) tokens) and the CSA layers' carried overlap (21 x 2*4*(512 +
    128) elements x 2 B) are per sequence. Charging the windows per token would give 52,960 B
    a token, 7.7 times fewer tokens. At a 16-bit cache (``kv_dtype`` fp16): SGLang's own
    default for V4 is fp8 (``server_args.py``: ``kv_cache_dtype = "fp8_e4m3"`` when auto),
    which the default ``kv_dtype`` takes: 3,440 x 1 B."""
    r = estimate(_spec("DeepSeek-V4-Flash"), B200, engine="sglang", gpus=8, tp=8,
                 prompt_tokens=1024, output_tokens=128, kv_dtype="fp16")
    assert r["kv_bytes_per_token_per_gpu"] == 3440 * 2 == 6880
    default = estimate(_spec("DeepSeek-V4-Flash"), B200, engine="sglang", gpus=8, tp=8,
                       prompt_tokens=1024, output_tokens=128)
    assert default["kv_bytes_per_token_per_gpu"] == 3440
    assert (3440 + 23_040) * 2 == 52_960
    window = 23_040 * 2 * 128
    state = 21 * 2 * 4 * (512 + 128) * 2
    assert r["engine_state_tokens"] == pytest.approx((window + state) / 6880, rel=1e-12)


def test_deepseek_v4_flash_in_vllm_fp8_layout() -> None:
    """vLLM caches V4 in its own fp8 layout whatever ``kv_dtype`` (``DeepseekV4MLAAttention``
    forces ``fp8_ds_mla``; ``vllm/v1/kv_cache_interface.py``, ``sparse_swa.py``,
    ``deepseek_compressor.py``), every page rounded up to 576 B. By hand from the config
    (head_dim 512, qk_rope_head_dim 64, index_head_dim 128; 2 sliding, 21 CSA, 20 HCA layers):

    * entry 448 + 2*64 + 448/64 + 1 = 584 B; indexer key 128 + 4 = 132 B;
    * per token: CSA ``ceil(64*584/576)*576/256 + ceil(64*132/576)*576/256`` = 37,440/256 +
      8,640/256 = 180 B; HCA ``ceil(2*584/576)*576/256`` = 1,728/256 = 6.75 B;
      21 x 180 + 20 x 6.75 = 3,915 B (not transformers' 6,880 at bf16);
    * per sequence at 1,151 tokens: windows 43 layers x 37,440 B x 3 blocks of 64; CSA states
      21 x (ceil(4*2048*4/576)*576 + ceil(4*512*4/576)*576) = 21 x (32,832 + 8,640) x 3 blocks
      of 4 (window 8); HCA states 20 x ceil(8*1024*4/576)*576 = 20 x 32,832 x 17 blocks of 8
      (window 128); blocks of 256 tokens."""
    r = _vllm("DeepSeek-V4-Flash")
    per_token = 21 * (37_440 + 8_640) / 256 + 20 * 1_728 / 256
    assert per_token == 3915
    assert r["kv_bytes_per_token_per_gpu"] == per_token
    held = 43 * 37_440 * 3 + 21 * (32_832 + 8_640) * 3 + 20 * 32_832 * 17
    assert held == 18_605_376
    assert r["engine_state_tokens"] == pytest.approx(held / 3915, rel=1e-12)
    assert r["engine_token_capacity"] == r["engine_kv_bytes_per_gpu"] // (256 * 3915) * 256
    # the same layout at any kv_dtype
    assert _vllm("DeepSeek-V4-Flash", kv_dtype="fp8")["kv_bytes_per_token_per_gpu"] == 3915


# name -> (full-attention layers, sliding/chunked layers): vLLM's hybrid allocator groups each
# cache type in groups of the smaller count (``_get_kv_cache_groups_uniform_page_size``), so a
# type of n layers takes ceil(n/G)*G layers' memory: only MiMo-V2-Flash's 39 don't divide (45)
WINDOW_LAYERS = {"Gemma-4-31B-IT-NVFP4": (10, 50), "gemma-4-26B-A4B": (5, 25),
                 "MiMo-V2-Flash": (9, 39), "Llama-4-Maverick-17B-128E-Instruct": (12, 36)}


@pytest.mark.parametrize("name", ["Gemma-4-31B-IT-NVFP4", "gemma-4-26B-A4B", "MiMo-V2-Flash",
                                  "Llama-4-Maverick-17B-128E-Instruct"])
def test_windowed_models_under_vllm(name: str) -> None:
    """Per GPU at TP 8: the growing layers' bytes at their own KV-head share, the windowed
    layers' blocks per sequence as pool tokens. Gemma-4-31B: 40,960 x 2 B / 4 (4 global KV
    heads, one per rank) = 20,480 B a token; 409,600 x 2 B / 8 = 102,400 B a windowed token x
    1,040 tokens (65 blocks) = 5,200 pool tokens per sequence. Llama-4's chunk (8192) is
    longer than the context: its chunked layers hold the whole context (72 blocks). At
    ``kv_dtype`` auto Gemma-4-31B-IT-NVFP4 is cached at 1 B an element: its ModelOpt config
    declares an FP8 KV cache (``kv_cache_scheme``), which vLLM's auto takes
    (``resolve_kv_cache_dtype_string``); the others at their model dtype, 2 B."""
    full, window, w, heads_growing, heads_window = FIGURES[name]
    r = _vllm(name)
    elem = 1 if name == "Gemma-4-31B-IT-NVFP4" else 2
    per_token = full * elem * ceil(heads_growing / 8) / heads_growing
    per_window_token = window * elem * ceil(heads_window / 8) / heads_window
    assert r["kv_bytes_per_token_per_gpu"] == per_token
    full_layers, window_layers = WINDOW_LAYERS[name]
    padded = ceil(window_layers / full_layers) * full_layers  # groups of the full-layer count
    assert r["engine_state_tokens"] == pytest.approx(
        per_window_token * _window_blocks_tokens(w) * padded / window_layers / per_token,
        rel=1e-12)
    assert r["engine_token_capacity"] == r["engine_kv_bytes_per_gpu"] // (16 * per_token) * 16
    mean = r["mean_decode_context_tokens"]
    assert r["max_running_batch"] == r["engine_token_capacity"] // (
        mean + r["engine_state_tokens"])


def test_gemma_4_31b_figures_by_hand() -> None:
    """At bf16 20,480 B a token; at auto the checkpoint's fp8 cache, half of it (the windowed
    layers halve alike: the same 5,200 pool tokens a sequence)."""
    r = _vllm("Gemma-4-31B-IT-NVFP4", kv_dtype="bf16")
    assert r["kv_bytes_per_token_per_gpu"] == 20_480
    assert r["engine_state_tokens"] == 102_400 * 1040 / 20_480 == 5200
    auto = _vllm("Gemma-4-31B-IT-NVFP4")
    assert auto["kv_bytes_per_token_per_gpu"] == 10_240
    assert auto["engine_state_tokens"] == 51_200 * 1040 / 10_240 == 5200


# name -> (attention layers, growing bytes/token per GPU, state layers, state page per GPU B,
#          vLLM attention block tokens on a B200, the block's alignment there), at vLLM's
#          default state dtype (mamba_ssm_cache_dtype auto: the model dtype for Gated DeltaNet,
#          the config's float32 for Nemotron-H). The alignment is 16 tokens, 32 for head size
#          256 on compute capability 10.x (the B200's 10.0: ``kernel_block_alignment_size = 32``
#          when ``is_device_capability_family(100)`` and ``get_head_size() == 256``,
#          HybridAttentionMambaModelConfig).
HYBRIDS = {
    # 16 full layers of 4 KV heads x 256 (1 per rank at TP 8): 16 x 2*256*2 = 16,384 B;
    # 48 DeltaNet layers: 48/8 value heads x 128 x 128 at the config's float32
    # (mamba_ssm_dtype, which vLLM's Qwen3_5ForConditionalGenerationConfig copies) + conv
    # (2*16*128 + 48*128)/8 x 3 at 2 B = 393,216 + 7,680 = 400,896 B; head size 256 on a
    # B200: block 32 * ceil(400,896 / (32 * 1,024)) = 416 (400 at 16-token alignment)
    "Qwen3.5-27B": (16, 16_384, 48, 400_896, 416, 32),
    # pattern MEMEM*E...: 6 attention layers of 2 KV heads x 128 (1 per rank): 6 x 512 B;
    # 23 Mamba-2 layers: 64/8 heads x 64 x 128 at float32 + conv (4096 + 2*8*128)/8 x 3 at
    # 2 B = 262,144 + 4,608 = 266,752 B; head size 128: block 16 * ceil(266,752 / (16 * 512))
    # = 528
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (6, 3072, 23, 266_752, 528, 16),
}


@pytest.mark.parametrize("name", sorted(HYBRIDS))
def test_state_pages_are_padded_to_the_attention_page(name: str) -> None:
    layers, per_token, state_layers, page, block, align = HYBRIDS[name]
    f = model_figures(_spec(name))
    assert f.model_kv_layers == layers
    assert f.model_state_layers == state_layers
    r = _vllm(name)
    assert r["kv_bytes_per_token_per_gpu"] == per_token
    assert r["state_bytes_per_sequence_per_gpu"] == state_layers * page
    attn_token = per_token // layers
    assert block == align * ceil(page / (align * attn_token))
    assert block * attn_token >= page  # the padded page holds the state
    # groups of the attention-layer count: Nemotron-3-Nano's 23 Mamba layers take 24 pages
    padded = ceil(state_layers / layers) * layers
    assert r["engine_state_tokens"] == padded * block * attn_token / per_token
    assert r["engine_token_capacity"] == r["engine_kv_bytes_per_gpu"] // (
        block * per_token) * block
    sglang = estimate(_spec(name), B200, engine="sglang", gpus=8, tp=8, prompt_tokens=1024,
                      output_tokens=128)
    # unpadded, at the config's dtype (SGLang's auto)
    assert sglang["engine_state_tokens"] == sglang["state_bytes_per_sequence_per_gpu"] / per_token


def test_qwen3_5_27b_figures_by_hand() -> None:
    """vLLM's default takes the config's ``mamba_ssm_dtype`` float32
    (``Qwen3_5ForConditionalGenerationConfig.verify_and_update_config``): pages of
    6 x 128 x 128 x 4 + 7,680 = 400,896 B. On a B200 (compute capability 10.0, head size 256:
    32-token alignment) blocks of 32 * ceil(400,896 / 32,768) = 416 tokens, 48 x 416 x 1,024 /
    16,384 = 1,248 pool tokens per sequence; on an H200 (9.0: 16-token alignment)
    16 * ceil(400,896 / 16,384) = 400 tokens, 1,200 pool tokens. With the state at 16 bit
    (``state_dtype`` bf16) on the B200: 48 pages of 32 * ceil(204,288 / 32,768) = 224 x 1,024 B
    = 672 pool tokens (208 and 624 at 16-token alignment)."""
    r = _vllm("Qwen3.5-27B")
    assert r["state_bytes_per_sequence_per_gpu"] == 48 * 400_896
    assert r["engine_state_tokens"] == 48 * 416 * 1024 / 16_384 == 1248
    assert r["engine_token_capacity"] % 416 == 0
    bf16 = _vllm("Qwen3.5-27B", state_dtype="bf16")
    assert bf16["state_bytes_per_sequence_per_gpu"] == 48 * 204_288
    assert bf16["engine_state_tokens"] == 48 * 224 * 1024 / 16_384 == 672
    h200 = estimate(_spec("Qwen3.5-27B"), load_gpus()["h200"], engine="vllm", gpus=8, tp=8,
                    prompt_tokens=1024, output_tokens=128, max_num_seqs=100_000)
    assert h200["engine_state_tokens"] == 48 * 400 * 1024 / 16_384 == 1200
    assert h200["engine_token_capacity"] % 400 == 0


def test_state_dtype_auto_follows_the_engine() -> None:
    """``auto``: vLLM's rule under vLLM (Qwen3.5 and Nemotron-H the config's float32), the
    config's dtype under SGLang and the roofline (float32 here), TRT-LLM the model dtype
    (16 bit, ``validate_and_set_mamba_ssm_cache_dtype``); an explicit dtype wins
    everywhere."""
    qwen, nemotron = "Qwen3.5-27B", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
    state = "state_bytes_per_sequence_per_gpu"
    # Nemotron-3-Nano per GPU: 23 layers of 65,536 recurrent elements + 2,304 conv at 2 B
    assert _vllm(nemotron)[state] == 23 * (65_536 * 4 + 2304 * 2)
    assert _vllm(nemotron, state_dtype="bf16")[state] == 23 * (65_536 * 2 + 2304 * 2)
    assert estimate(_spec(nemotron), B200, engine="trtllm", gpus=8, tp=8)[state] \
        == 23 * (65_536 * 2 + 2304 * 2)
    # Qwen3.5-27B per GPU: 48 layers of 98,304 recurrent elements + 3,840 conv at 2 B
    assert estimate(_spec(qwen), B200, gpus=8, tp=8)[state] == 48 * (98_304 * 4 + 3840 * 2)
    assert estimate(_spec(qwen), B200, engine="sglang", gpus=8, tp=8)[state] \
        == 48 * (98_304 * 4 + 3840 * 2)
    assert estimate(_spec(qwen), B200, engine="trtllm", gpus=8, tp=8)[state] \
        == 48 * (98_304 * 2 + 3840 * 2)
    assert estimate(_spec(qwen), B200, engine="sglang", gpus=8, tp=8,
                    state_dtype="fp16")[state] == 48 * (98_304 * 2 + 3840 * 2)


def test_state_dtype_is_validated() -> None:
    from planner.core.errors import PlannerError

    with pytest.raises(PlannerError, match="state_dtype"):
        _vllm("Qwen3.5-27B", state_dtype="fp8")


def test_roofline_capacity_sets_the_windows_aside() -> None:
    """The roofline budget (memory - reserve - weights) holds ``batch`` windows of
    Gemma-4-31B's local layers (409,600 x 2 B x min(T, 1024)) and, for the rest, growing
    tokens of 81,920 B: capacity = (budget - 4 * 838,860,800) // 81,920 on one GPU."""
    spec = _spec("Gemma-4-31B-IT-NVFP4")
    r = estimate(spec, gpu(memory_gib=192), batch=4, prompt_tokens=4096, output_tokens=1)
    window = 409_600 * 2 * 1024
    assert window == 838_860_800
    assert r["token_capacity"] == (r["kv_budget_bytes"] - 4 * window) // 81_920
    short = estimate(spec, gpu(memory_gib=192), batch=4, prompt_tokens=500, output_tokens=1)
    assert short["token_capacity"] == (short["kv_budget_bytes"] - 4 * 409_600 * 2 * 500) \
        // 81_920


def test_models_without_windows_or_state_are_unchanged() -> None:
    """MiniMax-M2.7 (full attention everywhere): growing bytes are all its KV bytes, nothing
    is set aside per sequence."""
    r = _vllm("MiniMax-M2.7")
    assert r["engine_state_tokens"] == 0
    assert r["kv_bytes_per_token_per_gpu"] == r["kv_bytes_per_token"] / 8


@pytest.mark.parametrize("name", sorted(p.stem for p in PUBLISHED.glob("*.json")))
def test_every_2026_model_gets_a_capacity_on_8_b200(name: str) -> None:
    """``planner estimate --model <each> --gpu b200 --engine vllm --gpus 8 --tp 8``: a
    capacity in whole blocks whenever the weights fit (DeepSeek-V4-Pro, GLM-5 and GLM-5.2 in
    their published 16-bit weights do not fit 8 x 180 GB and report 0), and a running batch
    that fits the pool at the mean slot context."""
    r = _vllm(name)
    capacity = r["engine_token_capacity"]
    if r["engine_kv_bytes_per_gpu"] <= 0:
        assert capacity == 0 and not r["engine_fits"]
        assert name in ("DeepSeek-V4-Pro", "GLM-5", "GLM-5.2")
        return
    assert capacity > 0 and r["engine_fits"]
    per_sequence = r["mean_decode_context_tokens"] + r["engine_state_tokens"]
    assert r["max_running_batch"] * per_sequence <= capacity


@pytest.mark.parametrize(("counts", "group", "padded"), [
    ((10, 50, 0), 10, (10, 50, 0)),  # Gemma-4-31B: 10 global, 50 local
    ((9, 39, 0), 9, (9, 45, 0)),  # MiMo-V2-Flash: the last sliding group padded by 6
    ((6, 0, 23), 6, (6, 0, 24)),  # Nemotron-3-Nano: 6 attention, 23 Mamba
    ((13, 12, 0), 13, (13, 13, 0)),  # vLLM's own example, gpt-oss-20b + eagle: 13 full, 12 sw
    ((61, 0, 0), 61, (61, 0, 0)),  # one cache type: one group, no padding
])
def test_vllm_group_padding(counts: tuple[int, int, int], group: int,
                            padded: tuple[int, int, int]) -> None:
    """``_get_kv_cache_groups_uniform_page_size``: groups of the fewest layers of a type, of
    the most when max < 1.25 * min; each type padded to whole groups. The engine columns'
    factor (:func:`planner.formulas.engine_memory._vllm_padding`) is the same rule."""
    from planner.formulas.engine_memory import SGLANG, VLLM, _vllm_padding
    from planner.spec.vllm_cache_layout import padded_layers, vllm_group_size

    assert vllm_group_size(*counts) == group
    assert tuple(padded_layers(n, group) for n in counts) == padded
    for n, p in zip(counts, padded, strict=True):
        if n:
            assert _vllm_padding(VLLM, n, *counts) == pytest.approx(p / n, rel=1e-15)
            assert _vllm_padding(SGLANG, n, *counts) == 1
