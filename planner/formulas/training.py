"""Training and fine-tuning: compute, time, GPU-hours, cost, memory per GPU, token budgets.

* Compute: ``6*N*D`` with ``N`` the matmul weights every token uses (active weights for MoE, LM
  head included) and ``D`` tokens (docs/formulas.md; GPT-3 175B on 300B tokens: 3.15e23 FLOPs;
  the ``6*(2P)*D`` of "LLM compute explained" doubles it and is not used). Optional attention-core
  term: 3x the forward attention FLOPs per token (forward + backward). LoRA: the frozen base still
  runs forward (2N) and back-propagates activations (2N) but computes no weight gradients, so
  ``4*N*D`` plus ``6*P_lora*D`` for the adapters.
* Model state per GPU for mixed-precision Adam, 16 B/param (bf16 weights 2 + bf16 grads 2 + fp32
  master 4 + Adam m 4 + v 4), over ``p`` data-parallel ranks: ZeRO-0 ``16N``, ZeRO-1 ``4N+12N/p``,
  ZeRO-2 ``2N+14N/p``, ZeRO-3 ``16N/p`` (docs/formulas.md); ``N``: parameters of a tp x pp shard.
  LoRA/QLoRA: the frozen base at its weight dtype (int4 for QLoRA) plus 16 B per adapter parameter.
* Activations per layer for a micro-batch of ``b`` sequences of ``s`` tokens, 16-bit, after
  Korthikanti et al. 2022 ("Reducing Activation Recomputation", eq. 2): ``s*b*d*(34 + 5*a*s/d)``
  bytes without recomputation, ``2*s*b*d`` with full recomputation; divided by ``tp`` (tensor and
  sequence parallel) and spread over ``pp`` stages. Derived for a 4d MLP: an estimate.
* LoRA trainable parameters: ``r * sum(d_in + d_out)`` over the targeted modules (K/V rectangular
  under GQA): r=8 on Q and V of every Llama-2-7B layer → 4,194,304.
"""

from __future__ import annotations

from planner.core.units import SECONDS_PER_HOUR
from planner.formulas.flops import causal_pairs, causal_pairs_windowed
from planner.formulas.ops import Value, floor, safe_div, where

ADAM_MIXED_BYTES_PER_PARAM = 16
"""bf16 weights 2 + bf16 grads 2 + fp32 master 4 + Adam m 4 + Adam v 4 (docs/formulas.md)."""


def train_matmul_params(matmul_params_per_token: Value,
                        model_lm_head_matmul_params: Value) -> Value:
    """``N`` of ``6ND``: matmul weights every token uses, LM head included."""
    return matmul_params_per_token + model_lm_head_matmul_params


def lora_trainable_params(lora_rank: Value, model_lora_dims: Value) -> Value:
    """LoRA adapter parameters: ``r * sum(d_in + d_out)`` over targeted modules."""
    return lora_rank * model_lora_dims


def trainable_params(lora_rank: Value, lora_trainable_params: Value,
                     model_params_total: Value) -> Value:
    """Parameters receiving gradients: the adapters under LoRA, else every parameter."""
    return where(lora_rank > 0, lora_trainable_params, model_params_total)


def train_attention_flops_per_token(train_seq_len: Value, model_attn_flops_per_pair_full: Value,
                                    model_attn_flops_per_pair_window: Value,
                                    model_sliding_window_tokens: Value) -> Value:
    """Forward + backward attention-core FLOPs per training token (causal pairs, 3x forward)."""
    pairs_full = causal_pairs(train_seq_len)
    pairs_window = causal_pairs_windowed(train_seq_len, model_sliding_window_tokens)
    forward = (model_attn_flops_per_pair_full * pairs_full
               + model_attn_flops_per_pair_window * pairs_window) / train_seq_len
    return 3 * forward


def train_flops_per_token(train_matmul_params: Value, lora_rank: Value,
                          lora_trainable_params: Value, include_attention_flops_number: Value,
                          train_attention_flops_per_token: Value) -> Value:
    """``6N`` (full training) or ``4N + 6*P_lora`` (LoRA), plus the attention term if asked."""
    dense = where(lora_rank > 0, 4 * train_matmul_params + 6 * lora_trainable_params,
                  6 * train_matmul_params)
    return dense + where(include_attention_flops_number > 0, train_attention_flops_per_token, 0)


def train_flops(train_flops_per_token: Value, train_tokens: Value) -> Value:
    """Training compute: ``flops_per_token * D`` (``6*N*D`` by default)."""
    return train_flops_per_token * train_tokens


def train_time_s(train_flops: Value, gpus: Value, gpu_flops_per_s: Value, mfu: Value) -> Value:
    """Wall time on ``gpus`` GPUs at MFU: ``flops / (gpus * peak * MFU)``."""
    return train_flops / (gpus * gpu_flops_per_s * mfu)


def gpu_hours(gpus: Value, train_time_s: Value) -> Value:
    """``gpus * train_time_s / 3600``."""
    return gpus * train_time_s / SECONDS_PER_HOUR


def train_cost_usd(gpu_hours: Value, price_usd_per_gpu_hour: Value) -> Value:
    """``gpu_hours * price_usd_per_gpu_hour``."""
    return gpu_hours * price_usd_per_gpu_hour


def data_parallel(gpus: Value, tp: Value, pp: Value) -> Value:
    """Data-parallel ranks: ``floor(gpus / (tp*pp))``."""
    return floor(gpus / (tp * pp))


def zero_state_bytes(params: Value, dp: Value, zero_stage: Value) -> Value:
    """Mixed-precision Adam state of ``params`` over ``dp`` ranks at a ZeRO stage."""
    n = params
    return where(zero_stage <= 0, 16 * n,
                 where(zero_stage == 1, 4 * n + 12 * n / dp,
                       where(zero_stage == 2, 2 * n + 14 * n / dp, 16 * n / dp)))


def model_state_bytes_per_gpu(model_params_total: Value, tp: Value, pp: Value,
                              data_parallel: Value, zero_stage: Value, lora_rank: Value,
                              lora_trainable_params: Value,
                              weights_bytes_per_gpu: Value) -> Value:
    """Weights, gradients and optimizer state on one GPU (see module docstring)."""
    shard = model_params_total / (tp * pp)
    full = zero_state_bytes(shard, data_parallel, zero_stage)
    lora = (weights_bytes_per_gpu
            + ADAM_MIXED_BYTES_PER_PARAM * lora_trainable_params / (tp * pp))
    return where(lora_rank > 0, lora, full)


def activation_bytes_per_gpu(train_seq_len: Value, micro_batch_size: Value,
                             model_hidden_size: Value, model_attention_heads: Value,
                             model_layers: Value, activation_recompute_number: Value, tp: Value,
                             pp: Value) -> Value:
    """Activations kept for the backward pass on one GPU (Korthikanti et al. 2022)."""
    sbd = train_seq_len * micro_batch_size * model_hidden_size
    per_layer = where(activation_recompute_number > 0, 2 * sbd,
                      sbd * (34 + 5 * model_attention_heads * train_seq_len / model_hidden_size))
    return per_layer * model_layers / (tp * pp)


def train_memory_bytes_per_gpu(model_state_bytes_per_gpu: Value,
                               activation_bytes_per_gpu: Value) -> Value:
    """Model state plus activations on one GPU (communication buffers not included)."""
    return model_state_bytes_per_gpu + activation_bytes_per_gpu


def train_fits(train_memory_bytes_per_gpu: Value, gpu_memory_bytes: Value) -> Value:
    """Whether training memory fits on each GPU."""
    return train_memory_bytes_per_gpu <= gpu_memory_bytes


def tokens_for_gpu_hours(budget_gpu_hours: Value, gpu_flops_per_s: Value, mfu: Value,
                         train_flops_per_token: Value) -> Value:
    """Training tokens a GPU-hour budget buys: ``hours * 3600 * peak * MFU / flops_per_token``."""
    return safe_div(budget_gpu_hours * SECONDS_PER_HOUR * gpu_flops_per_s * mfu,
                    train_flops_per_token, 0.0)


def tokens_for_usd(budget_usd: Value, price_usd_per_gpu_hour: Value, gpu_flops_per_s: Value,
                   mfu: Value, train_flops_per_token: Value) -> Value:
    """Training tokens a USD budget buys at the GPU's hourly price."""
    hours = safe_div(budget_usd, price_usd_per_gpu_hour, 0.0)
    return tokens_for_gpu_hours(hours, gpu_flops_per_s, mfu, train_flops_per_token)
