"""Exact parameter counts of a :class:`ModelSpec`, total and active per token, by component.

Formulas (docs/formulas.md, "Parameters"), per layer:

* linear layer: ``d_in*d_out`` weights, ``+ d_out`` with a bias;
* attention: Q and O are ``d x (h*d_h)``, K and V ``d x (n_kv*d_h)``; MLA: ``d x q_lora_rank``,
  ``q_lora_rank x h*(d_nope+d_rope)``, ``d x (kv_lora_rank+d_rope)``,
  ``kv_lora_rank x h*(d_nope+d_v)``, ``h*d_v x d``;
* FFN: gated ``3*d*d_ff``, plain ``2*d*d_ff``; MoE: ``E`` experts + router ``d*E`` + shared
  experts (+ a ``d x 1`` shared-expert gate for Qwen);
  gpt-oss's attention sinks ``h``; a gated query (Qwen3-Next) doubles Q to ``d x 2*h*d_h``;
* Gated DeltaNet linear attention: ``d x (2*n_k*d_k + 2*n_v*d_v)``, ``d x 2*n_v``,
  ``n_v*d_v x d``, a depthwise convolution ``conv_dim*kernel`` and ``2*n_v`` (``dt_bias``,
  ``A_log``);
* FFN and experts may carry biases (gpt-oss: ``2*f + d`` per expert); a router may carry an
  ``E`` bias (gpt-oss);
* norms: RMSNorm ``d``, LayerNorm ``2d``; q/k norms ``d_h`` each (OLMo 2: ``h*d_h + n_kv*d_h``);
  MLA latent norms; the linear-attention output norm ``d_v``;
* embedding ``V*d``, LM head ``V*d`` unless tied (``+ V`` with a bias, PhiMoE), learned position
  table ``positions*d``.

Active per token: everything except the ``E - k`` routed experts a token does not use.
Counts are Python ints: exact at any size.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from planner.core.errors import ValidationError
from planner.spec.architecture import (
    Attention,
    CompressedAttention,
    Layer,
    LinearAttention,
    Mamba2,
    Mlp,
    ModelSpec,
    Moe,
    NoMixer,
)

AnyMixer = Attention | LinearAttention | CompressedAttention | Mamba2 | NoMixer


def linear(d_in: int, d_out: int, bias: bool = False) -> int:
    """Parameters of a linear layer: ``d_in*d_out`` (+ ``d_out`` bias)."""
    return d_in * d_out + (d_out if bias else 0)


def attention_projections(attn: AnyMixer, d: int) -> dict[str, tuple[int, int, bool]]:
    """The attention block's linear projections as ``name -> (d_in, d_out, bias)``.

    Fused projections (phi3's ``qkv_proj``, GPT-2's ``c_attn``) are listed as their separate
    q/k/v parts: the count is the same, only the stored shape differs. Gated DeltaNet lists
    ``qkvz``, ``ba`` and ``o``.
    """
    if isinstance(attn, NoMixer):
        return {}
    if isinstance(attn, LinearAttention):
        nk, nv, dk, dvl = attn.num_k_heads, attn.num_v_heads, attn.head_k_dim, attn.head_v_dim
        return {"qkvz": (d, 2 * nk * dk + 2 * nv * dvl, False), "ba": (d, 2 * nv, False),
                "o": (nv * dvl, d, False)}
    if isinstance(attn, Mamba2):
        return {"in": (d, 2 * attn.inner + 2 * attn.n_groups * attn.state_size + attn.num_heads,
                       attn.proj_bias),
                "o": (attn.inner, d, attn.proj_bias)}
    if isinstance(attn, CompressedAttention):
        return _compressed_projections(attn, d)
    h, dh, dv = attn.num_heads, attn.head_dim, attn.v_head_dim
    if attn.is_mla:
        out: dict[str, tuple[int, int, bool]] = {}
        if attn.q_lora_rank:
            out["q_a"] = (d, attn.q_lora_rank, attn.qkv_bias)
            out["q_b"] = (attn.q_lora_rank, h * dh, False)
        else:
            out["q"] = (d, h * dh, False)
        out["kv_a"] = (d, attn.kv_lora_rank + attn.qk_rope_head_dim, attn.qkv_bias)
        out["kv_b"] = (attn.kv_lora_rank, h * (attn.qk_nope_head_dim + dv), False)
        out["o"] = (h * dv, d, attn.o_bias)
        return {**out, **_indexer_projections(attn, d)}
    out = {
        "q": (d, (2 if attn.output_gate else 1) * h * dh, attn.qkv_bias),
        "k": (d, attn.num_kv_heads * dh, attn.qkv_bias),
        "v": (d, attn.num_kv_heads * dv, attn.qkv_bias),
        "o": (h * dv, d, attn.o_bias),
    }
    if attn.kv_shared:
        del out["v"]
    return {**out, **_indexer_projections(attn, d)}


def _indexer_projections(attn: Attention, d: int) -> dict[str, tuple[int, int, bool]]:
    """The lightning indexer's projections (DeepSeek sparse attention): ``wq_b``
    ``q_lora x h_idx*d_idx``, ``wk`` ``d x d_idx``, ``weights_proj`` ``d x h_idx``."""
    ix = attn.indexer
    if ix is None:
        return {}
    return {"idx_q": (ix.q_lora_rank, ix.num_heads * ix.head_dim, False),
            "idx_k": (d, ix.head_dim, False), "idx_w": (d, ix.num_heads, False)}


def _compressed_projections(attn: CompressedAttention, d: int) -> dict[str, tuple[int, int, bool]]:
    """DeepSeek-V4 attention's projections (:class:`CompressedAttention`): queries through the
    ``q_lora`` bottleneck, the shared KV, the grouped low-rank output, and the compressor's
    (and CSA indexer's) kv and gate projections."""
    h, dh = attn.num_heads, attn.head_dim
    group_in = h * dh // attn.o_groups
    out = {"q_a": (d, attn.q_lora_rank, False), "q_b": (attn.q_lora_rank, h * dh, False),
           "kv": (d, dh, False),
           "o_a": (group_in, attn.o_groups * attn.o_lora_rank, False),
           "o_b": (attn.o_groups * attn.o_lora_rank, d, False)}
    if attn.compress_ratio:
        width = (2 if attn.is_csa else 1) * dh
        out["comp_kv"] = (d, width, False)
        out["comp_gate"] = (d, width, False)
    if attn.is_csa:
        di, hi = attn.index_head_dim, attn.index_heads
        out["idx_kv"] = (d, 2 * di, False)
        out["idx_gate"] = (d, 2 * di, False)
        out["idx_q"] = (attn.q_lora_rank, hi * di, False)
        out["idx_w"] = (d, hi, False)
    return out


def mlp_projections(mlp: Mlp, d: int) -> dict[str, tuple[int, int, bool]]:
    """An FFN's linear projections as ``name -> (d_in, d_out, bias)``."""
    f = mlp.intermediate_size
    if mlp.gated:
        return {"gate": (d, f, mlp.bias), "up": (d, f, mlp.bias), "down": (f, d, mlp.bias)}
    return {"up": (d, f, mlp.bias), "down": (f, d, mlp.bias)}


def _sum_params(projections: dict[str, tuple[int, int, bool]]) -> int:
    return sum(linear(i, o, b) for i, o, b in projections.values())


def _sum_weights(projections: dict[str, tuple[int, int, bool]]) -> int:
    return sum(i * o for i, o, _ in projections.values())


def attention_norm_params(attn: AnyMixer) -> int:
    """Norms inside attention: q/k norms (``d_h`` each, or ``h*d_h + n_kv*d_h`` across heads),
    MLA's latent norms (RMSNorm), the linear-attention output norm (``d_v``), Mamba-2's gated
    norm (``I``), the indexer's key LayerNorm (``2*d_idx``), DeepSeek-V4's ``q_lora + d_h``
    (+ ``d_h`` compressor, + ``d_idx`` CSA indexer)."""
    if isinstance(attn, NoMixer):
        return 0
    if isinstance(attn, LinearAttention):
        return attn.head_v_dim
    if isinstance(attn, Mamba2):
        return attn.inner
    if isinstance(attn, CompressedAttention):
        return (attn.q_lora_rank + attn.head_dim + (attn.head_dim if attn.compress_ratio else 0)
                + (attn.index_head_dim if attn.is_csa else 0))
    indexer = 2 * attn.indexer.head_dim if attn.indexer else 0
    if attn.is_mla:
        return attn.q_lora_rank + attn.kv_lora_rank + indexer
    if attn.qk_norm and attn.qk_norm_across_heads:
        return (attn.num_heads + attn.num_kv_heads) * attn.head_dim + indexer
    return (2 * attn.head_dim if attn.qk_norm else 0) + indexer


def attention_other_params(attn: AnyMixer) -> int:
    """Attention parameters outside projections and norms: attention sinks (``h``: gpt-oss,
    MiMo's window layers, DeepSeek-V4), Gated DeltaNet's convolution (``conv_dim*kernel``)
    with ``dt_bias`` and ``A_log`` (``n_v`` each), Mamba-2's convolution (+ bias) with
    ``dt_bias``, ``A_log`` and ``D``, DeepSeek-V4's compressor position biases
    (``ratio x c*d_h``; CSA's indexer ``4 x 2*d_idx``)."""
    if isinstance(attn, NoMixer):
        return 0
    if isinstance(attn, LinearAttention):
        return attn.conv_dim * attn.conv_kernel + 2 * attn.num_v_heads
    if isinstance(attn, Mamba2):
        return (attn.conv_dim * attn.conv_kernel + (attn.conv_dim if attn.conv_bias else 0)
                + 3 * attn.num_heads)
    if isinstance(attn, CompressedAttention):
        other = attn.num_heads
        if attn.compress_ratio:
            other += attn.compress_ratio * (2 if attn.is_csa else 1) * attn.head_dim
        if attn.is_csa:
            other += 4 * 2 * attn.index_head_dim
        return other
    return attn.num_heads if attn.sinks else 0


@dataclass(frozen=True, slots=True)
class ParamCounts:
    """Parameters by component. ``mlp`` includes routed and shared experts; ``router`` the
    routers and shared-expert gates; ``norm`` every norm weight (and bias)."""

    embedding: int
    position: int
    attention: int
    mlp: int
    router: int
    norm: int
    lm_head: int
    total: int
    active: int

    def as_dict(self) -> dict[str, int]:
        """Plain dict, in field order."""
        return asdict(self)


def _ffn_counts(ffn: Mlp | Moe, d: int) -> tuple[int, int, int]:
    """(mlp params, router params, inactive routed-expert params) of one FFN block."""
    if isinstance(ffn, Mlp):
        return _sum_params(mlp_projections(ffn, d)), 0, 0
    expert = _sum_params(mlp_projections(ffn.expert, ffn.latent_size or d))
    shared = _sum_params(mlp_projections(ffn.shared, d)) if ffn.shared else 0
    shared += _sum_params(mlp_projections(ffn.dense, d)) if ffn.dense else 0
    shared += 2 * d * ffn.latent_size
    router = (d * ffn.num_experts + (ffn.num_experts if ffn.router_bias else 0)
              + (d if ffn.shared_gate else 0) + ffn.router_extra)
    return ffn.num_experts * expert + shared, router, (ffn.num_experts - ffn.top_k) * expert


@lru_cache(maxsize=256)
def count_params(spec: ModelSpec) -> ParamCounts:
    """Exact parameter counts of ``spec`` (see the module docstring for the formulas)."""
    d = spec.hidden_size
    attention = mlp = router = norm = inactive = 0
    for layer in spec.layers:
        attention += _sum_params(attention_projections(layer.attention, d))
        attention += attention_other_params(layer.attention)
        norm += attention_norm_params(layer.attention)
        norm += layer.norms * d * spec.norm_params_per_hidden
        m, r, idle = _ffn_counts(layer.ffn, d)
        mlp += m
        router += r
        inactive += idle
    if spec.final_norm:
        norm += d * spec.norm_params_per_hidden
    embedding = spec.vocab_size * d
    position = spec.position_table_size * d
    lm_head = 0 if spec.tie_word_embeddings else spec.vocab_size * d
    lm_head += spec.vocab_size if spec.lm_head_bias else 0
    attention += spec.extra_params
    total = embedding + position + attention + mlp + router + norm + lm_head
    return ParamCounts(embedding=embedding, position=position, attention=attention, mlp=mlp,
                       router=router, norm=norm, lm_head=lm_head, total=total,
                       active=total - inactive)


def layer_matmul_weights(layer: Layer, d: int) -> tuple[int, int, int]:
    """Matrix weights of one layer that multiply activations, without biases or norms:
    ``(dense, routed experts total, routed experts used per token)``. ``dense`` covers
    attention, dense FFN, shared experts and routers — weights every token uses."""
    dense = _sum_weights(attention_projections(layer.attention, d))
    ffn = layer.ffn
    if isinstance(ffn, Mlp):
        return dense + _sum_weights(mlp_projections(ffn, d)), 0, 0
    expert = _sum_weights(mlp_projections(ffn.expert, ffn.latent_size or d))
    shared = _sum_weights(mlp_projections(ffn.shared, d)) if ffn.shared else 0
    shared += _sum_weights(mlp_projections(ffn.dense, d)) if ffn.dense else 0
    dense += (shared + d * ffn.num_experts + (d if ffn.shared_gate else 0)
              + 2 * d * ffn.latent_size)
    return dense, ffn.num_experts * expert, ffn.top_k * expert


def lora_module_shapes(spec: ModelSpec) -> dict[str, list[tuple[int, int]]]:
    """Every linear module LoRA can target, by short name (q, k, v, o, gate, up, down, and for
    MLA q_a, q_b, kv_a, kv_b), as one ``(d_in, d_out)`` per module instance in the model.

    Routed experts contribute one instance per expert, shared experts one each; K/V are
    rectangular under GQA (``d x n_kv*d_h``)."""
    d = spec.hidden_size
    shapes: dict[str, list[tuple[int, int]]] = {}

    def add(projections: dict[str, tuple[int, int, bool]], times: int = 1) -> None:
        for name, (i, o, _) in projections.items():
            shapes.setdefault(name, []).extend([(i, o)] * times)

    for layer in spec.layers:
        add(attention_projections(layer.attention, d))
        ffn = layer.ffn
        if isinstance(ffn, Mlp):
            add(mlp_projections(ffn, d))
        else:
            add(mlp_projections(ffn.expert, ffn.latent_size or d), ffn.num_experts)
            if ffn.shared:
                add(mlp_projections(ffn.shared, d))
    return shapes


def lora_dims(spec: ModelSpec, targets: str | list[str]) -> int:
    """``sum(d_in + d_out)`` over every module instance the LoRA ``targets`` name
    (comma-separated short names such as ``q,v``; ``all`` for every linear module)."""
    shapes = lora_module_shapes(spec)
    names = [t.strip().lower() for t in (targets.split(",") if isinstance(targets, str)
                                         else targets) if t.strip()]
    if names == ["all"]:
        names = list(shapes)
    unknown = [n for n in names if n not in shapes]
    if unknown or not names:
        raise ValidationError("lora_targets", f"must name modules of {spec.name}: one or more "
                              f"of {', '.join(shapes)} (or all)", value=",".join(unknown))
    return sum(i + o for n in dict.fromkeys(names) for i, o in shapes[n])
