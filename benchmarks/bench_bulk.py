"""Benchmark (issue 14 item 1): creating a fleet of N new scenarios from a file.

For each size (default 1,000, 10,000 and 100,000 rows) the same generated scenarios are
written as a planner workbook with new rows (a Scenarios sheet whose id cells are empty), a
CSV, a plain .xlsx table and a Parquet file (when pyarrow is installed); each is imported into
a new fleet of a fresh SQLite database (or ``--db URL``, emptied first: give a scratch
PostgreSQL database there), in-process, and timed:

* ``workbook``: ``planner import`` of the workbook (``Workspace.import_workbook``), the way to
  create a fleet from a file before the bulk path (issue 14's table: 4.4 s, 41.9 s, 281 s). It
  reads sheets of up to Excel's 1,048,575 rows, streamed (``planner.report.sheetstream``); it is
  timed up to ``--workbook-max`` rows (default 100,000);
* ``workbook dry``: its ``--dry-run``;
* ``csv``, ``xlsx``, ``parquet``: ``planner scenario import`` (``Workspace.import_scenarios``),
  and ``csv dry`` its ``--dry-run``.

Run it on the code to compare (``PYTHONPATH=/path/to/other/checkout``): a checkout without the
bulk path prints only the workbook columns.

    python benchmarks/bench_bulk.py [--sizes 1000,10000,100000] [--workbook-max 50000]
                                    [--db URL]
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

    from planner.report.layout import scenario_columns
    from planner.sheet.inputs import INFERENCE_INPUTS

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
    args = parser.parse_args()
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
