"""A model's figures as scenario inputs: the integers every per-scenario formula reads.

A :class:`ModelSpec` is structured (per-layer shapes); the scenario formulas are flat and
vectorized. This module is the bridge: it reduces a spec to named integers (each a column of the
scenario sheet, prefixed ``model_``) such as matmul weights per token, KV elements per token on
full-attention and on sliding-window layers, and attention FLOPs per position pair.

Layers are grouped in two classes, full attention and sliding window (chunked attention counts as
a window of its chunk size); a model whose windowed layers use different window sizes is refused
with a clear error rather than approximated. Linear-attention layers (Gated DeltaNet) hold no KV
cache: they add a fixed state per sequence, ``model_state_elems_per_sequence``, whatever the
context length.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from planner.errors import ConfigError
from planner.estimator.architecture import LinearAttention, Mlp, ModelSpec
from planner.estimator.params import attention_projections, count_params, layer_matmul_weights


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """Integers derived from a :class:`ModelSpec`; every field is a scenario-sheet column.

    Units: parameters are counts; ``*_elems_*`` are tensor elements (bytes = elems * bits / 8);
    ``*_flops_per_pair`` are FLOPs per (query, key) position pair summed over layers.
    """

    model_params_total: int
    model_params_active: int
    model_params_embedding: int
    """Token embedding plus any learned position table."""
    model_params_lm_head: int
    """Separate LM head weights (0 when tied to the embedding)."""
    model_matmul_dense_params: int
    """Layer matmul weights every token uses: attention, dense FFN, shared experts, routers."""
    model_matmul_experts_params: int
    """Routed-expert matmul weights of all experts (0 for dense models)."""
    model_matmul_experts_active_params: int
    """Routed-expert matmul weights a single token uses (top-k experts)."""
    model_lm_head_matmul_params: int
    """``V*d``: the logits matmul, done whether or not the head is tied."""
    model_experts: int
    """Routed experts per MoE layer (1 for dense models)."""
    model_experts_per_token: int
    """Experts each token is routed to (1 for dense models)."""
    model_layers: int
    model_hidden_size: int
    model_attention_heads: int
    """Query heads per layer (of the first layer)."""
    model_kv_heads: int
    """Heads the KV cache splits by under tensor parallelism (1 for MLA)."""
    model_kv_elems_per_token_full: int
    """KV-cache elements per token per sequence, summed over full-attention layers."""
    model_kv_elems_per_token_window: int
    """KV-cache elements per token per sequence, summed over sliding-window layers."""
    model_sliding_window_tokens: int
    """The sliding window of the windowed layers (0 when there are none)."""
    model_attn_flops_per_pair_full: int
    """Attention-core FLOPs per position pair, summed over full-attention layers."""
    model_attn_flops_per_pair_window: int
    """Attention-core FLOPs per position pair, summed over sliding-window layers."""
    model_max_context_tokens: int
    """``max_position_embeddings`` (0 when the config gives none)."""
    model_state_elems_per_sequence: int = 0
    """Fixed state elements one sequence holds in linear-attention layers, summed over layers
    (recurrent state plus convolution window; 0 when every layer keeps a KV cache)."""
    model_attn_matmul_params_other: int = 0
    """Attention matmul weights that the per-pair FLOPs and KV elements do not imply, summed over
    layers: Gated DeltaNet projections and the output-gate half of a gated query projection
    (Qwen3-Next); 0 for other models. Engine formulas that rebuild attention widths from
    ``model_attn_flops_per_pair_*`` and ``model_kv_elems_*`` add it."""
    model_kv_layers: int = 0
    """Layers that keep a KV cache (all but linear-attention layers)."""
    model_vision_params: int = 0
    """Vision tower and projector of a multimodal checkpoint, reported beside the text model
    (not in ``model_params_total``; 0 for text-only models)."""
    model_state_heads: int = 1
    """Heads the fixed state splits by under tensor parallelism (linear-attention value heads;
    1 when there is no state)."""

    def as_dict(self) -> dict[str, int]:
        """Plain dict of column name to value."""
        return asdict(self)


@lru_cache(maxsize=256)
def model_figures(spec: ModelSpec) -> ModelFigures:
    """Reduce ``spec`` to the flat integers the scenario formulas use (cached per spec: a
    spec is immutable, and tables of thousands of scenarios share a few models)."""
    counts = count_params(spec)
    d = spec.hidden_size
    dense = experts = experts_active = 0
    kv_full = kv_window = flops_full = flops_window = 0
    windows = {layer.sliding_window for layer in spec.layers} - {None}
    if len(windows) > 1:
        raise ConfigError(spec.name, "sliding_window",
                          f"layers use several window sizes {sorted(windows)}; one is supported")
    n_experts = top_k = 1
    kv_heads = 1
    state = 0
    state_heads = 1
    attn_other = 0
    for layer in spec.layers:
        de, ex, ea = layer_matmul_weights(layer, d)
        dense, experts, experts_active = dense + de, experts + ex, experts_active + ea
        attn = layer.attention
        if isinstance(attn, LinearAttention):
            state += attn.state_elems_per_sequence
            state_heads = max(state_heads, attn.num_v_heads)
            attn_other += sum(i * o for i, o, _ in attention_projections(attn, d).values())
        else:
            kv_heads = max(kv_heads, attn.kv_cache_heads)
            if attn.output_gate:
                attn_other += d * attn.num_heads * attn.head_dim
            if layer.sliding_window is None:
                kv_full += attn.kv_elems_per_token
                flops_full += attn.core_flops_per_pair
            else:
                kv_window += attn.kv_elems_per_token
                flops_window += attn.core_flops_per_pair
        if not isinstance(layer.ffn, Mlp):
            n_experts, top_k = layer.ffn.num_experts, layer.ffn.top_k
    return ModelFigures(
        model_params_total=counts.total,
        model_params_active=counts.active,
        model_params_embedding=counts.embedding + counts.position,
        model_params_lm_head=counts.lm_head,
        model_matmul_dense_params=dense,
        model_matmul_experts_params=experts,
        model_matmul_experts_active_params=experts_active,
        model_lm_head_matmul_params=spec.vocab_size * d,
        model_experts=n_experts,
        model_experts_per_token=top_k,
        model_layers=spec.num_layers,
        model_hidden_size=d,
        model_attention_heads=spec.attention.num_heads,
        model_kv_heads=kv_heads,
        model_kv_elems_per_token_full=kv_full,
        model_kv_elems_per_token_window=kv_window,
        model_sliding_window_tokens=next(iter(windows), 0),
        model_attn_flops_per_pair_full=flops_full,
        model_attn_flops_per_pair_window=flops_window,
        model_max_context_tokens=spec.max_position_embeddings,
        model_state_elems_per_sequence=state,
        model_state_heads=state_heads,
        model_attn_matmul_params_other=attn_other,
        model_kv_layers=sum(1 for layer in spec.layers
                            if not isinstance(layer.attention, LinearAttention)),
        model_vision_params=spec.vision_params,
    )
