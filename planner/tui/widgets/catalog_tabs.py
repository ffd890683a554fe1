"""The Models and GPUs tabs: the catalog every scenario is computed from, shown and edited.

Each tab is a table that owns the catalog entries it shows and edits them in a dialog (a
model's notes, a GPU's figures) or imports a model's ``config.json``; the write runs in a
thread worker. A change is announced with :class:`~planner.tui.messages.CatalogLoaded`
(``changed=True``) so the app can hand the new catalog to the scenario sheet, which
re-evaluates its fleet; a failure arrives as :class:`~planner.tui.messages.WorkFailed`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.widgets import DataTable

from planner.core.errors import ValidationError
from planner.core.units import GB, GiB, fmt_count
from planner.tui.messages import CatalogLoaded, WorkFailed
from planner.tui.screens.dialogs import EditDialog
from planner.tui.state.failures import work_failures
from planner.tui.state.types import GpuInfo, ModelInfo, WorkspaceRef

if TYPE_CHECKING:
    from planner.tui.state.types import Workspace

GPU_COLUMNS = (("name", "GPU"), ("memory_gib", "memory [GiB]"),
               ("bf16_tflops", "bf16 [TFLOP/s]"), ("fp8_tflops", "fp8 [TFLOP/s]"),
               ("int8_tops", "int8 [TOP/s]"), ("memory_bandwidth_gb_per_s", "bandwidth [GB/s]"),
               ("price_usd_per_hour", "price [USD/GPU-h]"))
"""(key, header) of the GPUs table; keys other than ``name`` are fields of ``set_gpu``."""


class CatalogTab(DataTable[str]):
    """A catalog table: Enter (or a click on the selected cell) edits the entry under the
    cursor; the edit is saved by :meth:`save`."""

    BAR_NOTE: ClassVar[tuple[str, str, str]] = ("", "", "")
    """What the formula bar shows while the tab is active: reference, content, hint."""

    def __init__(self, workspace: WorkspaceRef, **kwargs: object) -> None:
        super().__init__(fixed_columns=1, **kwargs)  # type: ignore[arg-type]
        self.workspace = workspace

    @on(DataTable.CellSelected)
    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.CellSelected | DataTable.RowSelected) -> None:
        event.stop()
        self.edit()

    def edit(self) -> None:
        """Edit the entry under the cursor."""

    @work(thread=True, group="catalog")
    def save(self, job: Callable[[Workspace], object]) -> None:
        """Write a catalog change in a worker, then announce the new catalog."""
        try:
            ws = self.workspace.get()
            job(ws)
            self.post_message(CatalogLoaded(ws.models(), ws.gpus(), changed=True))
        except work_failures() as exc:
            self.post_message(WorkFailed("Not saved", str(exc), reload=False))


class ModelsTab(CatalogTab):
    """The models: headline figures and notes; Enter edits the notes, ``i`` imports one."""

    BAR_NOTE = ("Models", "Enter edits a model's notes · i imports a config.json",
                "Every scenario follows a change to its model or GPU.")

    def __init__(self, workspace: WorkspaceRef, **kwargs: object) -> None:
        super().__init__(workspace, cursor_type="row", **kwargs)
        self.models: list[ModelInfo] = []

    def show(self, models: Sequence[ModelInfo]) -> None:
        """Show these models (the table is rebuilt)."""

        self.models = list(models)
        self.clear(columns=True)
        self.add_columns("model", "type", "params total", "params active",
                         "KV/token bf16 [B]", "source", "notes")
        for m in self.models:
            self.add_row(m.name, m.model_type, fmt_count(m.params_total),
                         fmt_count(m.params_active), fmt_count(m.kv_bytes_per_token_bf16),
                         m.source, m.notes, key=m.name)

    def edit(self) -> None:
        if not self.row_count:
            return
        name = str(self.coordinate_to_cell_key(self.cursor_coordinate)[0].value)
        model = next(m for m in self.models if m.name == name)

        def save(text: str | None) -> None:
            if text is not None:
                self.save(lambda ws: ws.set_model_notes(name, text))

        self.app.push_screen(EditDialog(f"{name}: notes", model.notes), save)

    def import_model(self) -> None:
        """Ask for a Hugging Face ``config.json`` and import the model it describes."""
        def chosen(path: str | None) -> None:
            if path:
                self._import(path)

        self.app.push_screen(EditDialog("Import a model: config.json path", "",
                                        help_text="A Hugging Face config.json (file or "
                                                  "folder)."), chosen)

    @work(thread=True, group="catalog")
    def _import(self, path: str) -> None:
        # lazy: ~10 ms of imports, only when this runs
        from planner.spec import catalog

        try:
            ws = self.workspace.get()
            file = Path(path).expanduser()
            file = file / "config.json" if file.is_dir() else file
            catalog.load_config(file)
            name = file.parent.name if file.stem == "config" else file.stem
            info = ws.import_model(catalog.read_config_text(file), name)
            self.app.call_from_thread(self.notify, f"Imported {info.name} "
                                      f"({info.params_total:,} params)", title="Model imported")
            self.post_message(CatalogLoaded(ws.models(), ws.gpus()))
        except work_failures() as exc:
            self.post_message(WorkFailed("Import failed", str(exc), reload=False))


class GpusTab(CatalogTab):
    """The GPUs: memory, throughput, bandwidth and price; Enter edits the selected figure."""

    BAR_NOTE = ("GPUs", "Enter edits the selected value",
                "Every scenario follows a change to its model or GPU.")

    def __init__(self, workspace: WorkspaceRef, **kwargs: object) -> None:
        super().__init__(workspace, cursor_type="cell", **kwargs)
        self.gpus: list[GpuInfo] = []

    def show(self, gpus: Sequence[GpuInfo]) -> None:
        """Show these GPUs (the table is rebuilt)."""

        self.gpus = list(gpus)
        self.clear(columns=True)
        for key, label in GPU_COLUMNS:
            self.add_column(label, key=key)
        for g in self.gpus:
            spec = g.spec
            self.add_row(g.name, f"{spec.memory_bytes / GiB:,.2f}",
                         *(f"{spec.flops_per_s[d] / 1e12:,.1f}" if spec.flops_per_s.get(d)
                           else "–" for d in ("bf16", "fp8", "int8")),
                         f"{spec.bandwidth_bytes_per_s / GB:,.0f}",
                         f"{spec.price_usd_per_hour:,.2f}"
                         + (" (example)" if spec.price_is_example else ""), key=g.name)

    def edit(self) -> None:
        if not self.row_count:
            return
        row_key, col_key = self.coordinate_to_cell_key(self.cursor_coordinate)
        name, field = str(row_key.value), str(col_key.value)
        if field == "name":
            return
        gpu = next(g for g in self.gpus if g.name == name)
        # lazy: ~10 ms of imports, only when this runs
        from planner.spec.catalog import gpu_record

        current = gpu_record(gpu.spec).get(field, 0)

        def parse(text: str) -> float:
            try:
                value = float(text.replace(",", ""))
            except ValueError:
                raise ValidationError(field, "must be a number of at least 0",
                                      value=text) from None
            if value < 0:
                raise ValidationError(field, "must be a number of at least 0", value=text)
            return value

        def save(value: float | None) -> None:
            if value is not None:
                self.save(lambda ws: ws.set_gpu(name, {field: value},
                                                expected_version=gpu.version))

        self.app.push_screen(EditDialog(f"{name}: {field}", f"{current:g}", parse=parse,
                                        help_text="Every scenario on this GPU follows."), save)
