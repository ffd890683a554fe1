"""Benchmark (issue 14 item 1): creating a fleet of N new scenarios from a file.

For each size (default 1,000, 10,000 and 100,000 rows) the same generated scenarios are
written as a planner workbook with new rows (a Scenarios sheet whose id cells are empty), a
CSV, a plain .xlsx table and a Parquet file (when pyarrow is installed); each is imported into
a new fleet of a fresh SQLite database (or ``--db URL``, emptied first: give a scratch
PostgreSQL database there), in-process, and timed:

* ``workbook``: ``planner import`` of the workbook (``Workspace.import_workbook``), the way to
  create a fleet from a file before the bulk path (issue 14's table: 4.4 s, 41.9 s, 281 s). It
  reads sheets of up to Excel's 1,048,575 rows, streamed (``planner.io.xlsx.stream``); it is
  timed up to ``--workbook-max`` rows (default 100,000);
* ``workbook dry``: its ``--dry-run``;
* ``csv``, ``xlsx``, ``parquet``: ``planner scenario import`` (``Workspace.import_scenarios``),
  and ``csv dry`` its ``--dry-run``.

Run it on the code to compare (``PYTHONPATH=/path/to/other/checkout``): a checkout without the
bulk path prints only the workbook columns.

    python benchmarks/bench_bulk.py [--sizes 1000,10000,100000] [--workbook-max 50000]
                                    [--db URL]

``--memory`` (issue 28 item 5) instead runs each import (dry run) in a fresh process and
prints its peak RSS, the RSS of the same process before the import, and the bytes per row
between them; the workbook of new rows is written straight as sheet XML (every input cell
filled, as an export writes it), so a million-row file takes seconds to make:

    python benchmarks/bench_bulk.py --memory --sizes 10000,50000,100000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

MODELS = ("llama-3-8b", "llama-2-7b", "mistral-7b", "qwen2.5-32b-instruct", "llama-3-70b")
GPUS = ("h100-sxm", "h200", "a100-80gb", "l40s", "mi300x")
COLUMNS = ("name", "model", "gpu", "batch", "tp", "gpus", "prompt_tokens", "output_tokens",
           "weight_dtype", "kv_dtype", "target_requests_per_s", "notes")


def rows(count: int, seed: int = 0) -> list[tuple[Any, ...]]:
    """``count`` valid inference scenarios over five models and five GPUs."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        tp = rng.choice((1, 2, 4, 8))
        out.append((f"s{i:06d}", rng.choice(MODELS), rng.choice(GPUS), rng.randint(1, 256), tp,
                    tp * rng.randint(1, 4), rng.choice((512, 1024, 4096)),
                    rng.choice((128, 256)), rng.choice(("bf16", "fp8", "int4")),
                    rng.choice(("bf16", "fp8")), round(rng.random() * 10, 3), f"row {i}"))
    return out


def write_csv(path: Path, data: list[tuple[Any, ...]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(",".join(COLUMNS) + "\n")
        fh.writelines(",".join(map(str, r)) + "\n" for r in data)


def write_table_xlsx(path: Path, data: list[tuple[Any, ...]]) -> None:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    sheet = wb.create_sheet("scenarios")
    sheet.append(list(COLUMNS))
    for r in data:
        sheet.append(list(r))
    wb.save(path)


def write_parquet(path: Path, data: list[tuple[Any, ...]]) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    columns = list(zip(*data, strict=True))
    pq.write_table(pa.table({c: list(v) for c, v in zip(COLUMNS, columns, strict=True)}), path)
    return True


def write_workbook(path: Path, data: list[tuple[Any, ...]], fleet: str) -> None:
    """A planner report's Scenarios sheet holding ``data`` as new rows (no id, no version),
    every other input at its default and the output columns empty."""
    import openpyxl

    from planner.compute.inputs import INFERENCE_INPUTS
    from planner.io.xlsx.layout import scenario_columns

    columns = scenario_columns("inference")
    defaults = {c.name: c.default for c in INFERENCE_INPUTS}
    wb = openpyxl.Workbook(write_only=True)
    sheet = wb.create_sheet("Scenarios")
    sheet.append([c.header for c in columns])
    keys = [c.key for c in columns if c.role in ("meta", "input")]
    for r in data:
        given = dict(zip(COLUMNS, r, strict=True))
        values = {**defaults, **given, "fleet": fleet, "id": None, "version": None}
        sheet.append([values.get(k) for k in keys])
    wb.save(path)


def write_workbook_fast(path: Path, count: int, fleet: str) -> None:
    """A planner report of ``count`` new inference rows (no id, no version) in fleet
    ``fleet``, the cells of the meta and input columns only, written as sheet XML: the
    export of one scenario, its data row repeated with a new name and row number."""
    import re
    import zipfile

    from planner.io.xlsx.layout import scenario_columns
    from planner.io.xlsx.parts import column_letters, sheet_parts
    from planner.service import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "one.xlsx"
        with Workspace.open(f"sqlite:///{Path(tmp) / 't.db'}") as ws:
            ws.new_fleet(fleet)
            ws.new_scenario(fleet, "template", model="llama-3-8b", gpu="h100-sxm", notes="n")
            ws.export(template, [fleet])
        columns = scenario_columns("inference")
        kept = {column_letters(i): c.key for i, c in enumerate(columns, 1)
                if c.role in ("meta", "input") and c.key not in ("id", "version")}
        with zipfile.ZipFile(template) as src, \
                zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
            member = sheet_parts(src)["Scenarios"]
            for item in src.infolist():
                data = src.read(item.filename)
                if item.filename != member:
                    dst.writestr(item, data)
                    continue
                xml = data.decode()
                head = xml[:xml.index("<sheetData>") + len("<sheetData>")]
                header = re.search(r'<row r="1".*?</row>', xml, re.S).group(0)
                tail = xml[xml.index("</sheetData>"):]
                cells = [(m.group(1), m.group(0)) for m in re.finditer(
                    r'<c r="([A-Z]+)2"[^>]*?(?:/>|>.*?</c>)', xml, re.S)
                    if m.group(1) in kept and kept[m.group(1)] != "name"]
                name_letter = next(k for k, v in kept.items() if v == "name")
                head = re.sub(r'<dimension ref="[^"]*"/>', "", head)
                with dst.open(item.filename, "w", force_zip64=True) as out:
                    out.write((head + header).encode())
                    template_row = re.sub(r'r="([A-Z]+)2"', 'r="\\1\x00"',
                                          "".join(c for _l, c in cells))
                    for r in range(2, count + 2):
                        name = (f'<c r="{name_letter}{r}" t="inlineStr"><is><t>s{r:07d}</t>'
                                "</is></c>")
                        rest = template_row.replace("\x00", str(r))
                        out.write(f'<row r="{r}">{name}{rest}</row>'.encode())
                    out.write(tail.encode())


def peak_rss(kind: str, path: Path, fleet: str) -> tuple[float, float, float]:
    """(seconds, RSS before, peak RSS in bytes) of a dry-run import of ``path`` in a fresh
    process: ``kind`` ``workbook`` (``planner import``) or ``table`` (``scenario import``)."""
    import json
    import subprocess
    import sys

    code = f"""
import json, resource, sys, tempfile, time
from pathlib import Path
from planner.service import Workspace
with tempfile.TemporaryDirectory() as tmp, Workspace.open(f"sqlite:///{{tmp}}/m.db") as ws:
    ws.new_fleet({fleet!r})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    if {kind!r} == "workbook":
        plans = ws.import_workbook(Path({str(path)!r}), dry_run=True)
    else:
        plans = ws.import_scenarios({fleet!r}, Path({str(path)!r}), dry_run=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps([seconds, before, peak]))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return float("nan"), float("nan"), float("nan")
    seconds, before, peak = json.loads(proc.stdout.strip().splitlines()[-1])
    return seconds, before, peak


def memory(sizes: list[int]) -> None:
    """Peak RSS of the workbook and the table (.csv, .xlsx) imports at each size."""
    print(f"{'rows':>10} {'import':>16} {'file MB':>8} {'s':>8} {'RSS before MiB':>14} "
          f"{'peak RSS MiB':>12} {'B/row':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            book, table, csv = folder / "new.xlsx", folder / "t.xlsx", folder / "t.csv"
            write_workbook_fast(book, size, "wb")
            data = rows(size)
            write_csv(csv, data)
            write_table_xlsx(table, data)
            for label, kind, path in (("workbook", "workbook", book),
                                      ("scenario csv", "table", csv),
                                      ("scenario xlsx", "table", table)):
                seconds, before, peak = peak_rss(kind, path, "wb")
                per_row = (peak - before) / size
                print(f"{size:>10,} {label:>16} {path.stat().st_size / 1e6:>8.1f} "
                      f"{seconds:>8.1f} {before / 2**20:>14.0f} {peak / 2**20:>12.0f} "
                      f"{per_row:>8,.0f}", flush=True)
    print("dry runs, each in a fresh process; file MB = 10^6 B, RSS MiB = 2^20 B; "
          "B/row = (peak - before) / rows")


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def empty_database(url: str) -> None:
    from sqlalchemy import text

    from planner.store.engine import make_engine

    if url.startswith("sqlite"):
        return
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--workbook-max", type=int, default=100_000,
                        help="largest size the workbook import is timed at (it is slow)")
    parser.add_argument("--db", help="database URL (default: new temporary SQLite files)")
    parser.add_argument("--memory", action="store_true",
                        help="peak RSS of each import in a fresh process instead of times")
    args = parser.parse_args()
    if args.memory:
        memory([int(s) for s in args.sizes.split(",")])
        return
    from planner.service import Workspace

    bulk = hasattr(Workspace, "import_scenarios")
    sizes = [int(s) for s in args.sizes.split(",")]
    header = ["rows", "workbook", "workbook dry", "csv", "csv dry", "xlsx", "parquet"]
    print("  ".join(f"{h:>12}" for h in header))
    for size in sizes:
        data = rows(size)
        figures: dict[str, float] = {}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            url = args.db or f"sqlite:///{folder / 'bench.db'}"
            empty_database(url)
            with Workspace.open(url) as ws:
                if size <= args.workbook_max:
                    book = folder / "new.xlsx"
                    write_workbook(book, data, "wb")
                    ws.new_fleet("wb")
                    figures["workbook dry"] = timed(partial(ws.import_workbook, book,
                                                            dry_run=True))
                    figures["workbook"] = timed(partial(ws.import_workbook, book))
                    assert ws.fleet("wb").scenario_count == size
                if bulk:
                    csv, xlsx, parquet = (folder / "s.csv", folder / "s.xlsx",
                                          folder / "s.parquet")
                    write_csv(csv, data)
                    write_table_xlsx(xlsx, data)
                    has_parquet = write_parquet(parquet, data)
                    sources = [("csv", csv), ("xlsx", xlsx)]
                    if has_parquet:
                        sources.append(("parquet", parquet))
                    ws.new_fleet("dry")
                    figures["csv dry"] = timed(partial(ws.import_scenarios, "dry", csv,
                                                       dry_run=True))
                    for fleet, source in sources:
                        ws.new_fleet(fleet)
                        figures[fleet] = timed(partial(ws.import_scenarios, fleet, source))
                        assert ws.fleet(fleet).scenario_count == size
        cells = [f"{figures[h]:.2f}" if h in figures else "-" for h in header[1:]]
        print("  ".join(f"{v:>12}" for v in [f"{size:,}", *cells]), flush=True)
    print("seconds, in-process (a CLI run adds its start-up); '-': not measured")


if __name__ == "__main__":
    main()
