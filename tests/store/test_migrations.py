"""Alembic migrations on SQLite and PostgreSQL: one head, up from empty, no drift from the
models, down and up again on populated data, and old databases upgraded on open."""

from __future__ import annotations

import getpass
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from planner.service import Workspace
from planner.store import migrate
from planner.store.engine import make_engine
from planner.store.schema import Base
from tests.store_fixtures import dump

pytestmark = pytest.mark.empty_database  # these tests migrate for real


def test_single_head_and_linear_history() -> None:
    assert migrate.heads() == ("0021",) == (migrate.SCHEMA_HEAD,)
    assert migrate.revisions() == ["0001", "0002", "0003", "0004", "0005", "0006", "0007",
                                   "0008", "0009", "0010", "0011", "0012",
                                   "0013", "0014", "0015", "0016", "0017", "0018", "0019",
                                   "0020", "0021"]


@pytest.mark.slow
def test_upgrade_from_empty_matches_models(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate.current(engine) is None
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, Base.metadata) == []
        insp = inspect(conn)
        for table in Base.metadata.sorted_tables:
            declared = {c.name for c in table.constraints
                        if c.__class__.__name__ == "CheckConstraint"}
            found = {c["name"] for c in insp.get_check_constraints(table.name)}
            assert declared == found, table.name
    engine.dispose()


@pytest.mark.slow
def test_downgrade_and_upgrade_keep_rows(db_url: str) -> None:
    with Workspace.open(db_url) as ws:
        # the demo's option group uses columns older schemas lack (SLOs before 0003, options
        # before 0008; test_downgrade_of_0008_forgets_options): left out of this round trip
        for name in ("llama3-70b-chat-h200-tp2", "llama3-70b-chat-mi300x-tp2",
                     "llama3-70b-chat-h100-tp4"):
            ws.delete_scenario("demo", name)
        ws.new_fleet("prod-2027", "what we run next year")
        ws.new_scenario("prod-2027", "chat", model="llama-3-8b", gpu="h100-sxm", batch=64,
                        notes="=SUM(A1)")
        ws.set_scenario("prod-2027", "chat", {"batch": 32})
        # 0005's downgrade maps weight_dtype auto to bf16 and 0018's kv_dtype auto to bf16
        # (the older schemas have no auto): stored as bf16 from the start, every row survives
        # the round trip unchanged.
        for fleet in ws.fleets():
            for sc in ws.scenarios(fleet.name):
                edit = {name: "bf16" for name in ("weight_dtype", "kv_dtype")
                        if sc.inputs[name] == "auto"}
                if edit:
                    ws.set_scenario(fleet.name, sc.name, edit)
    # the FP4 peaks (0011) are what a downgrade below 0011 drops, by design: seeded, then
    # cleared here so the round trip compares every other figure
    engine = make_engine(db_url)
    with engine.begin() as conn:
        seeded = conn.execute(text("SELECT count(*) FROM gpus WHERE nvfp4_flops_per_s > 0 "
                                   "OR mxfp4_flops_per_s > 0")).scalar()
        conn.execute(text("UPDATE gpus SET nvfp4_flops_per_s = NULL, mxfp4_flops_per_s = NULL"))
    # the front-end inputs are at 0 (the engine's front end): a downgrade below 0003 drops
    # them, 0003 restores its defaults (vLLM's figures) and 0016 sets those back to 0
    engine.dispose()
    assert seeded == 6  # b200, b300, gb200, gb300, rtx-pro-6000 (both), mi355x (MXFP4)
    before = dump(db_url)
    # who made a change (0004) is what a downgrade below 0004 drops, by design
    engine = make_engine(db_url)
    with engine.connect() as conn:
        at = [c["name"] for c in inspect(conn).get_columns("scenario_changes")].index("author")
    engine.dispose()
    assert {r[at] for r in before["scenario_changes"]} == {getpass.getuser()}
    before["scenario_changes"] = sorted(((*r[:at], None, *r[at + 1:])
                                         for r in before["scenario_changes"]), key=repr)
    engine = make_engine(db_url)
    for revision in reversed(migrate.revisions()[:-1]):  # every revision after the first
        migrate.downgrade(engine, revision)
        assert migrate.current(engine) == revision
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM scenarios")).scalar() == 8
            changes = conn.execute(text("SELECT count(*) FROM scenario_changes")).scalar()
            # the batch edit and seven auto -> bf16 edits each of weight_dtype and
            # kv_dtype (one change row a field)
            assert changes == 1 + 7 + 7
        migrate.upgrade(engine)
    after = dump(db_url)
    # the plan tables (0009) are what a downgrade below 0009 drops, by design
    plan_tables = ("fleet_horizons", "scenario_demands", "scenario_demand_points", "gpu_prices")
    assert [len(before[t]) for t in plan_tables] == [1, 3, 4, 5]  # the seeded demo plan
    assert [len(after[t]) for t in plan_tables] == [0, 0, 0, 0]
    for t in plan_tables:
        before.pop(t), after.pop(t)
    assert after == before
    engine.dispose()


@pytest.mark.slow
def test_downgrade_of_0008_forgets_options(db_url: str) -> None:
    with Workspace.open(db_url) as ws:
        assert ws.scenario("demo", "llama3-70b-chat-h200-tp2").option_of == \
            "llama3-70b-chat-h100-tp4"
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0007")
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("scenarios")}
    assert not columns & {"option_of_id", "chosen"}
    migrate.upgrade(engine)
    engine.dispose()
    with Workspace.open(db_url) as ws:  # every scenario its own again, and counted
        assert {(s.option_of, s.chosen) for s in ws.scenarios("demo")} == {(None, True)}


@pytest.mark.slow
def test_downgrade_of_0005_maps_new_weight_dtypes(db_url: str) -> None:
    with Workspace.open(db_url) as ws:
        ws.new_fleet("q", "")
        ws.new_scenario("q", "auto", model="llama-3-8b", gpu="h100-sxm")
        ws.new_scenario("q", "mx", model="llama-3-8b", gpu="h100-sxm", weight_dtype="mxfp4",
                        quant_mode="weight_only")
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0004")
    with engine.connect() as conn:
        rows = dict(conn.execute(text(
            "SELECT name, weight_dtype FROM scenarios WHERE name IN ('auto', 'mx')")).all())
    assert rows == {"auto": "bf16", "mx": "int4"}
    migrate.upgrade(engine)
    with engine.connect() as conn:
        modes = {r[0] for r in conn.execute(text("SELECT quant_mode FROM scenarios")).all()}
    assert modes == {"auto"}
    engine.dispose()


@pytest.mark.slow
def test_database_from_older_revision_opens_with_data_intact(db_url: str) -> None:
    engine = make_engine(db_url)
    migrate.upgrade(engine, "0001")
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO fleets (name, description, version, created_at) "
            "VALUES ('legacy', 'made by 0001', 1, CURRENT_TIMESTAMP)"))
    engine.dispose()
    with Workspace.open(db_url) as ws:
        assert ws.open_report is not None
        assert (ws.open_report.revision_before, ws.open_report.revision) == ("0001", "0021")
        assert ws.open_report.seeded is None  # only a new database is seeded on open
        assert ws.fleet("legacy").description == "made by 0001"
        # the catalog, the demo options and the demo plan arrive when asked for
        assert ws.seed().total_added == 44 + 10  # 27 GPUs: 26 since issue 26, and the RTX 3090
        sc = ws.new_scenario("legacy", "s1", model="llama-3-8b", gpu="h100-sxm",
                             target_requests_per_s=5)
        assert sc.inputs["target_requests_per_s"] == 5


@pytest.mark.slow
def test_unknown_newer_revision_is_refused(db_url: str) -> None:
    from planner.store.migrate import SchemaError

    engine = make_engine(db_url)
    migrate.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    try:
        migrate.ensure_schema(engine)
    except SchemaError as exc:
        assert "written by a newer planner" in str(exc)
    else:
        raise AssertionError("a newer schema must be refused")
    finally:
        engine.dispose()


@pytest.mark.slow
def test_0012_gives_the_shipped_gpus_their_wiring_and_others_none(db_url: str) -> None:
    """Migration 0012 adds the topology columns; the shipped catalog's GPUs get its figures
    (what a database seeded at 0012 has), a user's GPU stays unknown (NULL: the listed
    interconnect for any group, the former rule); a downgrade drops them, an upgrade restores."""
    with Workspace.open(db_url) as ws:
        ws.add_gpu("my-card", {"memory_gib": 24, "bf16_tflops": 100,
                               "memory_bandwidth_gb_per_s": 900})
        assert ws.gpu("a100-80gb-pcie").spec.nvlink_domain_gpus == 2
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0011")
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("gpus")}
    assert not columns & {"nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen",
                          "nic_gbit_per_s", "topology_source"}
    migrate.upgrade(engine)
    with engine.connect() as conn:
        rows = {r[0]: tuple(r[1:]) for r in conn.execute(text(
            "SELECT name, nvlink_domain_gpus, mesh_links_per_gpu, pcie_gen, nic_gbit_per_s "
            "FROM gpus"))}
        sources = conn.execute(text("SELECT count(*) FROM gpus WHERE topology_source <> ''"))
        assert sources.scalar() == 27
    engine.dispose()
    assert rows["a100-80gb-pcie"] == (2, None, 4, None)
    assert rows["h100-sxm"] == (8, None, 5, 400.0)
    assert rows["mi300x"] == (8, 7, 5, 400.0)
    assert rows["gb200"] == (72, None, 5, 400.0)
    assert rows["my-card"] == (None, None, None, None)


FRONT_END_INPUTS = ("request_latency_s", "request_overhead_s", "stream_overhead_s_per_token")


def _front_end_inputs(conn: Any) -> dict[str, tuple[float, float, float]]:
    rows = conn.execute(text(f"SELECT name, {', '.join(FRONT_END_INPUTS)} FROM scenarios "
                             "WHERE name IN ('stored', 'typed', 'none')"))
    return {r[0]: tuple(r[1:]) for r in rows}


@pytest.mark.slow
def test_0016_sets_the_old_front_end_defaults_to_0_and_back(db_url: str) -> None:
    """A scenario stored with 0003's front-end defaults (vLLM's 0.04 s, 0.02 s, 0.0002 s per
    token) gets 0 = its engine's front end (SGLang's 0.02 s latency here); values a user typed
    stay, column by column; a downgrade gives 0 back the old defaults."""
    with Workspace.open(db_url) as ws:
        ws.new_fleet("fe", "")
        for name in ("stored", "typed", "none"):
            ws.new_scenario("fe", name, model="llama-3-8b", gpu="h100-sxm", engine="sglang")
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0013")
    with engine.begin() as conn:
        assert _front_end_inputs(conn) == {n: (0.04, 0.02, 0.0002)  # 0 read back as the old
                                           for n in ("stored", "typed", "none")}  # default
        conn.execute(text("UPDATE scenarios SET request_latency_s = 0.03, "
                          "stream_overhead_s_per_token = 0.0005 WHERE name = 'typed'"))
        conn.execute(text("UPDATE scenarios SET request_latency_s = 0, request_overhead_s = 0, "
                          "stream_overhead_s_per_token = 0 WHERE name = 'none'"))
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    with engine.connect() as conn:
        assert _front_end_inputs(conn) == {"stored": (0.0, 0.0, 0.0),
                                           "typed": (0.03, 0.0, 0.0005),
                                           "none": (0.0, 0.0, 0.0)}
    with Workspace.open(db_url) as ws:  # the stored scenario now takes SGLang's front end
        stored = ws.evaluate(ws.scenario("fe", "stored"))
        typed = ws.evaluate(ws.scenario("fe", "typed"))
    assert stored["request_latency_effective_s"] == 0.02  # SGLang HTTP server, frontends.py
    assert typed["request_latency_effective_s"] == 0.03
    migrate.downgrade(engine, "0013")
    with engine.connect() as conn:
        # an explicit 0 typed before 0016 (no front-end time, then) reads as the default
        assert _front_end_inputs(conn) == {"stored": (0.04, 0.02, 0.0002),
                                           "typed": (0.03, 0.02, 0.0005),
                                           "none": (0.04, 0.02, 0.0002)}
    engine.dispose()


DISAGG_COLUMNS = {"serving_mode", "prefill_workers", "prefill_tp", "prefill_ep",
                  "prefill_attention_dp", "decode_workers", "decode_tp", "decode_ep",
                  "decode_attention_dp", "decode_gpu"}


@pytest.mark.slow
def test_0014_adds_the_disaggregated_inputs_with_defaults_both_ways(db_url: str) -> None:
    """Migration 0014 adds serving_mode and the pool inputs; a row stored before it reads
    aggregated / 0 / follow / same (its figures unchanged); a downgrade drops the columns (a
    disaggregated row becomes the aggregated scenario it was built on), an upgrade restores
    them at their defaults."""
    with Workspace.open(db_url) as ws:
        ws.new_fleet("pd", "")
        ws.new_scenario("pd", "split", model="llama-3-8b", gpu="h100-sxm",
                        serving_mode="disaggregated", prefill_workers=2, decode_workers=3,
                        decode_tp=2, decode_gpu="h200", prefill_attention_dp="on")
        stored = ws.scenario("pd", "split").inputs
    assert (stored["serving_mode"], stored["prefill_workers"], stored["decode_workers"],
            stored["decode_tp"], stored["decode_gpu"], stored["prefill_attention_dp"]) == (
        "disaggregated", 2, 3, 2, "h200", "on")
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0013")
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("scenarios")}
    assert not columns & DISAGG_COLUMNS
    migrate.upgrade(engine)
    with engine.connect() as conn:
        row = conn.execute(text(
            "SELECT serving_mode, prefill_workers, prefill_tp, prefill_ep, prefill_attention_dp,"
            " decode_workers, decode_tp, decode_ep, decode_attention_dp, decode_gpu "
            "FROM scenarios WHERE name = 'split'")).one()
    with pytest.raises(Exception, match=r"(?i)check|constraint"), engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET serving_mode = 'both'"))
    engine.dispose()
    assert tuple(row) == ("aggregated", 0, 0, 0, "follow", 0, 0, 0, "follow", "same")


@pytest.mark.slow
def test_0017_gives_the_shipped_gpus_their_compute_capability(db_url: str) -> None:
    """Migration 0017 adds ``compute_capability``; the shipped NVIDIA GPUs get NVIDIA's figure
    (developer.nvidia.com/cuda-gpus: B200 10.0, B300 10.3, RTX PRO 6000 12.0, H100 9.0), the
    other vendors' and a user's GPU stay NULL; a downgrade drops it, an upgrade restores it."""
    with Workspace.open(db_url) as ws:
        ws.add_gpu("my-card", {"memory_gib": 24, "bf16_tflops": 100,
                               "memory_bandwidth_gb_per_s": 900})
        assert ws.gpu("b300").spec.compute_capability == 10.3
    engine = make_engine(db_url)
    migrate.downgrade(engine, "0016")
    assert migrate.current(engine) == "0016"
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("gpus")}
    assert "compute_capability" not in columns
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT name, compute_capability FROM gpus")).all())
    engine.dispose()
    assert (rows["b200"], rows["b300"], rows["rtx-pro-6000"], rows["h100-sxm"]) == (
        10.0, 10.3, 12.0, 9.0)
    assert rows["mi355x"] is None and rows["tpu-v6e"] is None and rows["my-card"] is None
    assert sum(value is not None for value in rows.values()) == 20  # RTX 3090: 8.6


@pytest.mark.slow
def test_0018_adds_kv_dtype_auto_and_a_downgrade_maps_it_to_bf16(db_url: str) -> None:
    """A new scenario's kv_dtype is auto (the engine's launch default); stored explicit dtypes
    stay as they are through 0018 both ways; a downgrade to 0017 sets auto to bf16 (the older
    schema's default), which the narrowed check then holds, and an upgrade takes auto again."""
    with Workspace.open(db_url) as ws:
        ws.new_fleet("kv", "")
        ws.new_scenario("kv", "default", model="llama-3-8b", gpu="h100-sxm")
        ws.new_scenario("kv", "fp8", model="llama-3-8b", gpu="h100-sxm", kv_dtype="fp8")
        assert ws.scenario("kv", "default").inputs["kv_dtype"] == "auto"
    engine = make_engine(db_url)
    query = text("SELECT name, kv_dtype FROM scenarios WHERE name IN ('default', 'fp8')")
    migrate.downgrade(engine, "0017")
    assert migrate.current(engine) == "0017"
    with engine.connect() as conn:
        assert dict(conn.execute(query).all()) == {"default": "bf16", "fp8": "fp8"}
    with pytest.raises(Exception, match=r"(?i)check|constraint"), engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET kv_dtype = 'auto' WHERE name = 'fp8'"))
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    with engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET kv_dtype = 'auto' WHERE name = 'default'"))
        assert dict(conn.execute(query).all()) == {"default": "auto", "fp8": "fp8"}
    engine.dispose()


@pytest.mark.slow
def test_0019_gives_each_change_its_fleet_both_ways(db_url: str) -> None:
    """0019 fills ``scenario_changes.fleet_id`` from each change's scenario (two fleets' edits
    each keep their own), undo and redo after the upgrade find each fleet's own step, and a
    downgrade to 0018 drops the column and keeps every change."""
    with Workspace.open(db_url) as ws:
        for fleet in ("east", "west"):
            ws.new_fleet(fleet, "")
            ws.new_scenario(fleet, "chat", model="llama-3-8b", gpu="h100-sxm", batch=8)
        ws.set_scenario("east", "chat", {"batch": 16})
        ws.set_scenario("west", "chat", {"batch": 32})
        ws.set_scenario("east", "chat", {"batch": 24})
    engine = make_engine(db_url)
    count = text("SELECT count(*) FROM scenario_changes")
    with engine.connect() as conn:
        logged = conn.execute(count).scalar()
    migrate.downgrade(engine, "0018")
    with engine.connect() as conn:
        assert "fleet_id" not in {c["name"] for c in inspect(conn).get_columns(
            "scenario_changes")}
        assert conn.execute(count).scalar() == logged
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    with engine.connect() as conn:
        mismatched = conn.execute(text(
            "SELECT count(*) FROM scenario_changes c JOIN scenarios s ON s.id = c.scenario_id "
            "WHERE c.fleet_id <> s.fleet_id")).scalar()
        per_fleet = dict(conn.execute(text(
            "SELECT f.name, count(*) FROM scenario_changes c JOIN fleets f ON f.id = c.fleet_id "
            "WHERE c.field = 'batch' GROUP BY f.name")).all())
    engine.dispose()
    assert mismatched == 0 and per_fleet == {"east": 2, "west": 1}
    with Workspace.open(db_url) as ws:
        assert [c.new_value for c in ws.undo("east")] == [24]
        assert ws.scenario("east", "chat").inputs["batch"] == 16
        assert [c.new_value for c in ws.undo("west")] == [32]
        assert ws.scenario("west", "chat").inputs["batch"] == 8
        assert [c.new_value for c in ws.redo("east")] == [24]
        assert ws.scenario("east", "chat").inputs["batch"] == 24


@pytest.mark.slow
def test_0020_adds_prefill_launch_at_the_engines_default_both_ways(db_url: str) -> None:
    """0020 gives every stored scenario ``prefill_launch`` auto and ``eager_kernel_host_s``
    6.56e-05 (the new defaults), checks them (an unknown launch is refused), and a downgrade to
    0019 drops both columns and keeps every scenario."""
    with Workspace.open(db_url) as ws:
        ws.new_fleet("launch", "")
        ws.new_scenario("launch", "sg", model="llama-3-8b", gpu="h100-sxm", engine="sglang")
        ws.new_scenario("launch", "graphed", model="llama-3-8b", gpu="h100-sxm",
                        engine="sglang", prefill_launch="graphs")
    engine = make_engine(db_url)
    count = text("SELECT count(*) FROM scenarios")
    with engine.connect() as conn:
        stored = conn.execute(count).scalar()
    migrate.downgrade(engine, "0019")
    with engine.connect() as conn:
        names = {c["name"] for c in inspect(conn).get_columns("scenarios")}
        assert {"prefill_launch", "eager_kernel_host_s"}.isdisjoint(names)
        assert conn.execute(count).scalar() == stored
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    query = text("SELECT name, prefill_launch, eager_kernel_host_s FROM scenarios "
                 "WHERE name IN ('sg', 'graphed')")
    with engine.connect() as conn:
        assert {n: (launch, host) for n, launch, host in conn.execute(query).all()} == {
            "sg": ("auto", 6.56e-05), "graphed": ("auto", 6.56e-05)}
    with pytest.raises(Exception, match=r"(?i)check|constraint"), engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET prefill_launch = 'jit' WHERE name = 'sg'"))
    engine.dispose()


@pytest.mark.slow
def test_0021_adds_the_disagg_handover_at_its_default_both_ways(db_url: str) -> None:
    """0021 gives every stored scenario ``disagg_handover_s`` 0.11 (the new default, vLLM PR
    51919's hand-over), checks its range, and a downgrade to 0020 drops the column and keeps
    every scenario; a stored disaggregated scenario's TTFT then counts it (a closed loop's
    by less than 0.11 s: the longer cycle leaves less queue, Little's law)."""
    with Workspace.open(db_url) as ws:
        ws.new_fleet("pd", "")
        ws.new_scenario("pd", "split", model="llama-3-8b", gpu="h100-sxm", gpus=2,
                        serving_mode="disaggregated", concurrency=4)
        ws.new_scenario("pd", "quick", model="llama-3-8b", gpu="h100-sxm", gpus=2,
                        serving_mode="disaggregated", concurrency=4, disagg_handover_s=0.0)
        quick = ws.evaluate(ws.scenario("pd", "quick"))["ttft_mean_s"]
    engine = make_engine(db_url)
    count = text("SELECT count(*) FROM scenarios")
    with engine.connect() as conn:
        stored = conn.execute(count).scalar()
    migrate.downgrade(engine, "0020")
    with engine.connect() as conn:
        assert "disagg_handover_s" not in {c["name"] for c in
                                           inspect(conn).get_columns("scenarios")}
        assert conn.execute(count).scalar() == stored
    migrate.upgrade(engine)
    assert migrate.current(engine) == "0021"
    query = text("SELECT name, disagg_handover_s FROM scenarios WHERE fleet_id = "
                 "(SELECT id FROM fleets WHERE name = 'pd')")
    with engine.connect() as conn:
        assert dict(conn.execute(query).all()) == {"split": 0.11, "quick": 0.11}
    with pytest.raises(Exception, match=r"(?i)check|constraint"), engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET disagg_handover_s = -1 WHERE name = 'split'"))
    engine.dispose()
    with Workspace.open(db_url) as ws:  # "quick" is now "split": the hand-over counted
        after = {n: ws.evaluate(ws.scenario("pd", n))["ttft_mean_s"] for n in ("quick", "split")}
    assert after["quick"] == after["split"] > quick
