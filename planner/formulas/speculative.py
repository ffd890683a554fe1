"""Speculative decoding (issue 25): a drafter proposes ``k`` tokens per sequence, the target
model verifies them in one step, and a sequence advances by the accepted tokens.

Why a module of its own: the serving model (:mod:`planner.formulas.serving`) counts one
output token per sequence per decode step; speculation changes three of its quantities and
these columns say how, so that ``serving.py`` only reads them (``spec_verify_tokens``,
``decode_steps_per_request``, ``serving_request_flops``, ``serving_decode_flops``,
``spec_draft_kv_s_per_step``, ``spec_draft_fixed_s``, ``spec_draft_weights_bytes_per_gpu``).

Mechanism (vLLM V1 ``spec_decode``, SGLang EAGLE/MTP workers, TensorRT-LLM MTP; the TRT-LLM
blog "DeepSeek R1 MTP Implementation and Optimization" figure 1):

* each decode step verifies ``k + 1`` tokens per sequence (its last token and the ``k``
  drafts): the target's GEMMs, LM head, element-wise work and collectives see ``(k + 1)x``
  the decode tokens and the token budget counts them (vLLM's scheduler adds
  ``num_spec_tokens`` to a running request's tokens); attention reads each sequence's KV
  once per step but computes over ``k + 1`` queries;
* a sequence advances by the acceptance length ``a`` (accepted drafts plus the bonus token
  the verify samples), so a request's ``G - 1`` decode tokens take ``(G - 1)/a`` steps, its
  TPOT is ``step / a`` and the replica's throughput rises by the steps saved;
* the drafter runs ``k`` forward passes per step (autoregressive drafting): MTP one extra
  decoder layer with the model's own shapes per draft token (DeepSeek-V3/R1's
  ``num_nextn_predict_layers = 1`` module: ``eh_proj`` 2d -> d, one decoder block, the shared
  LM head; it is run ``k`` times for ``k > 1``, TRT-LLM's "Eagle MTP"), a draft model its own
  parameters per draft token; the MTP layer keeps its own KV cache (one more KV layer) and
  its weights sit beside the model's.

The mean accepted length is an input (``spec_acceptance_length``); 0 means the method's
typical value under i.i.d. acceptance (Leviathan, Kalman, Matias, "Fast Inference from
Transformers via Speculative Decoding", ICML 2023, eq. 1): ``(1 - alpha^(k+1)) / (1 - alpha)``
with per-token acceptance rate ``alpha`` (:data:`ACCEPTANCE_RATE`).
"""

from __future__ import annotations

from planner.formulas.ops import Value, lookup, maximum, power, safe_div, where

SPEC_METHODS: dict[str, int] = {"none": 0, "mtp": 1, "draft": 2}
"""``spec_method`` choices and their codes."""
NONE, MTP, DRAFT = 0, 1, 2

ACCEPTANCE_RATE: dict[int, float] = {MTP: 0.875, DRAFT: 0.7}
"""Per-draft-token acceptance rate ``alpha`` a method's default acceptance length assumes.
MTP: 0.875, the middle of the 85-90 % acceptance of the second token DeepSeek-V3's MTP module
reaches ("DeepSeek-V3 Technical Report", arXiv 2412.19437, section 5.4.3: 1.8x decoding
TPS); a separate draft model: 0.7, within the 0.5-0.9 ``alpha`` Leviathan et al. (ICML 2023,
table 3) measure for small drafts of their targets. Not fitted to any measurement."""

DEFAULT_DRAFT_TOKENS: dict[int, int] = {MTP: 1, DRAFT: 5}
"""Draft tokens per step when ``spec_draft_tokens`` is 0. MTP: the checkpoint's
``num_nextn_predict_layers`` (at least 1; TensorRT-LLM's ``MTPDecodingConfig.max_draft_len``
default 1, vLLM ``num_speculative_tokens`` = the MTP modules); a draft model: 5, the
``num_speculative_tokens`` of vLLM's draft-model example (docs "Speculative Decoding")."""

MTP_PROJECTION_PARAMS_PER_D2 = 2
"""``eh_proj`` of an MTP module maps the concatenated ``[embedding; hidden]`` (2d) to d:
``2 d^2`` parameters per draft token."""


def spec_method_code(spec_method: Value) -> Value:
    """``spec_method`` as a number: 0 none, 1 MTP, 2 draft model (:data:`SPEC_METHODS`)."""
    return lookup(spec_method, SPEC_METHODS)


def spec_draft_tokens_effective(spec_method_code: Value, spec_draft_tokens: Value,
                                model_mtp_layers: Value) -> Value:
    """Draft tokens ``k`` proposed per sequence per step: 0 without speculation;
    ``spec_draft_tokens`` where above 0; else the method's default
    (:data:`DEFAULT_DRAFT_TOKENS`: MTP the checkpoint's modules, at least 1; draft 5)."""
    default = where(spec_method_code == MTP, maximum(model_mtp_layers, DEFAULT_DRAFT_TOKENS[MTP]),
                    DEFAULT_DRAFT_TOKENS[DRAFT])
    chosen = where(spec_draft_tokens > 0, spec_draft_tokens, default)
    return where(spec_method_code == NONE, 0, chosen)


def typical_acceptance_length(alpha: Value, k: Value) -> Value:
    """Expected tokens a verify step yields with ``k`` drafts each accepted with probability
    ``alpha`` until the first rejection, plus the bonus token:
    ``sum_{i=0..k} alpha^i = (1 - alpha^(k+1)) / (1 - alpha)`` (Leviathan et al. 2023, eq. 1).
    MTP, k = 1, alpha 0.875: 1.875 tokens; draft, k = 5, alpha 0.7: 2.94 tokens."""
    return (1 - power(alpha, k + 1)) / (1 - alpha)


def spec_acceptance_length_effective(spec_method_code: Value, spec_acceptance_length: Value,
                                     spec_draft_tokens_effective: Value) -> Value:
    """Mean tokens a sequence advances per decode step ``a`` (accepted drafts + the bonus
    token): 1 without speculation; ``spec_acceptance_length`` where above 0 (at most ``k +
    1``, checked with the inputs); else :func:`typical_acceptance_length` at the method's
    :data:`ACCEPTANCE_RATE`."""
    alpha = where(spec_method_code == MTP, ACCEPTANCE_RATE[MTP], ACCEPTANCE_RATE[DRAFT])
    typical = typical_acceptance_length(alpha, spec_draft_tokens_effective)
    chosen = where(spec_acceptance_length > 0, spec_acceptance_length, typical)
    return where(spec_method_code == NONE, 1, chosen)


def spec_verify_tokens(spec_draft_tokens_effective: Value) -> Value:
    """Tokens each decoding sequence puts through the target per step: ``k + 1`` (1 without
    speculation)."""
    return spec_draft_tokens_effective + 1


def decode_steps_per_request(output_tokens: Value,
                             spec_acceptance_length_effective: Value) -> Value:
    """Decode steps a request runs for its ``G - 1`` tokens after the first:
    ``(G - 1) / a`` (``G - 1`` without speculation)."""
    return (output_tokens - 1) / spec_acceptance_length_effective


def spec_draft_flops_per_step(spec_method_code: Value, spec_draft_tokens_effective: Value,
                              matmul_params_per_token: Value, model_lm_head_matmul_params: Value,
                              model_hidden_size: Value, model_layers: Value,
                              model_attn_flops_per_pair_full: Value,
                              mean_decode_context_tokens: Value,
                              spec_draft_active_params: Value) -> Value:
    """Drafter FLOPs per sequence per step, ``k`` draft tokens. MTP: each a pass through one
    decoder layer of the model's mean shapes (``2 P_linear / L``), ``eh_proj`` (``2 * 2d^2``),
    the shared LM head (``2 V d``) and one layer's attention core at the mean context
    (``per_pair_full / L * T``). Draft model: ``2 * its active parameters`` each (its
    attention core left out). 0 without speculation."""
    mtp = (2 * (matmul_params_per_token / model_layers
                + MTP_PROJECTION_PARAMS_PER_D2 * model_hidden_size * model_hidden_size
                + model_lm_head_matmul_params)
           + model_attn_flops_per_pair_full / model_layers * mean_decode_context_tokens)
    draft = 2 * spec_draft_active_params
    per_token = where(spec_method_code == MTP, mtp, where(spec_method_code == DRAFT, draft, 0))
    return spec_draft_tokens_effective * per_token


def serving_decode_flops(decode_flops: Value, spec_verify_tokens: Value,
                         spec_acceptance_length_effective: Value,
                         decode_steps_per_request: Value,
                         spec_draft_flops_per_step: Value) -> Value:
    """FLOPs of one request's decode phase on the serving engine: the target verifies ``k +
    1`` tokens in each of its ``(G - 1)/a`` steps, each at the context of the step (GEMMs,
    logits and attention queries ``(k + 1)x``): ``decode_flops * (k + 1) / a``, plus the
    drafter's ``steps * draft FLOPs per step``. ``decode_flops`` without speculation."""
    verify = decode_flops * spec_verify_tokens / spec_acceptance_length_effective
    return verify + decode_steps_per_request * spec_draft_flops_per_step


def serving_request_flops(prefill_flops_computed: Value, serving_decode_flops: Value) -> Value:
    """FLOPs of one request on the serving engine: the prefill the cache leaves
    (:func:`planner.formulas.prefix_cache.prefill_flops_computed`) plus the decode phase
    (:func:`serving_decode_flops`); ``request_flops`` without speculation or cache."""
    return prefill_flops_computed + serving_decode_flops


def spec_draft_kv_layers(spec_method_code: Value, model_mtp_layers: Value) -> Value:
    """KV layers the drafter adds to the pool: MTP its modules (each keeps its own KV cache:
    vLLM ``DeepSeekMTP`` layers have attention like the model's, TRT-LLM "each MTP module
    will have its own KV cache"), at least 1; 0 otherwise (a draft model's own KV pool is
    not modelled)."""
    return where(spec_method_code == MTP, maximum(model_mtp_layers, 1), 0)


def spec_kv_token_factor(spec_draft_kv_layers: Value, model_kv_layers: Value) -> Value:
    """Pool tokens a context token takes with the drafter's KV layers beside the model's:
    ``1 + draft KV layers / KV layers`` (DeepSeek-R1 with MTP: 1 + 1/61)."""
    return 1 + safe_div(spec_draft_kv_layers, model_kv_layers, 0.0)


def spec_draft_kv_s_per_step(spec_draft_tokens_effective: Value, spec_draft_kv_layers: Value,
                             model_kv_layers: Value, mean_decode_context_tokens: Value,
                             kv_bytes_per_token_per_gpu: Value,
                             gpu_bandwidth_bytes_per_s: Value,
                             bandwidth_efficiency_effective: Value) -> Value:
    """Memory seconds per sequence per step of the drafter's attention: each of the ``k``
    MTP passes reads the MTP layer's KV over the mean context,
    ``k * T * (KV bytes per token per GPU / KV layers) / (bandwidth * efficiency)``;
    0 without MTP."""
    per_layer = safe_div(kv_bytes_per_token_per_gpu, model_kv_layers, 0.0)
    return where(spec_draft_kv_layers > 0,
                 spec_draft_tokens_effective * mean_decode_context_tokens * per_layer
                 / (gpu_bandwidth_bytes_per_s * bandwidth_efficiency_effective), 0)


def spec_draft_weights_bytes_per_gpu(spec_method_code: Value, model_mtp_layers: Value,
                                     weights_bytes_per_gpu: Value, model_layers: Value,
                                     spec_draft_params: Value, weight_bits_effective: Value,
                                     tp: Value) -> Value:
    """Drafter weights one GPU holds beside the model's. MTP: its modules, each one mean
    layer's share of the model's weights per GPU (``weights / L``; the module shares the
    embedding and head). Draft model: its parameters at the weight dtype, split ``tp``
    ways. 0 without speculation."""
    mtp = maximum(model_mtp_layers, 1) * weights_bytes_per_gpu / model_layers
    draft = spec_draft_params * weight_bits_effective / 8 / tp
    return where(spec_method_code == MTP, mtp, where(spec_method_code == DRAFT, draft, 0))


def spec_draft_fixed_s(spec_method_code: Value, spec_draft_tokens_effective: Value,
                       serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                       model_layers: Value, model_lm_head_matmul_params: Value,
                       embedding_bits: Value, model_hidden_size: Value,
                       weight_bits_effective: Value, tp: Value, spec_draft_params: Value,
                       spec_draft_layers: Value, kernel_overhead_s_per_layer: Value,
                       model_layer_kernels: Value, gpu_bandwidth_bytes_per_s: Value,
                       bandwidth_efficiency_effective: Value) -> Value:
    """Per-step seconds of the drafter independent of the batch, ``k`` passes each reading
    the drafter's weights and launching its kernels. MTP: a mean layer's weights (all its
    experts: a decode batch touches most of them; ``(dense + experts) / L``), ``eh_proj``
    and the shared LM head, and one layer's kernels (``kernel_overhead_s_per_layer`` scaled
    by the model's kernels per layer). Draft model: its weights at the weight dtype over
    ``tp`` and its layers' kernels (dense layers). 0 without speculation."""
    bandwidth = gpu_bandwidth_bytes_per_s * bandwidth_efficiency_effective
    head = (model_lm_head_matmul_params * embedding_bits / 8
            + MTP_PROJECTION_PARAMS_PER_D2 * model_hidden_size * model_hidden_size
            * weight_bits_effective / 8) / tp / bandwidth
    mtp = ((serving_dense_weights_s + serving_expert_weights_s) / model_layers + head
           + kernel_overhead_s_per_layer * model_layer_kernels / DENSE_LAYER_KERNELS)
    draft = (spec_draft_params * weight_bits_effective / 8 / tp / bandwidth
             + spec_draft_layers * kernel_overhead_s_per_layer)
    per_pass = where(spec_method_code == MTP, mtp, where(spec_method_code == DRAFT, draft, 0))
    return spec_draft_tokens_effective * per_pass


DENSE_LAYER_KERNELS = 9
"""Kernels of the dense layer ``kernel_overhead_s_per_layer`` stands for
(:data:`planner.formulas.serving_step.DENSE_LAYER_KERNELS`, repeated here to keep the import
one way)."""


def per_output_token(step_s: Value, spec_acceptance_length_effective: Value) -> Value:
    """Time per output token from the time per decode step: ``step / a`` (the step itself
    without speculation: ``x / 1`` is ``x`` to the bit). A helper of
    :func:`planner.formulas.serving_cohort.tpot_mean_s`, not a column."""
    return step_s / spec_acceptance_length_effective


SPEC_DERIVED = (spec_method_code,)
"""Derived inputs (shown as inputs)."""
SPEC_COUNTS = (spec_draft_tokens_effective, spec_acceptance_length_effective,
               spec_verify_tokens, decode_steps_per_request, spec_draft_kv_layers)
"""Columns the serving load reads first (after the model figures and the inputs)."""
