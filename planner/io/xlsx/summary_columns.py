"""The Summary's columns: each a formula over a scenario's row of the Scenarios sheet and the
same figure in Python, so the Summary's cells carry the planner's values; and the figures the
Summary gathers from the scenario sheets as they stream (:class:`Gather`). Its own module so
that the Summary's layout (:mod:`planner.io.xlsx.summary`) reads as a page, and the
definitions of its figures read as a list.

Units: USD, USD/h, USD/month, USD per million output tokens, tokens/s, ms, GiB = 2^30 B per
GPU; the constants are defined names of the workbook (:data:`CONSTANTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from string import Formatter
from typing import Any, ClassVar

import numpy as np

from planner.compute.table import inputs_of
from planner.spec.domain import Scenario

CHUNK_ROWS = 2000
"""Summary rows rendered at a time (as the scenario sheets stream theirs)."""
YES_NO = '"yes";"yes";"no"'
"""Number format showing a flag (TRUE = 1, FALSE = 0) as yes or no."""
CONSTANTS = {"BytesPerGiB": 1073741824, "MsPerSecond": 1000, "SecondsPerDay": 86400,
             "SecondsPerHour": 3600, "TokensPerMillion": 1000000}
"""Constants the Summary's formulas use by name (defined names of the workbook)."""
CHART_ROWS = 40
"""Most scenarios a Summary chart shows (the first ones; the tables list every one)."""
USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.00'
COUNTED, NOT_COUNTED = "yes", "no: option"
"""What the "counted" column shows for a scenario counted in totals, and for an option that is
not its group's chosen one."""

Compute = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def _flag(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=bool)


def _num(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=float)


def _text(values: np.ndarray) -> np.ndarray:
    """Text results as Python strings (what the fast writer writes as cached text)."""
    return values.astype(object)


def _meets(v: Mapping[str, np.ndarray]) -> np.ndarray:
    asked = _num(v["target_requests_per_s"]) + _num(v["slo_ttft_s"]) + _num(v["slo_tpot_s"])
    return _text(np.where(asked > 0, np.where(_flag(v["meets_slo"]), "yes", "no"),
                          "no target"))


def _cost_at_load(v: Mapping[str, np.ndarray]) -> np.ndarray:
    out = _num(v["output_tokens_per_s"])
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = (_num(v["cost_usd_per_hour"]) * CONSTANTS["TokensPerMillion"]
                / (CONSTANTS["SecondsPerHour"] * out))
    if bool((out > 0).all()):
        return cost
    return np.where(out > 0, cost.astype(object), "n/a")


def _gpu_types(v: Mapping[str, np.ndarray]) -> np.ndarray:
    """The GPU type, ``prefill + decode`` where a disaggregated deployment's decode pool runs
    on another type."""
    two = (_num(v["serving_mode_code"]) == 1) & (_num(v["decode_gpu_same"]) == 0)
    gpu, decode = np.asarray(v["gpu"], dtype=object), np.asarray(v["decode_gpu"], dtype=object)
    return _text(np.where(two, gpu + " + " + decode, gpu))


def _basis(v: Mapping[str, np.ndarray]) -> np.ndarray:
    mode = _num(v["load_mode"])
    clients = [f"{int(c)} clients" for c in _num(v["concurrency"])]
    target = np.where(_flag(v["overloaded"]), "target rate, saturated", "target rate")
    return _text(np.where(mode == 1, target, np.where(mode == 2, np.array(clients, dtype=object)
                                                        if clients else "", "offline maximum")))


@dataclass(frozen=True, slots=True)
class SummaryColumn:
    """A column of the Summary's scenario table: an Excel formula over the scenario's row of
    the Scenarios sheet (``{column}`` stands for that column's cell) and the same figure in
    Python (``compute`` over the gathered columns it reads)."""

    header: str
    unit: str
    template: str
    compute: Compute | None
    """None: the Scenarios cell itself (a number or flag as gathered)."""
    number_format: str | None = None
    explain: str | None = None
    """The header's note; None: the explain text of the column the template names first."""
    text: bool = False
    """A text result (centred in its cell)."""

    @property
    def reads(self) -> tuple[str, ...]:
        """The Scenarios columns the formula reads, in order (constants are defined names)."""
        return tuple(dict.fromkeys(name for _t, name, _s, _c in Formatter().parse(self.template)
                                   if name))


def _ms(key: str) -> Compute:
    return lambda v: _num(v[key]) * CONSTANTS["MsPerSecond"]


def _gib(v: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    return _num(v[key]) / CONSTANTS["BytesPerGiB"]


SCENARIO_COLUMNS = (
    SummaryColumn("counted", "in totals", f'IF({{chosen}},"{COUNTED}","{NOT_COUNTED}")',
                  lambda v: _text(np.where(_flag(v["chosen"]), COUNTED, NOT_COUNTED)),
                  explain="Counted in the totals: yes, or 'no: option' for an option of a "
                  "group that is not its chosen one (listed for comparison, greyed, never "
                  "added). = IF(chosen, \"yes\", \"no: option\")", text=True),
    SummaryColumn("GPU", "", '{gpu}&IF(AND({serving_mode_code}=1,{decode_gpu_same}=0),'
                  '" + "&{decode_gpu},"")', _gpu_types,
                  explain="The GPU type; a disaggregated deployment whose decode pool runs on "
                  "another type shows both, prefill + decode (decode_gpu).", text=True),
    SummaryColumn("GPUs", "count", "{deployment_gpus}", None, "#,##0"),
    SummaryColumn("fits", "yes/no", "{fits}", None, YES_NO),
    SummaryColumn("target rate", "requests/s", "{target_requests_per_s}", None, "#,##0.00"),
    SummaryColumn("meets target", "SLO at load",
                  'IF({target_requests_per_s}+{slo_ttft_s}+{slo_tpot_s}>0,'
                  'IF({meets_slo},"yes","no"),"no target")', _meets,
                  explain="Meets its target: the serving model's meets_slo at the target rate "
                  "(TTFT at the SLO percentile and mean TPOT within the objectives, not "
                  "saturated, the engine starts); 'no target' when neither a rate nor an "
                  "objective is set.", text=True),
    SummaryColumn("cost", "USD/h", "{cost_usd_per_hour}", None, USD_CENTS),
    SummaryColumn("cost", "USD/month", "{cost_usd_per_month}", None, USD),
    SummaryColumn("cost at load", "USD/M output tokens",
                  'IF({output_tokens_per_s}>0,{cost_usd_per_hour}*TokensPerMillion/'
                  '(SecondsPerHour*{output_tokens_per_s}),"n/a")', _cost_at_load, '"$"#,##0.000',
                  explain="Cost per million output tokens at the modelled load: "
                  "cost_usd_per_hour × 10^6 / (3600 × output_tokens_per_s), every GPU-hour "
                  "billed to the output tokens the deployment delivers at the load its 'basis' "
                  "names (not at batch 1 on an idle server)."),
    SummaryColumn("basis", "load modelled",
                  'IF({load_mode}=1,IF({overloaded},"target rate, saturated","target rate"),'
                  'IF({load_mode}=2,{concurrency}&" clients","offline maximum"))', _basis,
                  explain="The load the figures at load are computed at: the target request "
                  "rate (saturated: the deployment serves less than offered), a number of "
                  "clients (concurrency), or, with neither, the engine's offline maximum.",
                  text=True),
    SummaryColumn("output", "tokens/s at load", "{output_tokens_per_s}", None, "#,##0"),
    SummaryColumn("TTFT", "ms at load, SLO pct.", "{ttft_slo_percentile_s}*MsPerSecond",
                  _ms("ttft_slo_percentile_s"), "#,##0.0"),
    SummaryColumn("TPOT", "ms at load, mean", "{tpot_mean_s}*MsPerSecond", _ms("tpot_mean_s"),
                  "#,##0.0"),
    SummaryColumn("weights", "GiB/GPU", "{weights_bytes_per_gpu}/BytesPerGiB",
                  lambda v: _gib(v, "weights_bytes_per_gpu"), "0.00"),
    SummaryColumn("KV in use", "GiB/GPU",
                  "MIN({kv_in_use_bytes_per_gpu},MAX({kv_budget_bytes},0))/BytesPerGiB",
                  lambda v: np.minimum(_num(v["kv_in_use_bytes_per_gpu"]),
                                       np.maximum(_num(v["kv_budget_bytes"]), 0))
                  / CONSTANTS["BytesPerGiB"], "0.00"),
    SummaryColumn("headroom", "GiB/GPU", "MAX({kv_headroom_bytes},0)/BytesPerGiB",
                  lambda v: np.maximum(_num(v["kv_headroom_bytes"]), 0)
                  / CONSTANTS["BytesPerGiB"], "0.00"),
    SummaryColumn("reserve", "GiB/GPU", "{reserve_bytes_per_gpu}/BytesPerGiB",
                  lambda v: _gib(v, "reserve_bytes_per_gpu"), "0.00"),
)
"""Columns of the Summary's scenario table (after the scenario name)."""
MEMORY_HEADERS = ("weights", "KV in use", "headroom", "reserve")
"""The scenario columns the memory chart stacks."""
SUMMARY_WIDTH = len(SCENARIO_COLUMNS) + 1
TRAINING_KEYS = (
    # header, unit, Training column, number format, formula over {c} (that column's cell)
    ("GPU", "", "gpu", None, "{c}"),
    ("GPUs", "count", "gpus", "#,##0", "{c}"),
    ("fits", "yes/no", "train_fits", YES_NO, "{c}"),
    ("tokens", "tokens", "train_tokens", "#,##0", "{c}"),
    ("GPU-hours", "GPU-h", "gpu_hours", "#,##0", "{c}"),
    ("time", "days", "train_time_s", "#,##0.0", "{c}/SecondsPerDay"),
    ("training cost", "USD", "train_cost_usd", USD, "{c}"),
)
"""Columns of the Summary's training table (after the run's name)."""


def column_index(header: str, unit: str | None = None) -> int:
    """Sheet column number of a scenario-table column (the name is column 1)."""
    return next(j for j, c in enumerate(SCENARIO_COLUMNS, 2)
                if c.header == header and (unit is None or c.unit == unit))


POOL_KEYS = ("serving_mode_code", "prefill_gpus", "decode_gpus", "decode_gpu",
             "decode_gpu_same", "price_usd_per_gpu_hour", "decode_gpu_price_usd_per_gpu_hour",
             "hours_per_month")
"""The Scenarios columns the GPU table reads to count and price a disaggregated deployment's
two pools each on its own GPU type (issue 25)."""


class Gather:
    """The figures the Summary shows, gathered from the scenario sheets' evaluated chunks as
    they stream (a few columns of every row, not whole rows)."""

    KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "inference": ("fits", "gpus", "cost_usd_per_hour", "cost_usd_per_month",
                      "output_tokens_per_s", *POOL_KEYS,
                      *(k for c in SCENARIO_COLUMNS for k in c.reads
                        if k not in ("gpu", "chosen"))),
        "training": ("gpus", "train_cost_usd", "gpu_hours",
                     *(k for _h, _u, k, _f, _t in TRAINING_KEYS if k != "gpu"))}

    def __init__(self, kind: str, scenarios: Sequence[Scenario]) -> None:
        self.kind = kind
        self.meta = [(sc.fleet, sc.name, sc.gpu) for sc in scenarios]
        self.chosen = [bool(sc.chosen) for sc in scenarios]
        """Counted in totals (:func:`planner.service.compare.counted`: the chosen option of a
        group)."""
        self.columns: dict[str, list[Any]] = {k: [] for k in dict.fromkeys(self.KEYS[kind])}
        self.columns["chosen"] = list(self.chosen)
        self._inputs = {c.name for c in inputs_of(kind)}

    def add(self, chunk: Sequence[Scenario], values: dict[str, Any]) -> None:
        """Keep the Summary's figures of one evaluated chunk (chunks come in row order)."""
        for key, out in self.columns.items():
            if key == "chosen":
                continue
            got = values.get(key)
            if got is None and key in self._inputs:
                got = [sc.inputs[key] for sc in chunk]
            out.extend(np.asarray(got).tolist() if got is not None else [None] * len(chunk))

    def value(self, key: str, i: int) -> Any:
        """Row ``i``'s ``key`` (None if it could not be evaluated, or not yet)."""
        column = self.columns[key]
        return column[i] if i < len(column) else None

    def total(self, key: str, rows: Sequence[int]) -> float:
        """Sum of ``key`` over ``rows`` (unevaluated rows count 0)."""
        return float(sum(self.value(key, i) or 0 for i in rows))

    def disaggregated(self, i: int) -> bool:
        """Row ``i`` is a disaggregated deployment (``serving_mode_code`` 1)."""
        return self.value("serving_mode_code", i) == 1

    def decode_gpu_of(self, i: int) -> str:
        """The GPU type of row ``i``'s decode pool (its own GPU where ``decode_gpu`` is
        ``same``)."""
        same = self.value("decode_gpu_same", i) == 1
        return self.meta[i][2] if same else str(self.value("decode_gpu", i))

    def pool_gpus_on(self, gpu: str, rows: Sequence[int]) -> tuple[float, float]:
        """(GPUs, USD/month) of the disaggregated pools among ``rows`` that run on ``gpu``: a
        prefill pool on its row's GPU, a decode pool on its decode GPU, each at its GPU's
        price × the row's hours per month."""
        gpus = cost = 0.0
        for i in rows:
            if not self.disaggregated(i):
                continue
            hours = float(self.value("hours_per_month", i) or 0)
            if self.meta[i][2] == gpu:
                held = float(self.value("prefill_gpus", i) or 0)
                gpus += held
                cost += held * float(self.value("price_usd_per_gpu_hour", i) or 0) * hours
            if self.decode_gpu_of(i) == gpu:
                held = float(self.value("decode_gpus", i) or 0)
                gpus += held
                cost += held * float(self.value("decode_gpu_price_usd_per_gpu_hour", i)
                                     or 0) * hours
        return gpus, cost

    def counted(self, fleet: str | None = None) -> list[int]:
        """Rows counted in totals (chosen), of ``fleet`` or of every fleet."""
        return [i for i, (f, _n, _g) in enumerate(self.meta)
                if self.chosen[i] and (fleet is None or f == fleet)]



class Cells(dict[str, str]):
    """``{column}`` of a Summary template → that column's cell on the Scenarios sheet (row 2,
    shifted per row by the shared formula)."""

    def __init__(self, col: dict[str, str]) -> None:
        super().__init__()
        self.col = col

    def __missing__(self, key: str) -> str:
        return f"Scenarios!{self.col[key]}2"


def _gathered(gather: Gather, reads: tuple[str, ...], lo: int,
              hi: int) -> tuple[dict[str, list[Any]], np.ndarray]:
    """The gathered figures a column reads over rows ``lo:hi`` (padded with ``None`` to the
    rows asked for), and per row whether any of them is ``None`` (not evaluated)."""
    n = hi - lo
    raw: dict[str, list[Any]] = {}
    bad = np.zeros(n, dtype=bool)
    for key in reads:
        got = ([gpu for _f, _n, gpu in gather.meta[lo:hi]] if key == "gpu"
               else gather.columns[key][lo:hi])
        got = got + [None] * (n - len(got))
        if None in got:
            bad |= np.fromiter((v is None for v in got), dtype=bool, count=n)
        raw[key] = got
    return raw, bad


def column_values(gather: Gather, column: SummaryColumn, lo: int, hi: int) -> np.ndarray:
    """The values Python computes for rows ``lo:hi`` of a Summary scenario column (its
    formula over the gathered Scenarios figures), as one array; a row whose figures could not
    be evaluated gets None."""
    if column.reads == ("gpu",):
        return np.array([gpu for _f, _n, gpu in gather.meta[lo:hi]], dtype=object)
    n = hi - lo
    raw, bad = _gathered(gather, column.reads, lo, hi)
    if bad.all():
        return np.full(n, None, dtype=object)
    if bad.any():
        raw = {k: [0 if v is None else v for v in got] for k, got in raw.items()}
    out = _computed(column, raw)
    if bad.any():
        out = out.astype(object)
        out[bad] = None
    return out


def _computed(column: SummaryColumn, raw: dict[str, list[Any]]) -> np.ndarray:
    """A column's formula over the figures it reads; a column without one is its one
    figure (a flag, a GPU count as an integer, else a float)."""
    if column.compute is not None:
        return column.compute({k: np.asarray(v) for k, v in raw.items()})
    (key,) = column.reads
    out = np.asarray(raw[key])
    if key == "fits":
        return out.astype(bool)
    if key in ("gpus", "deployment_gpus"):
        return out.astype(np.int64)
    return out.astype(float)
