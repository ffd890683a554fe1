"""Issue 14 item 1: bulk import of scenarios from CSV, .xlsx, Parquet and DataFrames.

Every path is all-or-nothing (a bad row far down, or a row the database refuses, leaves the
database exactly as it was), reports every problem as ``FILE:line (column): message``, and
stores the same scenario ``planner scenario new`` would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner.core.errors import PlannerError
from planner.service import Workspace
from planner.service.bulk import BulkImportError
from tests.helpers import run
from tests.store_fixtures import dump

HEADER = "name,model,gpu,batch,tp,gpus,prompt_tokens,weight_dtype,target_requests_per_s,notes"
ROWS = [
    "chat,llama-3-8b,h100-sxm,32,1,1,2048,bf16,2.5,support bot",
    "rag,Llama-3-8B,H200,8,2,4,8192,fp8,0.5,",
    "big,llama-3-70b,h100-sxm,16,4,8,4096,int4,1200/min,\"two, words\"",
]


@pytest.fixture
def ws_url(db_url: str) -> str:
    """These workspace tests run on each backend."""
    return db_url


@pytest.fixture
def ws(ws: Workspace, db_url: str) -> Workspace:
    """The shared workspace, with an empty fleet ``bulk``. (``db_url`` named here too: pytest
    parametrizes by the arguments of the overriding fixture, not of the one it extends.)"""
    ws.new_fleet("bulk")
    return ws


def write_csv(path: Path, rows: list[str], header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _typed(text: str) -> Any:
    """A CSV cell as a spreadsheet holds it: a number where it reads as one, else text."""
    if not text:
        return None
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return text


EXPECTED = {  # the three rows above as planner scenario new stores them
    "chat": {"model": "llama-3-8b", "gpu": "h100-sxm", "batch": 32, "tp": 1, "gpus": 1,
             "prompt_tokens": 2048, "weight_dtype": "bf16", "target_requests_per_s": 2.5,
             "notes": "support bot"},
    "rag": {"model": "llama-3-8b", "gpu": "h200", "batch": 8, "tp": 2, "gpus": 4,
            "prompt_tokens": 8192, "weight_dtype": "fp8", "target_requests_per_s": 0.5,
            "notes": ""},
    "big": {"model": "llama-3-70b", "gpu": "h100-sxm", "batch": 16, "tp": 4, "gpus": 8,
            "prompt_tokens": 4096, "weight_dtype": "int4", "target_requests_per_s": 20.0,
            "notes": "two, words"},
}


def test_csv_import_stores_what_scenario_new_stores(ws: Workspace, tmp_path: Path) -> None:
    result = ws.import_scenarios("bulk", write_csv(tmp_path / "s.csv", ROWS))
    assert (result.rows, result.created, result.replaced, result.skipped) == (3, 3, 0, 0)
    ws.new_fleet("one-by-one")
    for name, fields in EXPECTED.items():
        ws.new_scenario("one-by-one", name, **fields)
    bulk = {s.name: s for s in ws.scenarios("bulk")}
    single = {s.name: s for s in ws.scenarios("one-by-one")}
    assert sorted(bulk) == ["big", "chat", "rag"]
    for name in EXPECTED:
        a, b = bulk[name], single[name]
        assert (a.model, a.gpu, a.kind, a.notes, a.lora_targets, a.version) == \
               (b.model, b.gpu, b.kind, b.notes, b.lora_targets, 1)
        assert a.inputs == b.inputs
    assert ws.fleet("bulk").scenario_count == 3
    # the stored rows evaluate like any other: Llama-3-8B bf16 weights are 14.9575 GiB
    out = ws.evaluate(bulk["chat"])
    assert round(out["weights_bytes"] / 2**30, 4) == 14.9575


def test_every_format_gives_the_same_scenarios(ws: Workspace, tmp_path: Path) -> None:
    frame = pd.read_csv(write_csv(tmp_path / "s.csv", ROWS), dtype=str,
                        keep_default_na=False)
    xlsx = tmp_path / "s.xlsx"
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.append(list(frame.columns))
    for row in frame.itertuples(index=False):  # typed cells, as a person's sheet has them
        sheet.append([_typed(v) for v in row])
    wb.save(xlsx)
    parquet = tmp_path / "s.parquet"
    typed = frame.assign(**{c: pd.to_numeric(frame[c]) for c in ("batch", "tp", "gpus",
                                                                  "prompt_tokens")})
    pq.write_table(pa.Table.from_pandas(typed, preserve_index=False), parquet)
    fleets = {"csv": tmp_path / "s.csv", "xlsx": xlsx, "parquet": parquet, "frame": frame}
    stored = {}
    for fleet, source in fleets.items():
        ws.new_fleet(fleet)
        assert ws.import_scenarios(fleet, source).created == 3
        stored[fleet] = {s.name: (s.model, s.gpu, s.notes, s.inputs)
                         for s in ws.scenarios(fleet)}
    assert stored["xlsx"] == stored["csv"] == stored["parquet"] == stored["frame"]
    assert stored["csv"]["big"][3]["target_requests_per_s"] == 20.0  # 1200/min


@pytest.mark.slow
def test_bad_row_at_line_50001_leaves_the_database_unchanged(ws: Workspace, db_url: str,
                                                             tmp_path: Path) -> None:
    rows = [f"s{i},llama-3-8b,h100-sxm,{1 + i % 64},1,1,1024,bf16,1," for i in range(50_000)]
    rows[49_999] = "s49999,llama-3-8b,h100-sxm,0,1,1,1024,bf16,1,"
    path = write_csv(tmp_path / "big.csv", rows)
    before = dump(db_url)
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", path)
    assert caught.value.total == 1
    assert caught.value.lines == [
        f"{path}:50001 (batch): must be an integer from 1 to 10,000,000 (got '0')"]
    assert dump(db_url) == before


@pytest.mark.slow
def test_a_row_the_database_refuses_rolls_back_every_row(ws: Workspace, db_url: str,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The last of 12,000 rows breaks the database's CHECK (gpus a multiple of tp*pp) after
    the validation passed it: the batched INSERT (SQLite executemany, PostgreSQL COPY) fails
    and the rows written before it in the same transaction are gone too."""
    from planner.compute import checks

    real = checks.check_table

    def slipped(*args: Any, **kwargs: Any) -> Any:
        table = real(*args, **kwargs)
        table.inputs["gpus"][-1] = 3
        table.inputs["tp"][-1] = 2
        return table

    monkeypatch.setattr(checks, "check_table", slipped)
    rows = [f"s{i},llama-3-8b,h100-sxm,8,1,1,1024,bf16,1," for i in range(12_000)]
    before = dump(db_url)
    with pytest.raises(PlannerError, match="the database refused the change"):
        ws.import_scenarios("bulk", write_csv(tmp_path / "s.csv", rows))
    assert dump(db_url) == before
    assert ws.fleet("bulk").scenario_count == 0


def test_every_problem_is_reported_with_file_line_and_column(ws: Workspace,
                                                             tmp_path: Path) -> None:
    ws.new_scenario("bulk", "taken", model="llama-3-8b", gpu="h100-sxm")
    rows = [
        "ok,llama-3-8b,h100-sxm,4,1,1,1024,bf16,1,",
        "taken,llama-3-8b,h100-sxm,4,1,1,1024,bf16,1,",
        "x,llama-9,h100-sxm,4,1,1,1024,bf16,1,",
        "y,llama-3-8b,quantum,NaN,1,1,-5,bf17,1,",
        "ok,llama-3-8b,h100-sxm,4,3,3,1024,bf16,inf,",
        ",llama-3-8b,h100-sxm,,1,1,1024,bf16,1,",
    ]
    path = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", path)
    p = str(path)
    assert caught.value.lines == [
        f"{p}:3 (name): 'taken' is already a scenario of fleet 'bulk'; choose another name, "
        "or replace it (--replace) or keep it (--skip-existing)",
        f"{p}:4 (model): unknown model 'llama-9'; known: deepseek-v3, llama-2-7b, "
        "llama-3-70b, llama-3-8b, mistral-7b, mixtral-8x7b, qwen2.5-32b-instruct",
        f"{p}:5 (gpu): unknown GPU 'quantum'; known: a10, a100-40gb, a100-80gb, "
        "a100-80gb-pcie, b200, b300, gaudi3, gb200, gb300, h100-nvl, h100-pcie, h100-sxm, …",
        f"{p}:5 (weight_dtype): must be one of auto, bf16, fp16, fp8, int8, int4, mxfp4, "
        "nvfp4 (got 'bf17')",
        f"{p}:5 (batch): must be an integer from 1 to 10,000,000 (got 'NaN')",
        f"{p}:5 (prompt_tokens): must be an integer from 1 to 100,000,000 (got '-5')",
        f"{p}:6 (name): 'ok' is also the name on line 2; names in a fleet are unique",
        f"{p}:6 (target_requests_per_s): must be a number from 0 to 1,000,000,000 "
        "(got 'inf')",
        f"{p}:7 (name): is empty; every scenario needs a name",
    ]
    assert caught.value.total == 9
    assert [s.name for s in ws.scenarios("bulk")] == ["taken"]


MIXED_HEADER = ("name,model,gpu,kind,batch,prompt_tokens,mfu,reserve_fraction,train_tokens,"
                "train_seq_len,zero_stage,activation_recompute,weight_dtype")


def test_mixed_kinds_leave_the_other_kinds_columns_empty(ws: Workspace, db_url: str,
                                                         tmp_path: Path) -> None:
    """An empty cell is "not given": an inference row leaves train_tokens empty, a training
    row leaves batch empty, and either may leave any input empty; each gets the default of
    its own kind (training: MFU 0.4 and no reserve; inference: MFU 0.5, reserve 10 %)."""
    rows = [
        "serve,llama-3-8b,h100-sxm,inference,32,2048,,,,,,,bf16",
        "train,llama-3-8b,h100-sxm,training,,,,,2e9,8192,3,false,",
        "both-empty,llama-3-8b,h100-sxm,,,,,,,,,,",
        "tuned,llama-3-8b,h100-sxm,training,,,0.35,0.05,,,,,",
    ]
    result = ws.import_scenarios("bulk", write_csv(tmp_path / "mixed.csv", rows,
                                                   MIXED_HEADER))
    assert result.created == 4
    got = {s.name: s for s in ws.scenarios("bulk")}
    serve, train = got["serve"].inputs, got["train"].inputs
    assert (got["serve"].kind, serve["batch"], serve["prompt_tokens"]) == ("inference", 32, 2048)
    assert (serve["mfu"], serve["reserve_fraction"], serve["weight_dtype"]) == (0.5, 0.1, "bf16")
    assert (got["train"].kind, train["train_tokens"], train["train_seq_len"]) == \
        ("training", 2e9, 8192)
    assert (train["zero_stage"], train["activation_recompute"]) == (3, False)
    assert (train["mfu"], train["reserve_fraction"], train["weight_dtype"]) == (0.4, 0.0, "auto")
    assert (train["micro_batch_size"], train["lora_rank"]) == (1, 0)  # not in the file
    empty = got["both-empty"]
    assert (empty.kind, empty.inputs["batch"], empty.inputs["prompt_tokens"],
            empty.inputs["mfu"], empty.inputs["weight_dtype"]) == ("inference", 1, 1024, 0.5,
                                                                    "auto")
    assert (got["tuned"].inputs["mfu"], got["tuned"].inputs["reserve_fraction"]) == (0.35, 0.05)
    # the same rows one by one through scenario new store the same inputs
    ws.new_fleet("one-by-one")
    ws.new_scenario("one-by-one", "train", model="llama-3-8b", gpu="h100-sxm",
                    kind="training", train_tokens=2e9, train_seq_len=8192, zero_stage=3,
                    activation_recompute=False)
    assert ws.scenarios("one-by-one")[0].inputs == train


def test_a_required_column_left_empty_is_refused_and_nothing_changes(
        ws: Workspace, db_url: str, tmp_path: Path) -> None:
    rows = [
        "a,llama-3-8b,h100-sxm,inference,8,,,,,,,,",
        "b,,h100-sxm,training,,,,,1e9,,,,",
        "c,llama-3-8b,,inference,,,,,,,,,",
    ]
    path = write_csv(tmp_path / "required.csv", rows, MIXED_HEADER)
    before = dump(db_url)
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", path)
    assert caught.value.total == 2
    assert caught.value.lines[0].startswith(f"{path}:3 (model): is empty; must be a model of "
                                            "the catalog (deepseek-v3, ")
    assert caught.value.lines[1].startswith(f"{path}:4 (gpu): is empty; must be a GPU of the "
                                            "catalog (a10, ")
    assert dump(db_url) == before


def test_cross_column_rules_are_checked_per_row(ws: Workspace, tmp_path: Path) -> None:
    header = "name,model,gpu,tp,pp,gpus,kind,lora_rank,lora_targets,calibration"
    rows = [
        "a,llama-3-8b,h100-sxm,3,1,3,inference,0,,auto",
        "b,llama-3-8b,h100-sxm,2,1,3,inference,0,,auto",
        "c,llama-3-8b,h100-sxm,1,64,64,inference,0,,auto",
        "d,llama-3-8b,h100-sxm,1,1,1,training,8,\"q,zz\",auto",
        "e,llama-3-8b,h100-sxm,1,1,1,inference,0,,no-such-profile",
        "f,llama-3-8b,h100-sxm,1,1,1,training,8,\"q,v\",auto",
    ]
    path = write_csv(tmp_path / "rules.csv", rows, header)
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", path)
    p = str(path)
    assert caught.value.lines == [
        f"{p}:2 (tp): must divide the 32 attention heads of llama-3-8b (got 3)",
        f"{p}:3 (gpus): must be a multiple of tp*pp = 2 (got 3)",
        f"{p}:4 (pp): must be at most the 32 layers of llama-3-8b (got 64)",
        f"{p}:5 (lora_targets): must name modules of llama-3-8b: one or more of q, k, v, o, "
        "gate, up, down (or all) (got 'zz')",
        f"{p}:6 (calibration): auto, none or a calibration profile name (no profiles "
        "here: planner calibrate makes one) (got 'no-such-profile')",
    ]


def test_problems_beyond_twenty_are_counted(ws: Workspace, tmp_path: Path) -> None:
    rows = [f"s{i},llama-3-8b,h100-sxm,-{i + 1},1,1,1024,bf16,1," for i in range(30)]
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", write_csv(tmp_path / "s.csv", rows))
    assert caught.value.total == 30 and len(caught.value.lines) == 20
    assert caught.value.lines[-1].endswith(":21 (batch): must be an integer from 1 to "
                                           "10,000,000 (got '-20')")
    assert str(caught.value).endswith("… and 10 more (30 problems in all)")


def test_name_clashes_refuse_skip_or_replace(ws: Workspace, db_url: str,
                                             tmp_path: Path) -> None:
    path = write_csv(tmp_path / "s.csv", ROWS)
    ws.import_scenarios("bulk", path)
    before = dump(db_url)
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", path)
    assert caught.value.total == 3
    assert dump(db_url) == before
    skipped = ws.import_scenarios("bulk", path, on_clash="skip")
    assert (skipped.created, skipped.replaced, skipped.skipped) == (0, 0, 3)
    assert dump(db_url) == before
    changed = [ROWS[0].replace(",32,", ",64,"), *ROWS[1:], "new,llama-3-8b,l40s,1,1,1,512,bf16,0,"]
    result = ws.import_scenarios("bulk", write_csv(tmp_path / "t.csv", changed),
                                 on_clash="replace")
    assert (result.rows, result.created, result.replaced, result.skipped) == (4, 1, 1, 2)
    chat = ws.scenario("bulk", "chat")
    assert (chat.inputs["batch"], chat.version) == (64, 2)
    history = ws.history("bulk", "chat")
    assert [(c.field, c.old_value, c.new_value) for c in history] == [("batch", 32, 64)]
    undone = ws.undo("bulk")
    assert undone is not None and [(c.field, c.old_value) for c in undone] == [("batch", 32)]
    assert ws.scenario("bulk", "chat").inputs["batch"] == 32
    assert ws.fleet("bulk").scenario_count == 4


def test_dry_run_checks_everything_and_writes_nothing(ws: Workspace, db_url: str,
                                                      tmp_path: Path) -> None:
    before = dump(db_url)
    result = ws.import_scenarios("bulk", write_csv(tmp_path / "s.csv", ROWS), dry_run=True)
    assert (result.rows, result.created, result.dry_run) == (3, 3, True)
    assert dump(db_url) == before


def test_dataframe_problems_name_the_row_label(ws: Workspace) -> None:
    frame = pd.DataFrame({"name": ["a", "b"], "model": ["llama-3-8b"] * 2,
                          "gpu": ["h100-sxm"] * 2, "batch": [4, -1]}, index=[10, 11])
    with pytest.raises(BulkImportError) as caught:
        ws.import_scenarios("bulk", frame)
    assert caught.value.lines == [
        "DataFrame:row 11 (batch): must be an integer from 1 to 10,000,000 (got -1)"]
    assert ws.import_scenarios("bulk", frame.iloc[:1]).created == 1
    assert ws.scenario("bulk", "a").inputs["batch"] == 4


def test_cli_empty_file_header_and_unknown_column(tmp_path: Path) -> None:
    assert run("fleet", "new", "bulk")[0] == 0
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, _, err = run("scenario", "import", "bulk", str(empty))
    assert (code, err) == (2, f"Error: {empty}: empty; the first line must be a header "
                              "name,model,gpu[,input columns…]; nothing imported\n")
    header_only = write_csv(tmp_path / "h.csv", [], "name,model,gpu")
    code, _, err = run("scenario", "import", "bulk", str(header_only))
    assert (code, err) == (2, f"Error: {header_only}: no scenario rows under the header; "
                              "nothing imported\n")
    bad = write_csv(tmp_path / "b.csv", ["a,llama-3-8b,4,7"], "name,model,batch,colour")
    code, _, err = run("scenario", "import", "bulk", str(bad))
    lines = err.splitlines()
    assert code == 2 and lines[0] == f"Error: {bad}: nothing imported, 2 problems:"
    assert lines[1].startswith(f"  {bad}:1 (colour): unknown column; columns are name, model, "
                               "gpu, kind, notes, lora_targets and the scenario inputs (")
    assert lines[2] == f"  {bad}:1 (gpu): missing column; the header must start with " \
                       "name,model,gpu"
    code, _, err = run("scenario", "import", "bulk", str(tmp_path / "s.txt"))
    assert (code, err) == (2, f"Error: {tmp_path / 's.txt'}: unknown file type '.txt'; give a "
                              ".csv, .xlsx, .parquet file\n")
    code, out, _ = run("scenario", "list", "--fleet", "bulk", "--json")
    assert json.loads(out) == []


def test_cli_round_trip_through_scenario_list_json(tmp_path: Path) -> None:
    assert run("fleet", "new", "bulk")[0] == 0
    path = write_csv(tmp_path / "s.csv", ROWS)
    code, out, err = run("scenario", "import", "bulk", str(path), "--json")
    assert code == 0, err
    assert json.loads(out) == {"fleet": "bulk", "file": str(path), "rows": 3, "created": 3,
                               "replaced": 0, "skipped": 0, "dry_run": False}
    code, out, _ = run("scenario", "list", "--fleet", "bulk", "--json")
    listed = {r["name"]: r for r in json.loads(out)}
    assert sorted(listed) == sorted(EXPECTED)
    for name, fields in EXPECTED.items():
        record = listed[name]
        got = {"model": record["model"], "gpu": record["gpu"], "notes": record["notes"],
               **{k: record["inputs"][k] for k in fields if k not in ("model", "gpu",
                                                                      "notes")}}
        assert got == fields
    # and back: the listed inputs written as a CSV import into another fleet unchanged
    columns = ["name", "model", "gpu", "notes", *listed["chat"]["inputs"]]
    frame = pd.DataFrame([{"name": r["name"], "model": r["model"], "gpu": r["gpu"],
                           "notes": r["notes"], **r["inputs"]} for r in listed.values()],
                         columns=columns)
    again = tmp_path / "again.csv"
    frame.to_csv(again, index=False)
    assert run("fleet", "new", "copy")[0] == 0
    code, out, err = run("scenario", "import", "copy", str(again))
    assert code == 0, err
    assert out == f"imported 3 rows of {again} into fleet copy: 3 created\n"
    code, out, _ = run("scenario", "list", "--fleet", "copy", "--json")
    copied = {r["name"]: r["inputs"] for r in json.loads(out)}
    assert copied == {name: r["inputs"] for name, r in listed.items()}


def test_cli_flags_and_dry_run(tmp_path: Path) -> None:
    assert run("fleet", "new", "bulk")[0] == 0
    path = write_csv(tmp_path / "s.csv", ROWS)
    code, out, _ = run("scenario", "import", "bulk", str(path), "--dry-run")
    assert (code, out) == (0, f"would import 3 rows of {path} into fleet bulk: 3 created "
                              "(dry run: nothing written)\n")
    assert run("scenario", "import", "bulk", str(path))[0] == 0
    code, _, err = run("scenario", "import", "bulk", str(path))
    assert code == 2 and err.startswith(f"Error: {path}: nothing imported, 3 problems:")
    code, out, _ = run("scenario", "import", "bulk", str(path), "--skip-existing")
    assert out == f"imported 3 rows of {path} into fleet bulk: 0 created, 3 skipped\n"
    code, out, _ = run("scenario", "import", "nofleet", str(path))
    assert code == 2


@pytest.mark.slow
def test_workbook_new_rows_go_in_as_one_batch_equal_to_their_originals(
        ws: Workspace, db_url: str, tmp_path: Path) -> None:
    """``planner import``: every demo scenario (inference and training sheets) copied as a
    new row is stored with the same inputs as its original; a new row whose name breaks the
    name rule is refused with its cell, nothing written."""
    from planner.io.xlsx.layout import SCENARIO_SHEETS, letters, scenario_columns
    from planner.io.xlsx.read_scenarios import ImportError_

    path = tmp_path / "r.xlsx"
    ws.export(path, ["demo"])
    wb = openpyxl.load_workbook(path)
    for kind, title in SCENARIO_SHEETS.items():
        if title not in wb.sheetnames:
            continue
        sheet, col = wb[title], letters(kind)
        last = sheet.max_row
        for r in range(2, last + 1):
            new = last + r - 1
            for c in scenario_columns(kind):
                if c.role in ("meta", "input"):
                    sheet[f"{col[c.key]}{new}"] = sheet[f"{col[c.key]}{r}"].value
            sheet[f"{col['id']}{new}"] = None
            sheet[f"{col['version']}{new}"] = None
            original = sheet[f"{col['name']}{r}"].value
            sheet[f"{col['name']}{new}"] = f"{original} copy"
    wb.save(path)
    before = {s.name: s for s in ws.scenarios("demo")}
    plans = ws.import_workbook(path)
    assert sum(p.id is None for p in plans) == len(before) == 10
    after = {s.name: s for s in ws.scenarios("demo")}
    assert len(after) == 20
    for name, original in before.items():
        copy = after[f"{name} copy"]
        assert (copy.kind, copy.model, copy.gpu, copy.notes, copy.lora_targets, copy.version) \
            == (original.kind, original.model, original.gpu, original.notes,
                original.lora_targets, 1)
        assert copy.inputs == original.inputs, name
    # a new row with a 201-character name: refused at its cell, nothing written
    ws.export(tmp_path / "again.xlsx", ["demo"])
    wb = openpyxl.load_workbook(tmp_path / "again.xlsx")
    sheet, col = wb["Scenarios"], letters("inference")
    row = sheet.max_row + 1
    for c in scenario_columns("inference"):
        if c.role in ("meta", "input") and c.key not in ("id", "version"):
            sheet[f"{col[c.key]}{row}"] = sheet[f"{col[c.key]}2"].value
    sheet[f"{col['name']}{row}"] = "x" * 201
    wb.save(path)
    snapshot = dump(db_url)
    with pytest.raises(ImportError_) as caught:
        ws.import_workbook(path)
    assert [str(e) for e in caught.value.errors] == [
        f"Scenarios!{col['name']}{row} (name): must be 1 to 200 characters without control "
        f"characters (got {'x' * 40!r})"]
    assert dump(db_url) == snapshot
