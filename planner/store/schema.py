"""The fleet database's tables (SQLAlchemy 2.0 typed declarative).

models, gpus, fleets, scenarios, scenario_changes (the per-field edit history that undo/redo and
audit read) and seeded_items (what the catalog seeding has written, so re-seeding never
duplicates a row or overwrites one a user edited). Every editable row carries a ``version``
counter (``version_id_col``): an UPDATE based on a stale read matches no row and is refused.

Integrity lives in the database too: foreign keys, unique names, and CHECK constraints. The
scenario checks are generated from the input column registry (bounds and choices), so the
database enforces the same ranges the CLI and UI validate.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship

from planner.compute.inputs import INFERENCE_INPUTS, TRAINING_INPUTS, InputColumn

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """Timezone-aware now, stored as UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base with a constraint naming convention (stable names for migrations)."""

    metadata = MetaData(naming_convention=NAMING)


class Versioned:
    """An editable row: a version counter that refuses stale UPDATEs (``version_id_col``),
    and when it was created and last changed."""

    version: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow,
                                                 onupdate=utcnow)

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        return {"version_id_col": cls.__table__.c.version}  # type: ignore[attr-defined]


class ModelRow(Versioned, Base):
    """A model: its verbatim config.json and the parsed figures lists and checks read."""

    __tablename__ = "models"
    __table_args__ = (
        CheckConstraint("hidden_size > 0", name="hidden_size_positive"),
        CheckConstraint("num_layers > 0", name="num_layers_positive"),
        CheckConstraint("params_total > 0", name="params_total_positive"),
        CheckConstraint("params_active > 0 AND params_active <= params_total",
                        name="params_active_range"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    source: Mapped[str] = mapped_column(String(500), default="custom")
    config_json: Mapped[str] = mapped_column(Text)
    model_type: Mapped[str] = mapped_column(String(50))
    hidden_size: Mapped[int] = mapped_column(Integer)
    num_layers: Mapped[int] = mapped_column(Integer)
    num_attention_heads: Mapped[int] = mapped_column(Integer)
    num_kv_heads: Mapped[int] = mapped_column(Integer)
    head_dim: Mapped[int] = mapped_column(Integer)
    vocab_size: Mapped[int] = mapped_column(Integer)
    params_total: Mapped[int] = mapped_column(BigInteger)
    params_active: Mapped[int] = mapped_column(BigInteger)
    kv_bytes_per_token_bf16: Mapped[int] = mapped_column(BigInteger)
    notes: Mapped[str] = mapped_column(Text, default="")
    hub_repo: Mapped[str] = mapped_column(String(200), default="")
    """The Hugging Face repo id the config came from (``org/name``; empty for a file)."""
    hub_revision: Mapped[str] = mapped_column(String(100), default="")
    """The commit the config was read at (a 40-hex sha when resolved)."""



class GpuRow(Versioned, Base):
    """A GPU: datasheet figures in base units and an editable price."""

    __tablename__ = "gpus"
    __table_args__ = (
        CheckConstraint("memory_bytes > 0", name="memory_positive"),
        CheckConstraint("memory_bandwidth_bytes_per_s > 0", name="bandwidth_positive"),
        CheckConstraint("price_usd_per_gpu_hour >= 0", name="price_non_negative"),
        CheckConstraint("interconnect_bytes_per_s >= 0", name="interconnect_non_negative"),
        CheckConstraint("power_w >= 0", name="power_non_negative"),
        CheckConstraint(
            "COALESCE(bf16_flops_per_s, fp16_flops_per_s, fp8_flops_per_s, int8_ops_per_s, "
            "int4_ops_per_s) IS NOT NULL", name="some_throughput"),
        *(CheckConstraint(f"{c} IS NULL OR {c} > 0", name=f"{c}_positive") for c in (
            "bf16_flops_per_s", "fp16_flops_per_s", "fp8_flops_per_s", "int8_ops_per_s",
            "int4_ops_per_s", "usable_memory_bytes", "runtime_context_bytes",
            "nvfp4_flops_per_s", "mxfp4_flops_per_s")),
        *(CheckConstraint(f"{c} IS NULL OR ({c} > 0 AND {c} <= 1)", name=f"{c}_share")
          for c in ("matmul_efficiency", "matmul_efficiency_8bit", "bandwidth_efficiency")),
        *(CheckConstraint(f"{c} IS NULL OR {c} > 0", name=f"{c}_positive") for c in (
            "nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen", "nic_gbit_per_s",
            "compute_capability")),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    vendor: Mapped[str] = mapped_column(String(100), default="")
    label: Mapped[str] = mapped_column(String(200), default="")
    memory_bytes: Mapped[int] = mapped_column(BigInteger)
    bf16_flops_per_s: Mapped[float | None] = mapped_column(Float)
    fp16_flops_per_s: Mapped[float | None] = mapped_column(Float)
    fp8_flops_per_s: Mapped[float | None] = mapped_column(Float)
    int8_ops_per_s: Mapped[float | None] = mapped_column(Float)
    int4_ops_per_s: Mapped[float | None] = mapped_column(Float)
    nvfp4_flops_per_s: Mapped[float | None] = mapped_column(Float)
    """Dense NVFP4 tensor peak (NULL: no FP4 tensor cores for it; revision 0011)."""
    mxfp4_flops_per_s: Mapped[float | None] = mapped_column(Float)
    """Dense MXFP4 tensor peak (NULL: none; revision 0011)."""
    memory_bandwidth_bytes_per_s: Mapped[float] = mapped_column(Float)
    interconnect_bytes_per_s: Mapped[float] = mapped_column(Float, default=0.0)
    power_w: Mapped[float] = mapped_column(Float, default=0.0)
    price_usd_per_gpu_hour: Mapped[float] = mapped_column(Float, default=0.0)
    price_is_example: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str] = mapped_column(Text, default="")
    usable_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    """Memory the runtime sees (NULL: a share of ``memory_bytes``, see planner.spec.gpu)."""
    matmul_efficiency: Mapped[float | None] = mapped_column(Float)
    matmul_efficiency_8bit: Mapped[float | None] = mapped_column(Float)
    bandwidth_efficiency: Mapped[float | None] = mapped_column(Float)
    runtime_context_bytes: Mapped[int | None] = mapped_column(BigInteger)
    serving_source: Mapped[str] = mapped_column(Text, default="")
    nvlink_domain_gpus: Mapped[int | None] = mapped_column(Integer)
    """GPUs one scale-up fabric joins (NULL: unknown; revision 0012, planner.formulas.topology)."""
    mesh_links_per_gpu: Mapped[int | None] = mapped_column(Integer)
    """Point-to-point scale-up links per GPU (NULL: a switched fabric; revision 0012)."""
    pcie_gen: Mapped[int | None] = mapped_column(Integer)
    """PCIe generation of the x16 host link (NULL: unknown; revision 0012)."""
    nic_gbit_per_s: Mapped[float | None] = mapped_column(Float)
    """Scale-out NIC per GPU, one direction, Gb/s (NULL: none; revision 0012)."""
    topology_source: Mapped[str] = mapped_column(Text, default="")
    """Where the topology figures come from (revision 0012)."""
    compute_capability: Mapped[float | None] = mapped_column(Float)
    """CUDA compute capability major.minor (NULL: not CUDA or unknown; revision 0017)."""



class FleetRow(Base):
    """A named plan: a set of scenarios kept together (e.g. "prod-2027")."""

    __tablename__ = "fleets"
    __table_args__ = (CheckConstraint("length(name) > 0", name="name_not_empty"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")

    version: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    scenarios: Mapped[list[ScenarioRow]] = relationship(
        back_populates="fleet", cascade="all, delete-orphan", passive_deletes=True)

    __mapper_args__ = {"version_id_col": version}


SCENARIO_INPUTS: tuple[InputColumn, ...] = tuple(
    {c.name: c for c in (*INFERENCE_INPUTS, *TRAINING_INPUTS)}.values())
"""Every scenario input column, inference and training, once each."""


def _input_checks() -> list[CheckConstraint]:
    """CHECK constraints mirroring the bounds and choices of every scenario input column."""
    return [check for c in SCENARIO_INPUTS if (check := _input_check(c)) is not None]


def _input_check(c: InputColumn) -> CheckConstraint | None:
    """The CHECK constraint of one input column: its choices, its range (open or closed at
    the minimum), or a text's length (at most 200 where it may stay blank, as
    spec_draft_model, else not empty); ``None`` for a column with neither (a flag)."""
    build = _CHECK_BUILDERS.get(c.kind)
    return build(c) if build is not None else None


def _choice_check(c: InputColumn) -> CheckConstraint:
    """A choice column's CHECK: one of its choices."""
    allowed = ", ".join(f"'{v}'" for v in c.choices)
    return CheckConstraint(f"{c.name} IN ({allowed})", name=f"{c.name}_choice")


def _range_check(c: InputColumn) -> CheckConstraint | None:
    """A number column's CHECK: its minimum (open or closed) and maximum; ``None`` without
    either."""
    parts = []
    if c.minimum is not None:
        parts.append(f"{c.name} {'>' if c.above_minimum else '>='} {c.minimum!r}")
    if c.maximum is not None:
        parts.append(f"{c.name} <= {c.maximum!r}")
    return CheckConstraint(" AND ".join(parts), name=f"{c.name}_range") if parts else None


def _text_check(c: InputColumn) -> CheckConstraint:
    """A text column's CHECK: at most 200 characters where it may stay blank, else not
    empty."""
    if c.default == "":  # may stay blank (spec_draft_model)
        return CheckConstraint(f"length({c.name}) <= 200", name=f"{c.name}_length")
    return CheckConstraint(f"length({c.name}) > 0", name=f"{c.name}_not_empty")


_CHECK_BUILDERS: dict[str, Callable[[InputColumn], CheckConstraint | None]] = {
    "choice": _choice_check, "int": _range_check, "float": _range_check, "text": _text_check}
"""The CHECK constraint builder of each input kind (a flag has none)."""


_SQL_TYPES: dict[str, Any] = {"int": Integer, "float": Float, "bool": Boolean,
                              "choice": String(16), "text": String(200)}

ScenarioInputsMixin: type = type("ScenarioInputsMixin", (), {
    c.name: mapped_column(c.name, _SQL_TYPES[c.kind], nullable=False, default=c.default)
    for c in SCENARIO_INPUTS
})
"""One column per scenario input of the registry, typed by its kind, defaulting to its default."""


class ScenarioRow(Versioned, ScenarioInputsMixin, Base):
    """One deployment or training scenario of a fleet. Its input columns are those of the
    registry (``planner.compute.inputs``), declared below from it."""

    __tablename__ = "scenarios"
    __table_args__ = (
        UniqueConstraint("fleet_id", "name", name="uq_scenarios_fleet_id_name"),
        CheckConstraint("kind IN ('inference', 'training')", name="kind_choice"),
        CheckConstraint("length(name) > 0", name="name_not_empty"),
        CheckConstraint("gpus % (tp * pp) = 0", name="gpus_multiple_of_tp_pp"),
        CheckConstraint("option_of_id IS NULL OR option_of_id <> id", name="option_not_self"),
        *_input_checks(),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fleet_id: Mapped[int] = mapped_column(ForeignKey("fleets.id", ondelete="CASCADE"),
                                          index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16), default="inference")
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="RESTRICT"),
                                          index=True)
    gpu_id: Mapped[int] = mapped_column(ForeignKey("gpus.id", ondelete="RESTRICT"), index=True)
    lora_targets: Mapped[str] = mapped_column(String(200), default="q,v")
    notes: Mapped[str] = mapped_column(Text, default="")
    option_of_id: Mapped[int | None] = mapped_column(
        ForeignKey("scenarios.id", ondelete="SET NULL"), index=True, nullable=True)
    """The base scenario (same fleet) this one is an option of (NULL: no one's option)."""
    chosen: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True,
                                         server_default=true())
    """Counted in roll-ups and totals: exactly one scenario of an option group is chosen."""

    fleet: Mapped[FleetRow] = relationship(back_populates="scenarios")
    model: Mapped[ModelRow] = relationship()
    gpu: Mapped[GpuRow] = relationship()
    option_of: Mapped[ScenarioRow | None] = relationship(remote_side="ScenarioRow.id")



class ScenarioChangeRow(Base):
    """One edited field of one scenario: the history undo/redo and audit read.

    ``change_set`` groups the fields one command changed; ``undone`` marks a change set that
    undo reverted (redo clears it). ``fleet_id`` is the scenario's fleet (a scenario never
    changes fleet), so that an undo or redo finds the fleet's step in the index
    ``(fleet_id, undone, id)`` without visiting each of the fleet's scenarios (revision
    0019)."""

    __tablename__ = "scenario_changes"
    __table_args__ = (Index("ix_scenario_changes_fleet_step", "fleet_id", "undone", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"),
                                             index=True)
    fleet_id: Mapped[int] = mapped_column(ForeignKey("fleets.id", ondelete="CASCADE"))
    change_set: Mapped[str] = mapped_column(String(36), index=True)
    field: Mapped[str] = mapped_column(String(100))
    old_value: Mapped[str | None] = mapped_column(Text)
    new_value: Mapped[str | None] = mapped_column(Text)
    version_after: Mapped[int] = mapped_column(Integer)
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    undone: Mapped[bool] = mapped_column(Boolean, default=False)
    author: Mapped[str | None] = mapped_column(String(100), nullable=True)
    """The OS user of the client that made the change (None before revision 0003)."""


class SeededItemRow(Base):
    """What seeding wrote: ``kind``/``name``, the row version it left, the seed content hash.

    Re-seeding inserts only items never seeded, and refreshes an item only while its row still
    has the version seeding left (no user edit since)."""

    __tablename__ = "seeded_items"
    __table_args__ = (UniqueConstraint("kind", "name", name="uq_seeded_items_kind_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(200))
    content_hash: Mapped[str] = mapped_column(String(64))
    row_version: Mapped[int] = mapped_column(Integer)
    seeded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


MEASUREMENT_FIGURES: tuple[str, ...] = (
    "request_rate", "input_tokens", "output_tokens", "output_tokens_per_s", "ttft_mean_ms",
    "ttft_p50_ms", "ttft_p99_ms", "tpot_mean_ms", "itl_mean_ms")
"""The measured or configured figures of a run (NULL = unknown; never negative)."""
MEASUREMENT_COUNTS: tuple[str, ...] = ("gpus", "tp", "pp", "concurrency", "num_requests")
"""Whole-number settings of a run (NULL = unknown; at least 1)."""


class MeasurementRow(Base):
    """One imported benchmark run (issue 12): the settings it ran with and what it measured.

    Every setting the file and the flags did not give is NULL (unknown, never guessed);
    ``content_hash`` deduplicates a run imported twice, ``source`` is its ``FILE:line``."""

    __tablename__ = "measurements"
    __table_args__ = (
        UniqueConstraint("content_hash", name="uq_measurements_content_hash"),
        *(CheckConstraint(f"{c} IS NULL OR {c} >= 0", name=f"{c}_non_negative")
          for c in MEASUREMENT_FIGURES),
        *(CheckConstraint(f"{c} IS NULL OR {c} >= 1", name=f"{c}_positive")
          for c in MEASUREMENT_COUNTS),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="RESTRICT"),
                                          index=True)
    gpu_id: Mapped[int] = mapped_column(ForeignKey("gpus.id", ondelete="RESTRICT"), index=True)
    source: Mapped[str] = mapped_column(String(500), default="")
    source_format: Mapped[str] = mapped_column(String(32), default="")
    gpus: Mapped[int | None] = mapped_column(Integer)
    tp: Mapped[int | None] = mapped_column(Integer)
    pp: Mapped[int | None] = mapped_column(Integer)
    engine: Mapped[str | None] = mapped_column(String(16))
    weight_dtype: Mapped[str | None] = mapped_column(String(16))
    kv_dtype: Mapped[str | None] = mapped_column(String(16))
    mode: Mapped[str | None] = mapped_column(String(16))
    concurrency: Mapped[int | None] = mapped_column(Integer)
    num_requests: Mapped[int | None] = mapped_column(Integer)
    request_rate: Mapped[float | None] = mapped_column(Float)
    input_tokens: Mapped[float | None] = mapped_column(Float)
    output_tokens: Mapped[float | None] = mapped_column(Float)
    output_tokens_per_s: Mapped[float | None] = mapped_column(Float)
    ttft_mean_ms: Mapped[float | None] = mapped_column(Float)
    ttft_p50_ms: Mapped[float | None] = mapped_column(Float)
    ttft_p99_ms: Mapped[float | None] = mapped_column(Float)
    tpot_mean_ms: Mapped[float | None] = mapped_column(Float)
    itl_mean_ms: Mapped[float | None] = mapped_column(Float)
    settings_json: Mapped[str] = mapped_column(Text, default="{}", server_default="{}")
    """Engine settings of the run by scenario input name (JSON object), from the file or
    ``--set``."""
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CalibrationProfileRow(Base):
    """A fitted set of serving efficiency parameters for one GPU and engine (issue 12).

    Refitting under the same name adds a new ``version``; nothing is overwritten. The
    measurement ids it used, its residuals and its before/after errors are kept as JSON."""

    __tablename__ = "calibration_profiles"
    __table_args__ = (
        UniqueConstraint("name", "version", name="uq_calibration_profiles_name_version"),
        CheckConstraint("version >= 1", name="version_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    gpu_id: Mapped[int] = mapped_column(ForeignKey("gpus.id", ondelete="RESTRICT"), index=True)
    engine: Mapped[str] = mapped_column(String(16))
    model_filter: Mapped[str | None] = mapped_column(String(200))
    parameters_json: Mapped[str] = mapped_column(Text)
    measurement_ids_json: Mapped[str] = mapped_column(Text)
    residuals_json: Mapped[str] = mapped_column(Text)
    errors_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


PRICINGS_SQL = "'on-demand', 'reserved', 'spot'"
RATE_UNITS_SQL = "'s', 'min', 'day'"
MONTH_CHECK = "length({c}) = 7 AND substr({c}, 5, 1) = '-'"


class FleetHorizonRow(Base):
    """A fleet's planning horizon (issue 15): the first month (``YYYY-MM``), how many months,
    and which price the plan bills GPUs at."""

    __tablename__ = "fleet_horizons"
    __table_args__ = (
        CheckConstraint(MONTH_CHECK.format(c="start_month"), name="start_month_format"),
        CheckConstraint("months >= 1 AND months <= 120", name="months_range"),
        CheckConstraint(f"pricing IN ({PRICINGS_SQL})", name="pricing_choice"),
    )

    fleet_id: Mapped[int] = mapped_column(ForeignKey("fleets.id", ondelete="CASCADE"),
                                          primary_key=True)
    start_month: Mapped[str] = mapped_column(String(7))
    months: Mapped[int] = mapped_column(Integer)
    pricing: Mapped[str] = mapped_column(String(16), default="on-demand")


class ScenarioDemandRow(Base):
    """A workload's demand (issue 15): a start rate growing by a fraction a month, or (with
    points in ``scenario_demand_points``) a series of monthly rates. Rates in requests/s;
    ``unit`` is the unit the user gave them in (``s``, ``min``, ``day``), kept for display."""

    __tablename__ = "scenario_demands"
    __table_args__ = (
        CheckConstraint(f"unit IN ({RATE_UNITS_SQL})", name="unit_choice"),
        CheckConstraint("kind IN ('growth', 'series')", name="kind_choice"),
        CheckConstraint("start_month IS NULL OR (" + MONTH_CHECK.format(c="start_month") + ")",
                        name="start_month_format"),
        CheckConstraint("start_requests_per_s IS NULL OR (start_requests_per_s >= 0 AND "
                        "start_requests_per_s <= 1000000000.0)", name="start_rate_range"),
        CheckConstraint("growth_fraction_per_month IS NULL OR (growth_fraction_per_month >= "
                        "-0.99 AND growth_fraction_per_month <= 10.0)", name="growth_range"),
    )

    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"),
                                             primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    unit: Mapped[str] = mapped_column(String(8), default="s")
    start_month: Mapped[str | None] = mapped_column(String(7))
    start_requests_per_s: Mapped[float | None] = mapped_column(Float)
    growth_fraction_per_month: Mapped[float | None] = mapped_column(Float)


class DemandPointRow(Base):
    """One month of a series demand: the rate (requests/s) from that month on."""

    __tablename__ = "scenario_demand_points"
    __table_args__ = (
        UniqueConstraint("scenario_id", "month", name="uq_scenario_demand_points_scenario_month"),
        CheckConstraint(MONTH_CHECK.format(c="month"), name="month_format"),
        CheckConstraint("requests_per_s >= 0 AND requests_per_s <= 1000000000.0",
                        name="rate_range"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_id: Mapped[int] = mapped_column(
        ForeignKey("scenario_demands.scenario_id", ondelete="CASCADE"), index=True)
    month: Mapped[str] = mapped_column(String(7))
    requests_per_s: Mapped[float] = mapped_column(Float)


class GpuPriceRow(Base):
    """Prices of a GPU from a month on (``month`` NULL: from the start), USD per GPU-hour:
    on-demand (NULL: the catalog price), reserved with its commitment term, spot."""

    __tablename__ = "gpu_prices"
    __table_args__ = (
        UniqueConstraint("gpu_id", "month", name="uq_gpu_prices_gpu_month"),
        CheckConstraint("month IS NULL OR (" + MONTH_CHECK.format(c="month") + ")",
                        name="month_format"),
        *(CheckConstraint(f"{c} IS NULL OR ({c} >= 0 AND {c} <= 10000.0)", name=f"{c}_range")
          for c in ("on_demand_usd_per_gpu_hour", "reserved_usd_per_gpu_hour",
                    "spot_usd_per_gpu_hour")),
        CheckConstraint("reserved_term_months IS NULL OR (reserved_term_months >= 1 AND "
                        "reserved_term_months <= 120)", name="term_range"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    gpu_id: Mapped[int] = mapped_column(ForeignKey("gpus.id", ondelete="CASCADE"), index=True)
    month: Mapped[str | None] = mapped_column(String(7))
    on_demand_usd_per_gpu_hour: Mapped[float | None] = mapped_column(Float)
    reserved_usd_per_gpu_hour: Mapped[float | None] = mapped_column(Float)
    reserved_term_months: Mapped[int | None] = mapped_column(Integer)
    spot_usd_per_gpu_hour: Mapped[float | None] = mapped_column(Float)
