"""Issue 28 (CLI, environment and database) and issue 24 item 8: hostile input at the command line.

Every case is refused, or run, with: the exit status it must have, one clear line on stderr of
at most :data:`MAX_MESSAGE` characters (a solve constraint's message adds the caret lines that
point at the mistake), no traceback, and, on a refusal, the database file byte for byte as it
was. The categories (counted in the module's ``CASES``, printed by ``python -m
tests.cli.test_hostile_cli``):

- tracebacks: environments and inputs that used to raise (a constraint comparing a text with a
  number, names over the system's 255 bytes, the data folder a file, unwritable or under an
  unset HOME, a scenario whose GPU was deleted, stdout closed, non-UTF-8 terminals, a million-row
  sweep chart);
- database: empty, damaged, foreign and in-memory databases, a dropped change log, a missing
  --db folder, concurrent first runs on PostgreSQL;
- wrong accepts: constraints that are not conditions, lora_targets, invisible characters in
  names, text over its bound, echoed values cut;
- suggestions: a close match instead of the whole list, for every kind of name;
- terminal habits: the UI without a terminal, the Hub without network.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests import helpers

ROOT = Path(__file__).resolve().parents[2]
MAX_MESSAGE = 300
"""Longest error line allowed (issue 28: errors of ~300 characters at most)."""
DEMO = "demo/llama3-8b-24gib-6x8k"
SOLVE = ("solve", DEMO, "--minimize", "gpus", "--vary", "gpus=1..4", "--subject-to")
LONG_NAME = "a" * 300  # one path component over the 255 bytes Linux allows
HUGE = "x" * 100_000
PLANNER = (sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main())")
"""The ``planner`` command in a fresh interpreter."""


def state(data: Path) -> dict[str, str]:
    """SHA-256 of every file of the data folder (the database and its WAL), byte for byte;
    not the ``-shm`` file, SQLite's shared-memory index of the WAL, which every reader
    writes and which holds no data."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(data.iterdir()) if p.is_file() and not p.name.endswith("-shm")}


run = partial(helpers.run, clean=True)  # the CLI in-process; a traceback fails the test


def one_line(err: str, *needles: str, lines: int = 1) -> str:
    """The error line of ``err`` (checked: ``Error: ``, at most MAX_MESSAGE characters, no
    traceback, the ``needles`` in it); ``lines`` > 1 for a constraint's caret lines."""
    shown = err.strip().splitlines()
    assert len(shown) == lines, err[:2000]
    assert shown[0].startswith("Error: "), err[:2000]
    assert len(shown[0]) <= MAX_MESSAGE, (len(shown[0]), shown[0][:400])
    assert "Traceback" not in err
    for needle in needles:
        assert needle in shown[0], (needle, shown[0])
    return shown[0]


def refused(data: Path, args: tuple[str, ...], *needles: str, lines: int = 1,
            env: dict[str, str] | None = None) -> str:
    """``planner ARGS`` exits 2 with one clear line, the database unchanged byte for byte."""
    before = state(data)
    code, out, err = run(*args, env=env)
    assert code == 2, (code, out[:500], err[:500])
    line = one_line(err, *needles, lines=lines)
    assert state(data) == before, f"the database changed: {args!r}"
    return line


def planner(*args: str, env: dict[str, str] | None = None, shell: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """``planner ARGS`` in a fresh interpreter (what the environment cases need); ``shell``:
    a bash command line instead, with ``$PLANNER`` the command."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING",)}
    full = {**base, **(env or {})}
    if shell is not None:
        line = shell.replace("$PLANNER", " ".join(map(shlex.quote, PLANNER)))
        return subprocess.run(["bash", "-c", line], capture_output=True, env=full,
                              timeout=timeout, cwd=ROOT)
    return subprocess.run([*PLANNER, *args], capture_output=True, env=full, timeout=timeout,
                          cwd=ROOT)


# ======================================================================= tracebacks
TEXT_VERSUS_NUMBER = ["gpu < 5", "gpu > 5", "5 <= model", "gpu + 1 > 2", "-gpu > 1",
                      "weight_dtype * 2 > 1", 'ttft_s < "fast"', 'gpu == 5', '"a" < "b"',
                      "kv_dtype >= 8"]


@pytest.mark.parametrize("constraint", TEXT_VERSUS_NUMBER)
def test_a_constraint_comparing_text_with_a_number_is_one_message(
        isolated_data_dir: Path, constraint: str) -> None:
    line = refused(isolated_data_dir, (*SOLVE, constraint), lines=3)
    assert "text" in line and ("number" in line or "only == and != compare texts" in line)


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_sweep_out_name_over_the_system_limit(isolated_data_dir: Path, tmp_path: Path,
                                              suffix: str) -> None:
    out = tmp_path / f"{LONG_NAME}{suffix}"
    line = refused(isolated_data_dir, ("sweep", DEMO, "--vary", "batch=1,2", "--out", str(out)),
                   "cannot use", "longer than the system allows", "(3")
    assert LONG_NAME not in line  # the path is shown cut


def test_data_folder_name_over_the_system_limit(tmp_path: Path) -> None:
    data = tmp_path / LONG_NAME
    code, _, err = run("gpu", "list", env={"PLANNER_DATA_DIR": str(data)})
    assert code == 2
    one_line(err, "cannot create the planner's data folder", "longer than the system allows",
             "PLANNER_DATA_DIR")


@pytest.mark.parametrize("ref", [f"org/{'b' * 300}", f"{'o' * 50}/{'n' * 50}",
                                 f"Qwen/Qwen3-8B@{'r' * 300}", "org--x/name", "org/na..me",
                                 "org/name-"])
def test_hub_ids_the_hub_cannot_hold(ref: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for command in (("model", "inspect", ref), ("model", "import", ref)):
        code, _, err = run(*command)
        assert code == 2
        one_line(err, "Hub id" if "@" not in ref else "revision")
    assert not (tmp_path / "hub").exists() or not any((tmp_path / "hub").iterdir())


def test_data_folder_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    code, _, err = run("fleet", "list", env={"PLANNER_DATA_DIR": str(blocker)})
    assert code == 2
    one_line(err, "cannot create the planner's data folder", "a file of that name is in the "
             "way", "PLANNER_DATA_DIR")
    assert blocker.read_text() == "not a folder"


def test_data_folder_not_writable() -> None:
    # /sys refuses mkdir even to root (EPERM): an unwritable place whoever runs the tests
    code, _, err = run("fleet", "list", env={"PLANNER_DATA_DIR": "/sys/planner-hostile-test"})
    assert code == 2
    one_line(err, "cannot create the planner's data folder", "permission denied")


@pytest.mark.slow
def test_home_unset_and_data_home_unusable(tmp_path: Path) -> None:
    blocker = tmp_path / "xdg"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "PLANNER_DATA_DIR", "PLANNER_DATABASE_URL")}
    env["XDG_DATA_HOME"] = str(blocker)  # where platformdirs puts the data folder
    proc = subprocess.run([*PLANNER, "fleet", "list"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    one_line(proc.stderr, "cannot create the planner's data folder", "part of its path is a "
             "file")


def test_scenario_whose_gpu_was_deleted_outside_the_planner(isolated_data_dir: Path) -> None:
    import sqlite3

    with sqlite3.connect(isolated_data_dir / "planner.db") as conn:  # foreign keys off
        conn.execute("DELETE FROM gpu_prices WHERE gpu_id = "
                     "(SELECT id FROM gpus WHERE name = 'rtx-4090')")
        conn.execute("DELETE FROM gpus WHERE name = 'rtx-4090'")
    refused(isolated_data_dir, ("scenario", "show", DEMO), "the database is damaged",
            "does not exist", "planner db check")
    # a list or an export names the damage instead of silently leaving the row out
    for args in (("scenario", "list"), ("scenario", "list", "--json"),
                 ("export", "--out", str(isolated_data_dir / "r.xlsx"))):
        refused(isolated_data_dir, args, "the database is damaged", "names GPU id",
                "planner db check")
    code, out, _ = run("db", "check")
    assert code == 2 and "1 row(s) of scenarios name a gpus row" in out


@pytest.mark.parametrize("args", [("gpu", "list"), ("gpu", "list", "--json"),
                                  ("scenario", "list"), ("estimate", "--model", "llama-3-8b",
                                                         "--gpu", "h100-sxm")])
def test_stdout_closed(isolated_data_dir: Path, args: tuple[str, ...]) -> None:
    before = state(isolated_data_dir)
    proc = planner(shell="$PLANNER " + " ".join(map(shlex.quote, args)) + " >&-")
    assert proc.returncode == 2
    one_line(proc.stderr.decode(), "standard output is closed", ">/dev/null")
    assert state(isolated_data_dir) == before


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", [("gpu", "list"), ("scenario", "list"),
                                  ("scenario", "show", DEMO), ("--help",)])
def test_non_utf8_terminal_gets_ascii_tables(isolated_data_dir: Path, encoding: str,
                                             args: tuple[str, ...]) -> None:
    proc = planner(*args, env={"PYTHONIOENCODING": encoding})
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    # click.echo writes UTF-8 to a stream that says "ascii" (click reads that as a
    # misconfigured locale); everything else is in the stream's own encoding
    text = proc.stdout.decode("utf-8" if encoding == "ascii" else encoding)
    assert "Traceback" not in proc.stderr.decode(errors="replace")
    assert "┏" not in text and "━" not in text and "│" not in text
    if args[0] in ("gpu", "scenario") and args[1] == "list":
        assert "+-" in text and "| " in text  # the box drawn in ASCII
    if args[0] == "gpu":
        assert "h100-sxm" in text and "TFLOP/s" in text


def test_ascii_fallback_spells_symbols() -> None:
    from planner.cli.terminal import ERRORS

    assert "┏━┳┓┃│└─┴┘✗–≤→×".encode("ascii", ERRORS) == b"+-++||+-++x-<=->x"
    assert "é 中".encode("ascii", ERRORS) == b"e \\u4e2d"
    assert "é".encode("latin-1", ERRORS) == "é".encode("latin-1")  # only what cannot be held


@pytest.mark.slow
def test_sweep_chart_of_a_million_rows_references_what_a_chart_can() -> None:

    from openpyxl import Workbook

    from planner.io.xlsx.sweep import CHART_MAX_ROW, write_sweep_chart

    ws = Workbook().active
    write_sweep_chart(ws, "s", ["batch"], 1_500_000, "A1")
    chart = ws._charts[0]
    refs = [s.val.numRef.f for s in chart.series]
    assert refs == [f"'Sheet'!$AJ$1:$AJ${CHART_MAX_ROW}"] or refs[0].endswith(
        f"${CHART_MAX_ROW}")
    assert "first 999,999 rows" in chart.title.tx.rich.p[0].r[0].t


# ======================================================================= database
def _copy(isolated_data_dir: Path, tmp_path: Path, name: str) -> tuple[Path, str]:
    import shutil

    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(isolated_data_dir / "planner.db", folder / "planner.db")
    return folder, f"sqlite:///{folder / 'planner.db'}"


@pytest.mark.parametrize("args", [("scenario", "list"), ("fleet", "list"),
                                  ("scenario", "show", DEMO), ("db", "upgrade"),
                                  ("db", "downgrade", "0009", "--yes"),
                                  ("scenario", "set", DEMO, "batch=2"),
                                  ("export", "--out", "OUT")])
def test_dropped_change_log_is_noticed(isolated_data_dir: Path, tmp_path: Path,
                                       args: tuple[str, ...]) -> None:
    import sqlite3

    folder, url = _copy(isolated_data_dir, tmp_path, "nolog")
    with sqlite3.connect(folder / "planner.db") as conn:
        conn.execute("DROP TABLE scenario_changes")
    args = tuple(str(tmp_path / "out.xlsx") if a == "OUT" else a for a in args)
    refused(folder, ("--db", url, *args), "the database is damaged", "scenario_changes")
    assert not (tmp_path / "out.xlsx").exists()
    code, out, _ = run("--db", url, "db", "current")
    assert code == 0 and "damaged" in out and "up to date" not in out
    code, out, _ = run("--db", url, "db", "check")
    assert code == 2 and "table(s) scenario_changes are missing" in out


def test_database_of_another_application(tmp_path: Path) -> None:
    import sqlite3

    folder = tmp_path / "other"
    folder.mkdir()
    with sqlite3.connect(folder / "planner.db") as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    url = f"sqlite:///{folder / 'planner.db'}"
    for args in (("gpu", "list"), ("db", "upgrade"), ("scenario", "list")):
        refused(folder, ("--db", url, *args), "not a planner database")
    code, out, _ = run("--db", url, "db", "current")
    assert code == 0 and "not a planner database" in out and "empty:" not in out
    code, out, _ = run("--db", url, "db", "check", "--json")
    assert code == 2 and '"healthy": false' in out


def test_damaged_pages_are_not_healthy(isolated_data_dir: Path, tmp_path: Path) -> None:
    folder, url = _copy(isolated_data_dir, tmp_path, "damaged")
    path = folder / "planner.db"
    data = bytearray(path.read_bytes())
    for offset in range(8192, len(data), 4096):
        data[offset + 100:offset + 140] = b"\x00\xff" * 20  # cell contents, headers kept
    path.write_bytes(bytes(data))
    before = state(folder)
    code, out, err = run("--db", url, "db", "check")
    assert code == 2 and ": healthy" not in out
    assert "NOT healthy" in out or "is damaged" in one_line(err)
    assert state(folder) == before


@pytest.mark.slow
def test_empty_database_file_is_created_not_listed_as_healthy(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "planner.db").write_bytes(b"")
    url = f"sqlite:///{folder / 'planner.db'}"
    code, out, _ = run("--db", url, "db", "current")
    assert code == 0 and "empty: the planner creates it on first use" in out
    code, out, _ = run("--db", url, "db", "check")
    assert code == 0 and "empty" in out  # empty is a state, not health: nothing to refuse
    code, out, err = run("--db", url, "gpu", "list", "--json")
    assert code == 0 and "Created the planner database" in err
    code, out, _ = run("--db", url, "db", "check")
    assert code == 0 and ": healthy" in out


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:",
                                 "sqlite:///file::memory:?uri=true",
                                 "sqlite:///file:x?mode=memory&uri=true"])
def test_in_memory_sqlite_is_refused(isolated_data_dir: Path, url: str) -> None:
    for args in (("gpu", "list"), ("fleet", "new", "x"), ("db", "current")):
        refused(isolated_data_dir, ("--db", url, *args), "in-memory database",
                "sqlite:///path.db")


@pytest.mark.parametrize("how", ["flag", "env"])
def test_db_in_a_missing_folder_is_an_error(isolated_data_dir: Path, tmp_path: Path,
                                            how: str) -> None:
    url = f"sqlite:///{tmp_path / 'typo' / 'planner.db'}"
    args = ("--db", url, "fleet", "new", "x") if how == "flag" else ("fleet", "new", "x")
    env = {"PLANNER_DATABASE_URL": url} if how == "env" else None
    refused(isolated_data_dir, args, "does not exist", "typo", env=env)
    assert not (tmp_path / "typo").exists()


@pytest.mark.slow
def test_the_default_data_folder_is_still_created(tmp_path: Path) -> None:
    data = tmp_path / "new" / "nested" / "planner"
    code, _, err = run("fleet", "list", env={"PLANNER_DATA_DIR": str(data)})
    assert code == 0, err
    assert (data / "planner.db").is_file() and "Created the planner database" in err


FIRST_RUN = """
import os, sys, time
from planner.service import Workspace
url, barrier, me = sys.argv[1], sys.argv[2], sys.argv[3]
open(os.path.join(barrier, me), "w").close()
deadline = time.time() + 60
while len(os.listdir(barrier)) < 4 and time.time() < deadline:
    time.sleep(0.005)
try:
    ws = Workspace.open(url)
    report = ws.open_report
    print("ok", report.revision_before, report.seeded.total_added if report.seeded else 0)
except Exception as exc:
    print("failed", type(exc).__name__, str(exc)[:300])
"""


def test_four_first_runs_on_one_postgresql_database_create_it_once(
        postgres_url: str, tmp_path: Path) -> None:
    from tests.store_fixtures import dump, reset_postgres

    reset_postgres(postgres_url)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", FIRST_RUN, postgres_url, str(barrier),
                               str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT) for i in range(4)]
    results = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(r[0] == "ok" for r in results), results
    creators = [r for r in results if r[1] == "None"]
    assert len(creators) == 1, results  # one created and seeded it; three found it at head
    assert sorted(int(r[2]) for r in results) == [0, 0, 0, int(creators[0][2])]
    assert int(creators[0][2]) > 0
    rows = dump(postgres_url)
    assert len(rows["gpus"]) == len({r[1] for r in rows["gpus"]})  # each GPU once
    from planner.store import migrate

    assert rows["alembic_version"] == [(migrate.head(),)]
    reset_postgres(postgres_url)


# ======================================================================= wrong accepts
NOT_CONDITIONS = ["5", '"x"', "not 5", "0", "ttft_s", "gpus * 2", "-1", "'fits'",
                  "fits and 3", "3 or fits", "not ttft_s", "(5)", "gpu", "model"]


@pytest.mark.parametrize("constraint", NOT_CONDITIONS)
def test_a_constraint_must_be_a_condition(isolated_data_dir: Path, constraint: str) -> None:
    refused(isolated_data_dir, (*SOLVE, constraint), "condition", lines=3)


@pytest.mark.parametrize("constraint", ["fits", "fits and ttft_s <= 0.5", 'gpu == "h200"',
                                        "not fits or meets_slo", 'weight_dtype != "fp8"',
                                        "(gpus * 2 > 3) and fits", "fits == meets_slo"])
def test_conditions_still_solve(isolated_data_dir: Path, constraint: str) -> None:
    code, out, err = run(*SOLVE, constraint, "--json")
    assert code in (0, 1), err
    assert '"candidates": 4' in out


LORA_TARGETS_BAD = ["q v", "q,\nv", "q;rm -rf /", "$(reboot)", "q,`id`", "<b>q</b>", "q,,v",
                    ",q", "q,", "", " ", "q|v", "q.v", "[q]", "'q'", "q,v\x00", "ü", "1q",
                    "q" * 65, ",".join(["q"] * 101), "q\u200b", HUGE]


@pytest.mark.parametrize("targets", LORA_TARGETS_BAD, ids=range(len(LORA_TARGETS_BAD)))
def test_lora_targets_has_a_grammar(isolated_data_dir: Path, targets: str) -> None:
    refused(isolated_data_dir, ("scenario", "set", DEMO, f"lora_targets={targets}"),
            "lora_targets", "module names separated by commas")


@pytest.mark.parametrize("targets", ["q,v", "q, k, v, o", "all", "gate,up,down"])
def test_lora_targets_that_are_module_lists(isolated_data_dir: Path, targets: str) -> None:
    code, _, err = run("scenario", "set", DEMO, f"lora_targets={targets}")
    assert code == 0, err
    code, out, _ = run("scenario", "show", DEMO, "--json")
    assert f'"lora_targets": "{targets}"' in out


INVISIBLE = {"zero-width space": "\u200b", "zero-width joiner": "\u200d",
             "zero-width non-joiner": "\u200c", "right-to-left override": "\u202e",
             "byte order mark": "\ufeff", "soft hyphen": "\u00ad", "word joiner": "\u2060",
             "no-break space": "\u00a0", "ideographic space": "\u3000",
             "private use": "\ue000", "unassigned": "\u0378", "line separator": "\u2028",
             "non-character": "\ufffe", "bell": "\x07"}


@pytest.mark.parametrize("what", list(INVISIBLE))
@pytest.mark.parametrize("command", ["fleet new", "scenario new", "scenario rename",
                                     "gpu add"])
@pytest.mark.slow
def test_invisible_characters_in_names_are_refused(isolated_data_dir: Path, what: str,
                                                   command: str) -> None:
    name = f"prod{INVISIBLE[what]}x"
    args = {"fleet new": ("fleet", "new", name),
            "scenario new": ("scenario", "new", f"demo/{name}", "--model", "llama-3-8b",
                             "--gpu", "h100-sxm"),
            "scenario rename": ("scenario", "set", DEMO, f"name={name}"),
            "gpu add": ("gpu", "add", name, "memory_gib=80", "bf16_tflops=900",
                        "memory_bandwidth_gb_per_s=3000")}[command]
    refused(isolated_data_dir, args, "control character or an invisible one", "U+")


@pytest.mark.parametrize(("column", "value", "message"), [
    ("name", "zw\u200bx", "(name): must be 1 to 200 characters"),
    ("name", "rtl\u202ex", "(name): must be 1 to 200 characters"),
    ("name", "nb\u00a0sp", "(name): must be 1 to 200 characters"),
    ("lora_targets", "q v", "(lora_targets): must be module names separated by commas"),
    ("lora_targets", "q;rm -rf /", "(lora_targets): must be module names separated by commas"),
    ("lora_targets", "q" * 300, "(lora_targets): must be module names separated by commas")])
def test_bulk_import_applies_the_same_grammar(isolated_data_dir: Path, tmp_path: Path,
                                             column: str, value: str, message: str) -> None:
    import csv

    path = tmp_path / "rows.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        row = {"name": "ok-name", "model": "llama-3-8b", "gpu": "h100-sxm", "batch": "2",
               "lora_targets": "q,v", column: value}
        writer = csv.DictWriter(f, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    before = state(isolated_data_dir)
    code, _, err = run("scenario", "import", "demo", str(path))
    assert code == 2 and message in err and "Traceback" not in err
    assert max(map(len, err.splitlines())) <= MAX_MESSAGE
    assert state(isolated_data_dir) == before


def test_a_bidi_override_in_notes_is_refused_and_emoji_kept(isolated_data_dir: Path) -> None:
    refused(isolated_data_dir, ("scenario", "set", DEMO, "notes=ok\u202eevil"), "notes",
            "U+202E")
    code, _, err = run("scenario", "set", DEMO, "notes=café 👍\ttab\nline")
    assert code == 0, err


TOO_LONG = [("scenario set name", ("scenario", "set", DEMO, "name=" + "n" * 201), "name"),
            ("scenario set notes", ("scenario", "set", DEMO, "notes=" + "n" * 10_001), "notes"),
            ("fleet new", ("fleet", "new", "f" * 201), "fleet"),
            ("gpu set vendor", ("gpu", "set", "h100-sxm", "vendor=" + "v" * 201), "vendor"),
            ("gpu set label", ("gpu", "set", "h100-sxm", "label=" + "v" * 201), "label"),
            ("gpu set source", ("gpu", "set", "h100-sxm", "source=" + "s" * 2_001), "source"),
            ("calibration", ("scenario", "set", DEMO, "calibration=" + "c" * 201),
             "calibration")]


@pytest.mark.parametrize(("case", "args", "field"), TOO_LONG, ids=[t[0] for t in TOO_LONG])
def test_every_text_field_has_a_length_bound(isolated_data_dir: Path, case: str,
                                             args: tuple[str, ...], field: str) -> None:
    refused(isolated_data_dir, args, field)


ECHOED = [("scenario set field", ("scenario", "set", DEMO, f"{HUGE}=1")),
          ("scenario set value", ("scenario", "set", DEMO, f"batch={HUGE}")),
          ("scenario name", ("scenario", "show", f"demo/{HUGE}")),
          ("fleet name", ("scenario", "list", "--fleet", HUGE)),
          ("estimate flag", ("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                             "--batch", HUGE)),
          ("estimate gpu", ("estimate", "--model", "llama-3-8b", "--gpu", HUGE)),
          ("estimate model", ("estimate", "--model", HUGE, "--gpu", "h100-sxm")),
          ("sweep vary", ("sweep", DEMO, "--vary", f"batch={HUGE}")),
          ("sweep vary column", ("sweep", DEMO, "--vary", f"{HUGE}=1")),
          ("sweep show", ("sweep", DEMO, "--vary", "batch=1", "--show", HUGE)),
          ("solve objective", ("solve", DEMO, "--maximize", HUGE)),
          ("gpu field", ("gpu", "set", "h100-sxm", f"{HUGE}=1")),
          ("gpu value", ("gpu", "set", "h100-sxm", f"memory_gib={HUGE}")),
          ("version", ("scenario", "set", DEMO, "batch=2", "--if-version", HUGE)),
          ("db url", ("--db", f"sqlite:///{HUGE}/x.db", "fleet", "list"))]


@pytest.mark.parametrize(("case", "args"), ECHOED, ids=[t[0] for t in ECHOED])
def test_echoed_values_are_cut_to_a_readable_line(isolated_data_dir: Path, case: str,
                                                  args: tuple[str, ...]) -> None:
    before = state(isolated_data_dir)
    code, out, err = run(*args)
    assert code == 2, (code, out[:300], err[:300])
    lines = err.strip().splitlines()
    assert lines and "Traceback" not in err
    assert max(map(len, lines)) <= MAX_MESSAGE, max(map(len, lines))
    assert state(isolated_data_dir) == before


def test_the_net_under_every_message_cuts_a_long_line() -> None:
    from planner.cli.common import MESSAGE_LINE_MAX_CHARS, readable

    cut = readable("head " + "x" * 100_000 + " tail\nsecond line")
    first, second = cut.split("\n")
    assert len(first) <= MESSAGE_LINE_MAX_CHARS and first.startswith("head xxx")
    assert first.endswith("x tail (a line of 100,010 characters, cut)")
    assert second == "second line" and readable("short") == "short"


def test_a_long_constraint_is_shown_around_its_mistake(isolated_data_dir: Path) -> None:
    constraint = "fits" + " " * 50_000 + "and nope > 1"
    refused(isolated_data_dir, (*SOLVE, constraint), "unknown column 'nope'", lines=3)
    _code, _, err = run(*SOLVE, constraint)
    excerpt, caret = err.rstrip("\n").splitlines()[1:]
    assert len(excerpt) <= 70
    assert excerpt[caret.index("^"):].startswith("nope > 1")


# ======================================================================= suggestions
SUGGESTIONS = [
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100"),
     "did you mean h100-nvl, h100-sxm or h100-pcie?"),
    (("estimate", "--model", "llama-3-8", "--gpu", "h100-sxm"), "did you mean llama-3-8b?"),
    (("scenario", "set", DEMO, "bacth=2"), "bacth: is not a scenario field; did you mean batch?"),
    (("scenario", "set", DEMO, "promt_tokens=2"), "did you mean prompt_tokens,"),
    (("scenario", "set", "dem/llama3-8b-24gib-6x8k", "batch=2"), "did you mean demo?"),
    (("scenario", "show", "demo/llama3-8b-24gib"), "did you mean llama3-8b-24gib-6x8k?"),
    (("scenario", "set", DEMO, "gpu=h20o"), "unknown GPU 'h20o'; did you mean"),
    (("sweep", DEMO, "--vary", "bacth=1,2"), "did you mean batch?"),
    (("sweep", DEMO, "--vary", "gpu=h100"), "did you mean h100-nvl, h100-sxm or h100-pcie?"),
    (("sweep", DEMO, "--vary", "batch=1", "--show", "ttft"), "did you mean"),
    (("solve", DEMO, "--maximize", "prompt_token"), "did you mean prompt_tokens?"),
    (("gpu", "set", "h100-sxm", "memory_gb=80"), "did you mean memory_gib"),
    (("gpu", "show", "a100"), "did you mean a100-40gb, a100-80gb or a100-80gb-pcie?"),
    (("fleet", "list", "--json", "--db-typo"), "No such option '--db-typo'"),
]


@pytest.mark.parametrize(("args", "hint"), SUGGESTIONS, ids=range(len(SUGGESTIONS)))
def test_a_close_match_instead_of_the_whole_list(isolated_data_dir: Path,
                                                  args: tuple[str, ...], hint: str) -> None:
    before = state(isolated_data_dir)
    code, _, err = run(*args)
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert len(line) <= MAX_MESSAGE and "Traceback" not in err
    assert hint in err
    assert "a10, a100-40gb" not in err  # never the whole catalog
    assert state(isolated_data_dir) == before


def test_a_constraint_column_suggests_its_match(isolated_data_dir: Path) -> None:
    refused(isolated_data_dir, (*SOLVE, "fitz"), "unknown column 'fitz'; did you mean fits?",
            lines=3)


def test_close_matches_rules() -> None:
    from planner.core.errors import NotFoundError, close_matches

    names = [f"scenario-{i:06d}" for i in range(100_000)]
    error = NotFoundError("scenario in fleet 'big'", "nothing-like-it", names)
    assert str(error) == ("unknown scenario in fleet 'big' 'nothing-like-it'; 100,000 are "
                          "known (`planner scenario list`)")
    assert close_matches("scenario-00000", names) == [f"scenario-{i:06d}" for i in range(3)]
    assert close_matches("bacth", ["batch", "tp", "gpus"]) == ["batch"]
    assert close_matches("H100", ["h100-sxm", "h200"]) == ["h100-sxm"]
    assert str(NotFoundError("GPU", "x", ["a", "b"])) == "unknown GPU 'x'; known: a, b"


# ======================================================================= terminal habits
@pytest.mark.parametrize("stdin", [None, "q\n"])
def test_the_ui_without_a_terminal_says_so(isolated_data_dir: Path, stdin: str | None) -> None:
    refused(isolated_data_dir, (), "the terminal UI needs a terminal", "planner --help")
    code, _, err = run(input=stdin)
    assert code == 2 and "standard input and output are not terminals" in err


def test_the_ui_piped_in_a_real_process(isolated_data_dir: Path) -> None:
    proc = planner(shell="echo | $PLANNER | cat", timeout=60)
    assert b"\x1b[" not in proc.stdout  # no escape codes written into the pipe
    one_line(proc.stderr.decode(), "the terminal UI needs a terminal")


@pytest.fixture
def no_network_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """A Hub endpoint that refuses connections (a closed port on this machine: no network is
    touched), no proxies, an empty cache; yields the calls to ``hf_hub_download``."""
    import socket

    import huggingface_hub

    from planner.service import hub

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: connecting is refused
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for proxy in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                  "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setattr(hub, "_unreachable", {})
    calls: list[Any] = []
    real = huggingface_hub.hf_hub_download

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        if not kwargs.get("local_files_only"):
            raise AssertionError("a download was tried although the Hub is unreachable")
        return real(*args, **kwargs)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", recording)
    yield calls


def test_an_unreachable_hub_reads_the_cache_only(isolated_data_dir: Path,
                                                 no_network_hub: list[Any]) -> None:
    code, _, err = run("model", "inspect", "Qwen/Qwen3-8B")
    assert code == 2
    one_line(err, "Qwen/Qwen3-8B: config.json is not in the Hugging Face cache",
             "and the Hub cannot be reached", "hf download Qwen/Qwen3-8B")
    assert no_network_hub and all(c["local_files_only"] for c in no_network_hub)
    code, _, err = run("model", "import", "Qwen/Qwen3-8B")
    assert code == 2 and "the Hub cannot be reached" in err


def test_the_hub_probe_is_bounded_and_remembered(monkeypatch: pytest.MonkeyPatch,
                                                 no_network_hub: list[Any]) -> None:
    from planner.service import hub

    assert hub.hub_unreachable() is True
    attempts = []
    monkeypatch.setattr("socket.create_connection",
                        lambda *a, **k: attempts.append(a) or (_ for _ in ()).throw(OSError))
    assert hub.hub_unreachable() is True and attempts == []  # once per process
    monkeypatch.setattr(hub, "_unreachable", {})
    monkeypatch.setattr(hub, "HUB_PROBE_TIMEOUT_S", 0.2)
    def hang(*_a: Any, **_k: Any) -> None:
        time.sleep(2)
        raise OSError("name lookup timed out")

    monkeypatch.setattr("socket.create_connection", hang)
    assert hub.hub_unreachable() is True  # a hanging name lookup counts as unreachable


def test_the_probe_goes_through_the_https_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.service import hub

    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert hub._probe_address() == ("proxy.internal", 3128)
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.delenv("https_proxy", raising=False)
    assert hub._probe_address() == ("huggingface.co", 443)


CATEGORIES = {
    "tracebacks": ("test_a_constraint_comparing_text_with_a_number_is_one_message",
                   "test_sweep_out_name_over_the_system_limit",
                   "test_data_folder_name_over_the_system_limit",
                   "test_hub_ids_the_hub_cannot_hold", "test_data_folder_that_is_a_file",
                   "test_data_folder_not_writable", "test_home_unset_and_data_home_unusable",
                   "test_scenario_whose_gpu_was_deleted_outside_the_planner",
                   "test_stdout_closed", "test_non_utf8_terminal_gets_ascii_tables",
                   "test_ascii_fallback_spells_symbols",
                   "test_sweep_chart_of_a_million_rows_references_what_a_chart_can"),
    "database": ("test_dropped_change_log_is_noticed", "test_database_of_another_application",
                 "test_damaged_pages_are_not_healthy",
                 "test_empty_database_file_is_created_not_listed_as_healthy",
                 "test_in_memory_sqlite_is_refused", "test_db_in_a_missing_folder_is_an_error",
                 "test_the_default_data_folder_is_still_created",
                 "test_four_first_runs_on_one_postgresql_database_create_it_once"),
    "wrong accepts": ("test_a_constraint_must_be_a_condition", "test_conditions_still_solve",
                      "test_lora_targets_has_a_grammar",
                      "test_lora_targets_that_are_module_lists",
                      "test_invisible_characters_in_names_are_refused",
                      "test_bulk_import_applies_the_same_grammar",
                      "test_a_bidi_override_in_notes_is_refused_and_emoji_kept",
                      "test_every_text_field_has_a_length_bound",
                      "test_echoed_values_are_cut_to_a_readable_line",
                      "test_a_long_constraint_is_shown_around_its_mistake",
                      "test_the_net_under_every_message_cuts_a_long_line"),
    "suggestions": ("test_a_close_match_instead_of_the_whole_list",
                    "test_a_constraint_column_suggests_its_match", "test_close_matches_rules"),
    "terminal habits": ("test_the_ui_without_a_terminal_says_so",
                        "test_the_ui_piped_in_a_real_process",
                        "test_an_unreachable_hub_reads_the_cache_only",
                        "test_the_hub_probe_is_bounded_and_remembered",
                        "test_the_probe_goes_through_the_https_proxy"),
}
"""The category of every test of this module (``python -m tests.cli.test_hostile_cli`` counts the
collected cases by category)."""


def test_every_case_has_a_category() -> None:
    tests = {name for name in globals() if name.startswith("test_")}
    listed = [name for names in CATEGORIES.values() for name in names]
    assert sorted(listed) == sorted(tests - {"test_every_case_has_a_category"})


def count_cases() -> dict[str, int]:
    """Collected test cases (each parametrized case once) per category."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", __file__], capture_output=True, text=True,
                          cwd=ROOT)
    ids = [line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]
    of = {name: category for category, names in CATEGORIES.items() for name in names}
    counts = dict.fromkeys(CATEGORIES, 0)
    for case in ids:
        name = case.split("[", 1)[0]
        if name in of:
            counts[of[name]] += 1
    return counts


if __name__ == "__main__":
    counted = count_cases()
    for category, count in counted.items():
        print(f"{category}: {count}")
    print(f"total: {sum(counted.values())}")
