"""The draft model of ``spec_method = draft`` as formula columns.

Why a module of its own: every other model figure comes from the scenario's own model; a
speculative draft model (``spec_draft_model``, a catalog model name) brings three more
figures (``spec_draft_params``, ``spec_draft_active_params``, ``spec_draft_layers``) that
:mod:`planner.formulas.speculative` reads. Every path that builds a scenario's columns
(one row, a table) adds them here, and checks the cross-field rules of the speculative
inputs (a draft model for ``draft``; an acceptance length between 1 and ``k + 1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.core.errors import ValidationError
from planner.formulas.ops import Coded
from planner.formulas.speculative import DEFAULT_DRAFT_TOKENS, SPEC_METHODS
from planner.spec.architecture import ModelSpec
from planner.spec.figures import model_figures

DRAFT_FIGURES: tuple[str, ...] = ("spec_draft_params", "spec_draft_active_params",
                                  "spec_draft_layers")
"""The draft model's figure columns (0 where no draft model is named)."""

_NONE = dict.fromkeys(DRAFT_FIGURES, 0.0)


def draft_figures(spec: ModelSpec) -> dict[str, float]:
    """A draft model's figures: all its parameters (the weights it holds), the parameters
    one token runs through (layer matmuls, the active experts, the LM head: ``2 *`` this is a
    draft token's FLOPs) and its layers (for the kernel launches of a pass)."""
    f = model_figures(spec)
    active = (f.model_matmul_dense_params + f.model_matmul_experts_active_params
              + f.model_lm_head_matmul_params)
    return {"spec_draft_params": float(f.model_params_total),
            "spec_draft_active_params": float(active),
            "spec_draft_layers": float(f.model_layers)}


def _resolve(name: str, models: Mapping[str, ModelSpec] | None) -> ModelSpec:
    """The draft model named ``name``: from ``models`` (case-insensitive), else the catalog."""
    if models:
        lower = {k.lower(): v for k, v in models.items()}
        hit = lower.get(name.strip().lower())
        if hit is not None:
            return hit
    # lazy: the catalog's config reader, only for a draft model the caller's models lack
    from planner.spec.catalog import resolve_model_spec

    return resolve_model_spec(name)


def _texts(values: Any, n: int) -> list[str]:
    """A choice or text column as one text per row."""
    if isinstance(values, Coded):
        return [values.levels[int(c)] for c in values.codes]
    if isinstance(values, str):
        return [values] * n
    if hasattr(values, "tolist"):
        out = values.tolist()
        return [str(v) for v in (out if isinstance(out, list) else [out] * n)]
    return [str(values)] * n


def _numbers(values: Any, n: int) -> list[float]:
    if hasattr(values, "tolist"):
        out = values.tolist()
        return [float(v) for v in (out if isinstance(out, list) else [out] * n)]
    return [float(values)] * n


def check_speculation(method: str, draft_model: str, draft_tokens: float,
                      acceptance_length: float, mtp_layers: int) -> None:
    """The cross-field rules of one row's speculative inputs: ``spec_draft_model`` named
    exactly when ``spec_method`` is draft; ``spec_acceptance_length`` 0 or from 1 to ``k +
    1`` (a verify step yields at least its bonus token and at most every draft plus it).
    :class:`ValidationError` naming the field otherwise."""
    if method == "draft" and not draft_model.strip():
        raise ValidationError("spec_draft_model", "a catalog model name when spec_method is "
                              "draft", value=draft_model)
    if method != "draft" and draft_model.strip():
        raise ValidationError("spec_draft_model", "blank unless spec_method is draft",
                              value=draft_model)
    if method == "none" or acceptance_length == 0:
        return
    k = draft_tokens if draft_tokens > 0 else (
        max(mtp_layers, DEFAULT_DRAFT_TOKENS[SPEC_METHODS["mtp"]]) if method == "mtp"
        else DEFAULT_DRAFT_TOKENS[SPEC_METHODS["draft"]])
    if not 1 <= acceptance_length <= k + 1:
        raise ValidationError("spec_acceptance_length",
                              f"a number from 1 to {k + 1:g} (k + 1 with k = {k:g} draft "
                              f"tokens), or 0 for the method's typical value",
                              value=acceptance_length)


def add_draft_columns(cols: dict[str, Any], n: int,
                      models: Mapping[str, ModelSpec] | None = None) -> None:
    """Check the speculative inputs of ``cols`` (validated inputs and model figures of ``n``
    rows) and add the draft figures: scalars for one value in every row, arrays otherwise.
    Each distinct draft model is resolved once."""
    import numpy as np

    method = cols.get("spec_method", "none")
    draft = cols.get("spec_draft_model", "")
    if isinstance(method, str) and isinstance(draft, str) and method == "none" and not draft:
        cols.update(_NONE)
        return
    methods, drafts = _texts(method, n), _texts(draft, n)
    tokens = _numbers(cols.get("spec_draft_tokens", 0), n)
    accept = _numbers(cols.get("spec_acceptance_length", 0.0), n)
    mtp = _numbers(cols.get("model_mtp_layers", 0), n)
    figures: dict[str, dict[str, float]] = {}
    rows = []
    for i in range(n):
        check_speculation(methods[i], drafts[i], tokens[i], accept[i], int(mtp[i]))
        name = drafts[i].strip() if methods[i] == "draft" else ""
        if name and name not in figures:
            figures[name] = draft_figures(_resolve(name, models))
        rows.append(figures.get(name, _NONE))
    for column in DRAFT_FIGURES:
        values = [r[column] for r in rows]
        cols[column] = values[0] if n == 1 and np.ndim(cols.get("tp", 0)) == 0 \
            else np.asarray(values, dtype=float)
