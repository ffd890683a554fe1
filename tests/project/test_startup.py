"""CLI start-up (issue 14, item 5): ``planner --help`` and ``planner estimate`` load neither
SQLAlchemy nor pandas, and ``estimate`` reads the model and GPU it names straight from the
SQLite file (:mod:`planner.store.lite`) with the same specs the store gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import cli
from planner.service import Workspace
from planner.spec import catalog
from planner.store import lite

HEAVY = ("sqlalchemy", "pandas", "alembic", "openpyxl", "textual", "scipy")


def _run_loaded(args: list[str]) -> tuple[int, str, set[str]]:
    """Run ``planner ARGS`` in a fresh interpreter: (exit status, stdout, heavy modules
    loaded by the end)."""
    code = ("import sys; from planner.cli import main; rc = main(" + repr(args) + "); "
            f"print('LOADED=' + ','.join(m for m in {HEAVY!r} if m in sys.modules), "
            "file=sys.stderr); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    line = [ln for ln in out.stderr.splitlines() if ln.startswith("LOADED=")][-1]
    return out.returncode, out.stdout, {m for m in line[len("LOADED="):].split(",") if m}


def test_help_loads_no_database_or_dataframe_library() -> None:
    status, out, loaded = _run_loaded(["--help"])
    assert status == 0 and "estimate" in out
    assert loaded == set()


def test_help_loads_no_numpy() -> None:
    """The operator set imports numpy at its first array operation, not with the module
    (every command imports it; ``--help`` needs no arrays)."""
    code = ("import sys; from planner.cli import main; rc = main(['--help']); "
            "print('NUMPY=' + str('numpy' in sys.modules), file=sys.stderr); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "estimate" in out.stdout
    assert "NUMPY=False" in out.stderr


def test_the_operators_import_numpy_at_their_first_array() -> None:
    code = ("import sys; from planner.formulas import ops; "
            "a = (ops.where(True, 1.0, 2.0), 'numpy' in sys.modules); "
            "b = ops.maximum(__import__('numpy').zeros(2), 1.0).tolist(); "
            "print(a, b, type(ops.np).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["(1.0,", "False)", "[1.0,", "1.0]", "module"], out.stderr


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_estimate_by_name_loads_no_database_or_dataframe_library(json_flag: list[str]) -> None:
    status, out, loaded = _run_loaded(["estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                                       "--batch", "6", *json_flag])
    assert status == 0, out
    assert loaded == set()
    if json_flag:  # REFERENCE.md: Llama-3-8B bf16 KV per token 131,072 B, weights 14.9575 GiB
        data = json.loads(out)
        assert data["kv_bytes_per_token"] == 131_072
        assert round(data["weights_bytes"] / 2**30, 4) == 14.9575


def test_estimate_reads_the_database_not_the_shipped_catalog(isolated_data_dir: Path) -> None:
    """An edited GPU price is what estimate uses, as when it opened the store."""
    with Workspace.open() as ws:
        ws.set_gpu("h100-sxm", {"price_usd_per_hour": 7.25})
    status, out, loaded = _run_loaded(["estimate", "--model", "llama-3-8b", "--gpu", "H100-SXM",
                                       "--json"])
    assert status == 0 and loaded == set()
    data = json.loads(out)
    assert data["cost_usd_per_hour"] == pytest.approx(7.25 * data["inputs"]["gpus"])


def test_lite_specs_equal_the_store_specs() -> None:
    with Workspace.open() as ws:
        url = ws.url
        models = {m.name: ws.model(m.name).spec for m in ws.models()}
        gpus = {g.name: g for g in ws.gpu_specs().values()}
    assert (len(models), len(gpus)) == (len(catalog.model_names()), len(catalog.load_gpus()))
    for name, spec in models.items():
        assert lite.model_spec(url, name.upper()) == spec, name
    for name, gpu_spec in gpus.items():
        assert lite.gpu_spec_of(url, f" {name} ") == gpu_spec, name


def test_lite_declines_what_it_cannot_read(tmp_path: Path) -> None:
    with Workspace.open() as ws:
        url = ws.url
    assert lite.model_spec(url, "no-such-model") is None
    assert lite.gpu_spec_of(url, "no-such-gpu") is None
    assert lite.model_spec(f"sqlite:///{tmp_path / 'absent.db'}", "llama-3-8b") is None
    assert not (tmp_path / "absent.db").exists()  # read-only: nothing created
    (tmp_path / "junk.db").write_text("not a database")
    assert lite.gpu_spec_of(f"sqlite:///{tmp_path / 'junk.db'}", "h100-sxm") is None
    assert lite.model_spec("postgresql://u@h/db", "llama-3-8b") is None
    assert lite.sqlite_file("sqlite:///:memory:") is None
    assert lite.sqlite_file("sqlite:////abs/p.db") == Path("/abs/p.db")
    assert lite.sqlite_file("sqlite:///rel/p.db") == Path("rel/p.db")


def test_unknown_names_still_get_the_stores_message() -> None:
    result = CliRunner().invoke(cli, ["estimate", "--model", "no-such-model", "--gpu",
                                      "h100-sxm"])
    assert result.exit_code == 2
    assert "no-such-model" in result.stderr and "llama-3-8b" in result.stderr
    result = CliRunner().invoke(cli, ["estimate", "--model", "llama-3-8b", "--gpu", "no-gpu"])
    assert result.exit_code == 2
    assert "no-gpu" in result.stderr and "27 are known (`planner gpu list`)" in result.stderr
    result = CliRunner().invoke(cli, ["estimate", "--model", "llama-3-8b", "--gpu", "h100-sx"])
    assert result.exit_code == 2
    assert "unknown GPU 'h100-sx'; did you mean h100-sxm?" in result.stderr
