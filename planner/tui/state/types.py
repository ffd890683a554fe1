"""What the terminal UI takes from the rest of planner, named in one place.

The TUI is a client of the workspace (the service layer over the database). Its widgets are
typed against it, but importing it costs SQLAlchemy and the store, which the UI only needs once
a worker thread opens the database. So the workspace is imported here only for type checkers,
and at run time only by :meth:`WorkspaceRef.get`, in the first worker that needs it. When the
workspace moves, the two imports below are the lines to change.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from planner.spec.domain import GpuInfo, ModelInfo

if TYPE_CHECKING:
    from planner.service import Workspace

__all__ = ["GpuInfo", "ModelInfo", "Workspace", "WorkspaceRef"]


class WorkspaceRef:
    """The one workspace of a UI session, opened lazily, once, by the thread that first needs
    it; every widget that reads or writes the database holds this reference."""

    def __init__(self, url: str | None = None, workspace: Workspace | None = None) -> None:
        self.url = url
        self._workspace = workspace
        self._lock = threading.Lock()

    def get(self) -> Workspace:
        """The workspace, opened on first use (call it from a worker: it can take a while)."""
        with self._lock:
            if self._workspace is None:
                # lazy: loads numpy (~102 ms), only when this runs
                from planner.service import Workspace

                self._workspace = Workspace.open(self.url)
        return self._workspace

    def close(self) -> None:
        """Close the workspace if it was opened."""
        if self._workspace is not None:
            self._workspace.close()
