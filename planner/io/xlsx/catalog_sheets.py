"""The catalog sheets of the workbook: Models (config fields, parameter counts and the figures
scenarios look up), GPUs (editable datasheet figures and the base-unit columns computed from
them) and Lists (dtype → bits). Scenario rows fetch these figures by name with INDEX/MATCH
(:mod:`planner.io.xlsx.lookups`), so editing a GPU's price here flows into every scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.utils import get_column_letter

from planner.core.units import DTYPE_BITS
from planner.io.xlsx.layout import (
    GPU_SHEET,
    MODEL_FIGURES,
    MODEL_META,
    gpu_sheet_record,
)
from planner.io.xlsx.style import (
    header_cell,
    print_setup,
    write_text,
)
from planner.spec.domain import GpuInfo, ModelInfo
from planner.spec.figures import model_figures


def write_models(ws: Any, models: Sequence[ModelInfo]) -> None:
    """One row per model: config fields, parameter counts, and the figures scenarios use."""
    for j, key in enumerate((*MODEL_META, *MODEL_FIGURES), 1):
        header_cell(ws, 1, j, key, "meta" if key in MODEL_META else "lookup")
    for i, m in enumerate(models, 2):
        attn = m.spec.attention
        meta = {"name": m.name, "model_type": m.model_type, "source": m.source,
                "hidden_size": m.spec.hidden_size, "layers": m.spec.num_layers,
                "attention_heads": attn.num_heads, "kv_heads": attn.kv_cache_heads,
                "head_dim": attn.head_dim, "vocab_size": m.spec.vocab_size,
                "params_total": m.params_total, "params_active": m.params_active}
        figures = model_figures(m.spec).as_dict()
        for j, key in enumerate((*MODEL_META, *MODEL_FIGURES), 1):
            cell = ws.cell(row=i, column=j)
            write_text(cell, meta[key] if key in meta else figures[key])
            if isinstance(cell.value, int) and not isinstance(cell.value, bool):
                cell.number_format = "#,##0"
    ws.freeze_panes = "B2"
    for j in range(1, len(MODEL_META) + len(MODEL_FIGURES) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 16
    print_setup(ws, f"A1:{get_column_letter(len(MODEL_META) + len(MODEL_FIGURES))}"
                f"{len(models) + 1}", "$1:$1")


def write_gpus(ws: Any, gpus: Sequence[GpuInfo]) -> dict[str, Any]:
    """One row per GPU: editable datasheet figures (GiB, TFLOP/s, GB/s, USD) and the base-unit
    columns scenarios look up, computed from them; returns each formula cell's value
    (``{column}*factor`` of the figure it reads; an empty figure reads as 0)."""
    out: dict[str, Any] = {}
    letter = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
    for j, (_key, header, kind, _fmt) in enumerate(GPU_SHEET, 1):
        header_cell(ws, 1, j, header, "input" if kind == "value" else "lookup")
    for i, g in enumerate(gpus, 2):
        out.update(_gpu_row(ws, i, gpu_sheet_record(g.spec, g.version), letter))
    ws.freeze_panes = "B2"
    for j in range(1, len(GPU_SHEET) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 18
    print_setup(ws, f"A1:{get_column_letter(len(GPU_SHEET))}{len(gpus) + 1}", "$1:$1")
    return out


def _gpu_row(ws: Any, i: int, record: dict[str, Any], letter: dict[str, str]
             ) -> dict[str, Any]:
    """Row ``i`` of the GPUs sheet from a GPU's ``record``: its figures as values (an empty
    one blank, but for the texts), its base-unit columns as formulas; returns each formula
    cell's value by its reference."""
    out: dict[str, Any] = {}
    for j, (key, _header_text, kind, fmt) in enumerate(GPU_SHEET, 1):
        cell = ws.cell(row=i, column=j)
        if kind == "value":
            value = record.get(key)
            write_text(cell, value if value not in (None, "") or key in ("vendor", "label",
                                                                          "source") else None)
        else:
            out[cell.coordinate] = _base_unit_cell(cell, kind, i, letter, record)
        if fmt:
            cell.number_format = fmt
    return out


def _base_unit_cell(cell: Any, template: str, row: int, letter: dict[str, str],
                    record: dict[str, Any]) -> float:
    """A GPU row's base-unit column: ``template`` (``={column}*factor``) as the cell's
    formula on ``row``; returns its value, the figure it reads (empty: 0) times the factor."""
    cell.value = template.format(**{k: f"{v}{row}" for k, v in letter.items()})
    source, factor = template.removeprefix("={").split("}*")
    return float(record.get(source) or 0) * float(factor)


def write_lists(ws: Any) -> None:
    """Lookup tables: dtype → bits."""
    header_cell(ws, 1, 1, "dtype", "meta")
    header_cell(ws, 1, 2, "bits", "meta")
    for i, (name, bits) in enumerate(DTYPE_BITS.items(), 2):
        ws.cell(row=i, column=1, value=name)
        ws.cell(row=i, column=2, value=bits)
    print_setup(ws, f"A1:B{len(DTYPE_BITS) + 1}", "$1:$1")
