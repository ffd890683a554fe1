"""The defined names every formula of the workbook reads its catalog figures through:
``GPU_<column>`` and ``Model_<column>`` ranges of the GPUs and Models sheets, matched by name
against ``GpuNames`` and ``ModelNames``, with the name's MATCH wildcards escaped. Its own module
because the scenario, calibration and summary writers all build these lookups.
"""

from __future__ import annotations

from openpyxl.utils import get_column_letter

from planner.io.xlsx.layout import (
    DECODE_GPU_FIGURE_SOURCE,
    DRAFT_FIGURE_SOURCE,
    GPU_FIGURE_SOURCE,
    GPU_SHEET,
    MODEL_FIGURES,
    MODEL_META,
)


class Ranges:
    """The lookup tables' columns as defined names, shared by every formula: ``GPU_<column>``
    (a column of the GPUs sheet), ``Model_<column>`` (of the Models sheet), matched by name
    against ``GpuNames`` and ``ModelNames``. A catalog lookup then reads
    ``INDEX(GPU_price_usd_per_hour,MATCH(E2,GpuNames,0))``: what it fetches, in words, with
    the name's wildcards escaped (:func:`literal`), so a name is matched as written."""

    def __init__(self, models: int, gpus: int) -> None:
        self.model_last = models + 1
        self.gpu_last = gpus + 1
        self.gpu_letters = {key: get_column_letter(i) for i, (key, *_rest) in
                            enumerate(GPU_SHEET, 1)}
        self.model_letters = {key: get_column_letter(i) for i, key in
                              enumerate((*MODEL_META, *MODEL_FIGURES), 1)}

    def names(self) -> dict[str, str]:
        """Every defined name → the absolute range it stands for."""
        out = {f"GPU_{key}": f"GPUs!${c}$2:${c}${max(self.gpu_last, 2)}"
               for key, c in self.gpu_letters.items() if key != "name"}
        out.update({f"Model_{key}": f"Models!${c}$2:${c}${max(self.model_last, 2)}"
                    for key, c in self.model_letters.items() if key != "name"})
        out["ModelNames"] = f"Models!$A$2:$A${max(self.model_last, 2)}"
        out["GpuNames"] = f"GPUs!$A$2:$A${max(self.gpu_last, 2)}"
        return out

    def model(self, key: str, name_cell: str) -> str:
        return f"INDEX(Model_{key},MATCH({literal(name_cell)},ModelNames,0))"

    def gpu(self, key: str, name_cell: str) -> str:
        return f"INDEX(GPU_{key},MATCH({literal(name_cell)},GpuNames,0))"


def literal(cell: str) -> str:
    """The text of ``cell`` as a MATCH lookup value that matches itself only: MATCH(…, 0)
    reads ``*``, ``?`` and ``~`` as wildcards, so a GPU named ``h*`` would fetch the first GPU
    starting with h; each is escaped with ``~`` (``~`` first). Issue 28."""
    return f'SUBSTITUTE(SUBSTITUTE(SUBSTITUTE({cell},"~","~~"),"*","~*"),"?","~?")'


def catalog_formula(key: str, name_cell: dict[str, str], ranges: Ranges) -> str:
    """The INDEX/MATCH formula fetching a model or GPU figure from its catalog sheet; a draft
    model's figure (``spec_draft_*``) from the Models sheet row ``spec_draft_model`` names
    (0 where it is blank, as :func:`planner.compute.draft.add_draft_columns` gives)."""
    if key in DRAFT_FIGURE_SOURCE:
        cell = name_cell["spec_draft_model"]
        total = "+".join(ranges.model(k, cell) for k in DRAFT_FIGURE_SOURCE[key])
        return f'=IF({cell}="",0,{total})'
    if key in MODEL_FIGURES:
        return "=" + ranges.model(key, name_cell["model"])
    if key == "decode_gpu_same" or key in DECODE_GPU_FIGURE_SOURCE:
        # the decode pool's GPU (issue 25): the row's decode_gpu, or its gpu for "same"
        decode, gpu = name_cell["decode_gpu"], name_cell["gpu"]
        if key == "decode_gpu_same":
            return f'=IF(OR({decode}="same",{decode}={gpu}),1,0)'
        return "=" + ranges.gpu(DECODE_GPU_FIGURE_SOURCE[key],
                                f'IF({decode}="same",{gpu},{decode})')
    return "=" + ranges.gpu(GPU_FIGURE_SOURCE[key], name_cell["gpu"])
