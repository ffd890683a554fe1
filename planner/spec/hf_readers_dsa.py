"""``config.json`` readers of DeepSeek's sparse and compressed attention (transformers 5.23).

DeepSeek-V3.2 and GLM-5 put a lightning indexer beside MLA (its keys cached beside the latent,
:class:`~planner.spec.architecture.Indexer`); DeepSeek-V4 compresses attention per layer
(:class:`~planner.spec.architecture.CompressedAttention`). Why a module of its own: one
family of attention, read by these three readers; the registry of 2025-2026 architectures
(:data:`planner.spec.hf_readers_2026.READERS_2026`) lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from planner.core.errors import ConfigError
from planner.spec.architecture import (
    Attention,
    CompressedAttention,
    Indexer,
    Layer,
    Mlp,
    ModelSpec,
    Moe,
)
from planner.spec.hf_reader import (
    ConfigReader,
    dense_or_moe_layers,
    experts_per_token,
    layer_types,
    model_spec,
    name_list,
)


# ------------------------------------------------------------- DeepSeek sparse attention (DSA)
def _mla(r: ConfigReader, *, indexer: Indexer | None, topk: int) -> Attention:
    heads = r.integer("num_attention_heads")
    nope, rope = r.integer("qk_nope_head_dim"), r.integer("qk_rope_head_dim")
    bias = r.flag("attention_bias", False)
    return Attention(
        num_heads=heads, num_kv_heads=heads, head_dim=nope + rope,
        v_head_dim=r.integer("v_head_dim"),
        qkv_bias=bias, o_bias=bias, q_lora_rank=r.opt_int("q_lora_rank") or 0,
        kv_lora_rank=r.integer("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
        indexer=indexer, sparse_topk=topk)


def _indexer(r: ConfigReader) -> Indexer:
    q_lora = r.opt_int("q_lora_rank")
    if not q_lora:
        raise ConfigError(r.name, "q_lora_rank", "is required with a sparse-attention indexer "
                          "(its query reads the q_lora latent)")
    return Indexer(num_heads=r.integer("index_n_heads"), head_dim=r.integer("index_head_dim"),
                   topk=r.integer("index_topk"), q_lora_rank=q_lora)


def _deepseek_moe(r: ConfigReader) -> Moe:
    size = r.integer("moe_intermediate_size")
    shared = r.integer("n_shared_experts", 1, minimum=0)
    return Moe(num_experts=r.integer("n_routed_experts"),
               top_k=experts_per_token(r, "num_experts_per_tok", "n_routed_experts"),
               expert=Mlp(size), shared=Mlp(size * shared) if shared else None)


def deepseek_v32(r: ConfigReader) -> ModelSpec:
    """DeepSeek-V3.2 (``modeling_deepseek_v32.py``): DeepSeek-V3 (MLA, dense first
    ``first_k_dense_replace`` layers, routed + shared experts) plus a lightning indexer in every
    layer; attention reads the indexer's ``index_topk`` tokens. The cache holds the latent
    (``kv_lora_rank + qk_rope_head_dim``) and the indexer key (``index_head_dim``) per token:
    61 x 704 x 2 B = 85,888 B/token in bf16, 15,616 B (22%) over V3's latent."""
    attn = _mla(r, indexer=_indexer(r), topk=r.integer("index_topk"))
    first_dense = r.integer("first_k_dense_replace", 0, minimum=0)
    layers = dense_or_moe_layers(r, attn=attn, dense=Mlp(r.integer("intermediate_size")),
                                 moe=_deepseek_moe(r), is_sparse=lambda i: i >= first_dense)
    return model_spec(r, "deepseek_v32", r.integer("hidden_size"), layers, tie_default=False)


def glm_moe_dsa(r: ConfigReader) -> ModelSpec:
    """GLM-5 / GLM-5.2 (``modeling_glm_moe_dsa.py``): MLA with a DSA indexer. With
    ``indexer_types`` (GLM-5.2's IndexShare) only ``full`` layers compute and cache their own
    indexer; ``shared`` layers reuse the previous top-k and hold neither indexer weights nor
    indexer keys. FFNs by ``mlp_layer_types`` (``dense``/``sparse``), else dense for the first
    ``first_k_dense_replace`` layers (default 3)."""
    n = r.integer("num_hidden_layers")
    full = _indexer(r)
    topk = r.integer("index_topk")
    kinds = name_list(r, "indexer_types", n, ("full", "shared"), lambda i: "full")
    first_dense = r.integer("first_k_dense_replace", 3, minimum=0)
    mlp_kinds = name_list(r, "mlp_layer_types", n, ("dense", "sparse"),
                          lambda i: "dense" if i < first_dense else "sparse")
    dense, moe = Mlp(r.integer("intermediate_size")), _deepseek_moe(r)
    with_ix, shared = _mla(r, indexer=full, topk=topk), _mla(r, indexer=None, topk=topk)
    layers = tuple(Layer(with_ix if k == "full" else shared, moe if m == "sparse" else dense)
                   for k, m in zip(kinds, mlp_kinds, strict=True))
    return model_spec(r, "glm_moe_dsa", r.integer("hidden_size"), layers, tie_default=False)


# --------------------------------------------------------------------------- DeepSeek-V4
_V4_RATIO_TYPES = {0: "sliding_attention", 4: "compressed_sparse_attention",
                   128: "heavily_compressed_attention"}


def _v4_layer_types(r: ConfigReader, n: int) -> list[str]:
    """DeepSeek-V4's attention type per layer: ``layer_types``, else from the legacy
    ``compress_ratios`` (0 sliding only, 4 CSA, 128 HCA; default two sliding layers, then CSA
    and HCA alternating)."""
    if r.cfg.get("layer_types") is not None:
        return layer_types(r, n, tuple(_V4_RATIO_TYPES.values()), lambda i: "")
    ratios = r.int_list("compress_ratios") if r.cfg.get("compress_ratios") is not None \
        else [0] * min(n, 2) + [4 if i % 2 == 0 else 128 for i in range(max(0, n - 2))]
    if len(ratios) < n or any(x not in _V4_RATIO_TYPES for x in ratios[:n]):
        raise ConfigError(r.name, "compress_ratios", f"must give one of 0, 4, 128 for "
                          f"each of the {n} layers")
    return [_V4_RATIO_TYPES[x] for x in ratios[:n]]


def _v4_ratios(r: ConfigReader) -> dict[str, int]:
    """Compression ratio by attention type: ``compress_rates`` may change HCA's (default
    128); CSA's must stay 4."""
    ratio_of = {v: k for k, v in _V4_RATIO_TYPES.items()}
    rates = r.cfg.get("compress_rates") or {}
    if not isinstance(rates, Mapping):
        raise ConfigError(r.name, "compress_rates", "must be an object of attention type → rate")
    if rates.get("compressed_sparse_attention", 4) != 4:
        raise ConfigError(r.name, "compress_rates", "compressed_sparse_attention must be 4 "
                          "(the overlapping CSA windows are built for 4)")
    ratio_of["heavily_compressed_attention"] = int(rates.get("heavily_compressed_attention", 128))
    return ratio_of


def deepseek_v4(r: ConfigReader) -> ModelSpec:
    """DeepSeek-V4 Flash / Pro (``modeling_deepseek_v4.py``): every layer
    :class:`CompressedAttention` over a ``sliding_window`` (default 128), by ``layer_types``
    or the legacy per-layer ``compress_ratios`` (0 sliding only, 4 CSA, 128 HCA; entries past
    ``num_hidden_layers`` are the MTP layers, not built). Every layer's FFN is ``n_routed_experts``
    experts (the first ``num_hash_layers`` routed by a token-id hash, same shapes) plus shared
    experts. Hyper-connections (``hc_mult`` streams): per layer, for attention and FFN, a
    ``(2+m)*m x m*d`` mixing matrix, ``(2+m)*m`` base and 3 scales; a head ``m x m*d``, ``m``
    base and 1 scale. MTP layers are not built by transformers, not counted."""
    d, n = r.integer("hidden_size"), r.integer("num_hidden_layers")
    heads, head_dim = r.integer("num_attention_heads"), r.integer("head_dim", 512)
    groups = r.integer("o_groups", 8)
    if (heads * head_dim) % groups:
        raise ConfigError(r.name, "o_groups", f"({groups}) must divide num_attention_heads x "
                          f"head_dim ({heads * head_dim})")
    types = _v4_layer_types(r, n)
    ratio_of = _v4_ratios(r)
    common = {"num_heads": heads, "head_dim": head_dim, "q_lora_rank": r.integer("q_lora_rank"),
              "o_groups": groups, "o_lora_rank": r.integer("o_lora_rank"),
              "index_heads": r.integer("index_n_heads"),
              "index_head_dim": r.integer("index_head_dim"),
              "index_topk": r.integer("index_topk"),
              "rope_head_dim": r.integer("qk_rope_head_dim", 64)}
    size = r.integer("moe_intermediate_size")
    shared = r.integer("n_shared_experts", 1, minimum=0)
    moe = Moe(num_experts=r.integer("n_routed_experts"),
              top_k=experts_per_token(r, "num_experts_per_tok", "n_routed_experts"),
              expert=Mlp(size), shared=Mlp(size * shared) if shared else None)
    window = r.integer("sliding_window", 128)
    layers = tuple(Layer(CompressedAttention(compress_ratio=ratio_of[t], **common), moe,
                         sliding_window=window) for t in types)
    m = r.integer("hc_mult", 4)
    mix = (2 + m) * m
    hc = n * 2 * (mix * m * d + mix + 3) + m * m * d + m + 1
    spec = model_spec(r, "deepseek_v4", d, layers, tie_default=False)
    return replace(spec, extra_params=hc)
