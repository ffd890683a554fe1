"""Issue 16, hardening: one behaviour at every entry point, and a clear message (exit status 2,
nothing changed) instead of a wrong answer or a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from planner.compute.inputs import INFERENCE_INPUTS, input_columns
from planner.core.errors import ValidationError
from tests.helpers import run
from tests.store_fixtures import dump


def refused(args: tuple[str, ...], *words: str) -> str:
    """Run ``args``: exit 2, no traceback, every word in the message; returns stderr."""
    code, out, err = run(*args)
    flat = " ".join(err.split())
    assert code == 2, (args, code, out, err)
    assert "Traceback" not in out + err
    for word in words:
        assert word in flat, (word, flat)
    return flat


def db_dump(data_dir: Path) -> dict[str, list[tuple[object, ...]]]:
    return dump(f"sqlite:///{data_dir / 'planner.db'}")


# ---------------------------------------------------------------- 5: one reserve rule
def test_reserve_gib_keeps_the_default_reserve_fraction_everywhere() -> None:
    from planner import service
    from planner.spec import catalog

    args = ("estimate", "--model", "llama-3-8b", "--gpu-memory-gib", "24", "--gpu-tflops", "200",
            "--gpu-bandwidth-gbs", "1000", "--reserve-gib", "3", "--prompt", "8192",
            "--output", "1", "--json")
    code, out, err = run(*args)
    assert code == 0, err
    cli_result = json.loads(out)
    gpu = service.adhoc_gpu(None, memory_gib=24, tflops=200, bandwidth_gb_per_s=1000)
    lib = service.estimate(catalog.resolve_model_spec("llama-3-8b"), gpu,
                           {"reserve_gib": 3, "prompt_tokens": 8192, "output_tokens": 1})
    assert cli_result["max_concurrent_sequences"] == lib["max_concurrent_sequences"]
    assert cli_result["reserve_bytes_per_gpu"] == lib["reserve_bytes_per_gpu"]
    code, out, _ = run(*args, "--reserve-fraction", "0")
    assert json.loads(out)["max_concurrent_sequences"] == 6  # the README's worked example


# ---------------------------------------------------------------- 6: train --help defaults
def test_train_help_shows_the_training_defaults() -> None:
    code, out, _ = run("train", "--help")
    assert code == 0
    flat = " ".join(out.split())
    mfu = flat[flat.index("--mfu"):]
    assert "default: 0.4]" in mfu[:300]
    code, out, _ = run("estimate", "--help")
    flat = " ".join(out.split())
    assert "default: 0.5]" in flat[flat.index("--mfu"):][:300]


# ---------------------------------------------------------------- 7: commas
@pytest.mark.parametrize("text", ["1,5", "1,50", "12,34,567", ",100", "100,", "1,0000", "1,,000"])
def test_a_comma_outside_a_thousands_grouping_is_refused(text: str) -> None:
    from planner.compute.table import validate
    from planner.service.gpu_records import gpu_number

    batch = input_columns()["batch"]
    with pytest.raises(ValidationError):
        batch.parse(text)
    with pytest.raises(ValidationError):
        input_columns()["mfu"].parse(text)
    with pytest.raises(ValidationError):
        validate({"batch": np.array(["8", text], dtype=object)}, "inference")
    with pytest.raises(ValidationError):
        gpu_number("price_usd_per_hour", text)
    refused(("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--batch", text),
            "batch must be an integer")


@pytest.mark.parametrize(("text", "value"), [("1,000", 1000), ("12,345,678", 12_345_678),
                                             ("1_000", 1000), (" 2,048 ", 2048),
                                             ("1,000.5", 1000.5), ("-1,000", -1000)])
def test_a_valid_thousands_grouping_is_read(text: str, value: float) -> None:
    from planner.compute.table import validate
    from planner.core.units import parse_number
    from planner.service.gpu_records import gpu_number

    assert parse_number(text) == value
    if 1 <= value <= 10_000_000 and float(value).is_integer():
        assert input_columns()["batch"].parse(text) == value
        assert validate({"batch": np.array([text, "3"], dtype=object)},
                        "inference")["batch"][0] == value
    if value >= 0:
        assert gpu_number("interconnect_gb_per_s", text) == value


def test_comma_in_key_value_and_gpu_set_is_refused(isolated_data_dir: Path) -> None:
    before = db_dump(isolated_data_dir)
    refused(("scenario", "set", "demo/llama3-8b-24gib-6x8k", "batch=1,5"), "batch")
    refused(("gpu", "set", "h100-sxm", "price_usd_per_hour=1,5"), "price_usd_per_hour")
    assert db_dump(isolated_data_dir) == before


# ---------------------------------------------------------------- 8: model=, gpu=, kind=, name=
def test_scenario_new_takes_model_gpu_kind_as_fields() -> None:
    code, out, err = run("scenario", "new", "demo/a", "model=llama-3-8b", "gpu=h100-sxm",
                         "batch=4")
    assert code == 0, err
    code, out, err = run("scenario", "new", "demo/b", "model=llama-3-8b", "gpu=h100-sxm",
                         "kind=training", "name=b")
    assert code == 0, err
    code, out, _ = run("scenario", "show", "demo/b", "--json")
    data = json.loads(out)
    assert (data["model"], data["gpu"], data["kind"]) == ("llama-3-8b", "h100-sxm", "training")
    refused(("scenario", "new", "demo/c", "--model", "llama-3-8b", "model=mistral-7b",
             "gpu=h100-sxm"), "model")
    refused(("scenario", "new", "demo/d", "gpu=h100-sxm"), "model")
    refused(("scenario", "new", "demo/e", "model=llama-3-8b", "gpu=h100-sxm", "name=other"),
            "name")
    refused(("scenario", "new", "demo/f", "model=llama-3-8b", "gpu=h100-sxm", "kind=serving"),
            "kind")


# ---------------------------------------------------------------- 9: fleet names
def test_fleet_names_with_a_slash_are_refused(isolated_data_dir: Path) -> None:
    before = db_dump(isolated_data_dir)
    refused(("fleet", "new", "prod/eu"), "fleet", "/")
    refused(("fleet", "copy", "demo", "demo/2"), "fleet", "/")
    assert db_dump(isolated_data_dir) == before


# ---------------------------------------------------------------- 16: non-finite and huge
@pytest.mark.parametrize("price", ["nan", "inf", "-inf", "1e308", "Infinity"])
def test_non_finite_and_huge_prices_are_refused(price: str, isolated_data_dir: Path) -> None:
    before = db_dump(isolated_data_dir)
    refused(("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--price-usd-per-hour",
             price, "--json"), "price_usd_per_hour")
    refused(("gpu", "set", "h100-sxm", f"price_usd_per_hour={price}"), "price_usd_per_hour")
    refused(("gpu", "add", "x1", "memory_gib=80", "bf16_tflops=900",
             "memory_bandwidth_gb_per_s=3000", f"price_usd_per_hour={price}"),
            "price_usd_per_hour")
    assert db_dump(isolated_data_dir) == before


@pytest.mark.parametrize(("args", "field"), [
    (("estimate", "--model", "llama-3-8b", "--gpu-memory-gib", "inf", "--gpu-tflops", "200",
      "--gpu-bandwidth-gbs", "1000"), "gpu_memory_gib"),
    (("estimate", "--model", "llama-3-8b", "--gpu-memory-gib", "1e308", "--gpu-tflops", "200",
      "--gpu-bandwidth-gbs", "1000"), "gpu_memory_gib"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpu-tflops", "nan"),
     "gpu_tflops"),
    (("gpu", "set", "h100-sxm", "memory_gib=1e308"), "memory_gib"),
    (("gpu", "set", "h100-sxm", "bf16_tflops=1e308"), "bf16_tflops"),
    (("scenario", "set", "demo/llama3-8b-24gib-6x8k", "batch=8", "--if-version",
      "99999999999999999999999"), "if-version"),
    (("gpu", "set", "h100-sxm", "power_w=700", "--if-version", "99999999999999999999999"),
     "if-version"),
])
def test_huge_figures_are_refused(args: tuple[str, ...], field: str,
                                  isolated_data_dir: Path) -> None:
    before = db_dump(isolated_data_dir)
    refused(args, field)
    assert db_dump(isolated_data_dir) == before


def test_json_output_is_always_valid_json() -> None:
    from planner.cli.common import json_text

    assert json.loads(json_text({"a": float("inf"), "b": [float("nan"), 1.5]})) == {
        "a": None, "b": [None, 1.5]}
    code, out, _ = run("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--json")
    assert code == 0
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))


def test_every_number_parser_uses_the_one_helper() -> None:
    """``_number``, the vectorized table check and GPU figures agree on every text."""
    from planner.compute.table import validate
    from planner.service.gpu_records import gpu_number

    column = next(c for c in INFERENCE_INPUTS if c.name == "target_requests_per_s")
    for text in ("1,000", "1,5", "1_0", "1e3", " 7 ", "0x10", "", "1.", ".5", "+3", "1 000"):
        try:
            one = column.parse(text)
        except ValidationError:
            one = None
        try:
            many = float(validate({column.name: np.array([text, "1"], dtype=object)},
                                  "inference")[column.name][0])
        except ValidationError:
            many = None
        try:
            gpu = gpu_number("power_w", text)
        except ValidationError:
            gpu = None
        assert one == many == gpu, text


# ---------------------------------------------------------------- 2: a first run cut short
def _catalog_counts(url: str) -> tuple[int, int, int]:
    from planner.service import Workspace

    with Workspace.open(url) as ws:
        return len(ws.models()), len(ws.gpus()), len(ws.fleets())


@pytest.mark.slow
def test_a_migrated_but_unseeded_database_is_seeded_on_next_open(tmp_path: Path) -> None:
    """A first run killed between creating the schema and seeding it (the schema commits,
    the process dies) gets its catalog on the next open."""
    from planner.store import migrate
    from planner.store.engine import make_engine

    url = f"sqlite:///{tmp_path / 'cut.db'}"
    engine = make_engine(url)
    migrate.ensure_schema(engine)  # what the killed first run had committed
    engine.dispose()
    models, gpus, fleets = _catalog_counts(url)
    assert models >= 7 and gpus >= 11 and fleets == 1
    assert _catalog_counts(url) == (models, gpus, fleets)  # no duplicates on the next open


@pytest.mark.slow
def test_a_seeding_that_fails_is_completed_on_next_open(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.service import Workspace
    from planner.store import seed

    url = f"sqlite:///{tmp_path / 'killed.db'}"

    def killed(*_args: object) -> None:
        raise KeyboardInterrupt  # the user's ctrl+c, or a kill, half-way through seeding

    monkeypatch.setattr(seed, "seed_fleets", killed)
    with pytest.raises(KeyboardInterrupt):
        Workspace.open(url)
    monkeypatch.undo()
    assert _catalog_counts(url)[2] == 1


@pytest.mark.parametrize("steps", [
    (("db", "upgrade"),),
    (("db", "upgrade"), ("db", "downgrade", "base", "--yes"), ("db", "upgrade", "head")),
])
@pytest.mark.slow
def test_db_upgrade_on_a_new_file_then_open_has_the_catalog(
        steps: tuple[tuple[str, ...], ...], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    for step in steps:
        code, _, err = run("--db", url, *step)
        assert code == 0, (step, err)
    code, out, err = run("--db", url, "model", "list", "--json")
    assert code == 0, err
    assert len(json.loads(out)) >= 7
    code, out, _ = run("--db", url, "scenario", "list", "--json")
    assert len(json.loads(out)) == 10


# ---------------------------------------------------------------- 17: messages, not tracebacks
def _sqlite_file(tmp_path: Path, name: str) -> tuple[Path, str]:
    path = tmp_path / name
    return path, f"sqlite:///{path}"


@pytest.mark.parametrize("command", [("db", "current"), ("db", "upgrade"), ("fleet", "list"),
                                     ("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm")])
def test_a_file_that_is_not_a_database_gets_a_message(command: tuple[str, ...],
                                                      tmp_path: Path) -> None:
    path, url = _sqlite_file(tmp_path, "notes.db")
    path.write_text("these are my notes, not a database\n" * 20)
    refused(("--db", url, *command), "is not a database")
    assert path.read_text().startswith("these are my notes")


def test_a_damaged_database_gets_a_message(tmp_path: Path, isolated_data_dir: Path) -> None:
    path, url = _sqlite_file(tmp_path, "damaged.db")
    data = bytearray((isolated_data_dir / "planner.db").read_bytes())
    for offset in range(4096, len(data), 4096):  # every page header after the first
        data[offset:offset + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    refused(("--db", url, "scenario", "list"), "damaged")


def test_a_read_only_database_gets_a_message(isolated_data_dir: Path) -> None:
    path = isolated_data_dir / "planner.db"
    url = f"sqlite:///file:{path}?mode=ro&uri=true"
    code, _, err = run("--db", url, "fleet", "list")
    assert code == 0, err
    before = db_dump(isolated_data_dir)
    refused(("--db", url, "fleet", "new", "x"), "read-only")
    assert db_dump(isolated_data_dir) == before


def test_a_full_disk_gets_a_message(isolated_data_dir: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from sqlalchemy import event

    from planner.store import engine as engine_module

    made = engine_module.make_engine

    def full_disk_engine(url: str, **kwargs: object):  # type: ignore[no-untyped-def]
        engine = made(url, **kwargs)

        @event.listens_for(engine, "before_cursor_execute")
        def _full(conn, cursor, statement, *_args):  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("INSERT"):
                raise sqlite3.OperationalError("database or disk is full")

        return engine

    monkeypatch.setattr("planner.service.workspace.make_engine", full_disk_engine)
    before = db_dump(isolated_data_dir)
    refused(("fleet", "new", "x"), "disk", "full")
    assert db_dump(isolated_data_dir) == before


@pytest.mark.parametrize("url", ["mysql://u@localhost/planner", "oracle://u@h/db",
                                 "not a url at all"])
def test_an_unsupported_database_url_gets_a_message(url: str) -> None:
    refused(("--db", url, "fleet", "list"), "sqlite")
    refused(("--db", url, "db", "current"), "sqlite")


def test_an_unrelated_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    import sqlite3

    path, url = _sqlite_file(tmp_path, "other.db")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('keep me')")
    for command in (("fleet", "list"), ("db", "upgrade")):
        refused(("--db", url, *command), "not a planner database", "notes")
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["notes"]


def test_a_newer_schema_is_named_and_refused_on_upgrade_and_downgrade(
        isolated_data_dir: Path) -> None:
    import sqlite3

    with sqlite3.connect(isolated_data_dir / "planner.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    code, out, err = run("db", "current")
    assert code == 0, err
    assert "behind head" not in out and "newer" in out
    code, out, _ = run("db", "current", "--json")
    assert json.loads(out)["state"] == "newer"
    before = db_dump(isolated_data_dir)
    refused(("db", "upgrade"), "9999", "newer planner")
    refused(("db", "downgrade", "0001", "--yes"), "9999", "newer planner")
    assert db_dump(isolated_data_dir) == before


# ---------------------------------------------------------------- 18: downgrades
@pytest.mark.slow
def test_downgrade_asks_first_and_a_round_trip_keeps_target_rate(
        isolated_data_dir: Path) -> None:
    assert run("scenario", "set", "demo/llama3-8b-24gib-6x8k",
               "target_requests_per_s=5")[0] == 0
    before = db_dump(isolated_data_dir)
    code, _, _ = run("db", "downgrade", "0001", input="n\n")
    assert code != 0
    assert db_dump(isolated_data_dir) == before
    code, _, err = run("db", "downgrade", "0001", "--yes")
    assert code == 0, err
    code, _, err = run("db", "upgrade")
    assert code == 0, err
    code, out, _ = run("scenario", "show", "demo/llama3-8b-24gib-6x8k", "--json")
    assert json.loads(out)["inputs"]["target_requests_per_s"] == 5.0


# ---------------------------------------------------------------- 19: constraints
def test_deeply_nested_constraint_is_a_message_not_a_recursion_error() -> None:
    from planner.compute.expr import ExpressionError, parse

    for text in ("(" * 300 + "fits" + ")" * 300, "not " * 300 + "fits",
                 "-" * 300 + "batch > 0", " + ".join(["batch"] * 2000) + " > 0"):
        with pytest.raises(ExpressionError):
            parse(text)
    refused(("solve", "demo/llama3-8b-24gib-6x8k", "--maximize", "prompt_tokens",
             "--subject-to", "(" * 300 + "fits" + ")" * 300), "nested")


def test_dividing_by_zero_is_never_feasible() -> None:
    from planner.compute.expr import holds, parse

    values = {"x": np.array([1.0, 2.0]), "z": np.array([0.0, 1.0])}
    assert holds(parse("x / z >= 1"), values).tolist() == [False, True]
    assert holds(parse("not (x / z < 1)"), values).tolist() == [False, True]
    assert holds(parse("x / 0 > 0 or x > 0"), values).tolist() == [False, False]


# ---------------------------------------------------------------- 20: printing a sweep
@pytest.mark.parametrize("two_way", [False, True])
def test_printing_a_sweep_reads_the_frame_a_fixed_number_of_times(
        two_way: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear: the frame's columns are read a fixed number of times whatever the row count,
    and each distinct value is formatted once (the 20 more rows bring 20 new batch values;
    ttft_s is 0.1 in every row, formatted once whatever the row count)."""
    from types import SimpleNamespace

    import pandas as pd

    from planner.cli import render

    monkeypatch.setattr(render.console, "print", lambda *_a, **_k: None)

    def work(n: int) -> tuple[int, int]:
        reads = formats = 0
        real_getitem = pd.DataFrame.__getitem__

        def counting_getitem(self: pd.DataFrame, key: object) -> object:
            nonlocal reads
            reads += 1
            return real_getitem(self, key)

        def counting_cell(_column: str, value: object) -> str:
            nonlocal formats
            formats += 1
            return str(value)

        monkeypatch.setattr(pd.DataFrame, "__getitem__", counting_getitem)
        monkeypatch.setattr(render, "_cell", counting_cell)
        if two_way:
            frame = pd.DataFrame({"batch": [b for b in range(n) for _ in (1, 2)],
                                  "tp": [t for _ in range(n) for t in (1, 2)],
                                  "ttft_s": [0.1] * (2 * n), "note": [""] * (2 * n)})
            variations = [SimpleNamespace(column="batch"), SimpleNamespace(column="tp")]
        else:
            frame = pd.DataFrame({"batch": range(n), "ttft_s": [0.1] * n, "note": [""] * n})
            variations = [SimpleNamespace(column="batch")]
        grid = SimpleNamespace(variations=variations)
        render.sweep(SimpleNamespace(fleet="demo", name="x"), grid, frame, ["ttft_s"])
        monkeypatch.setattr(pd.DataFrame, "__getitem__", real_getitem)
        return reads, formats

    small, large = work(20), work(40)
    assert small[0] == large[0], (small, large)  # one pass: reads do not grow with rows
    assert large[1] - small[1] == 20  # the 20 new batch values, nothing else
