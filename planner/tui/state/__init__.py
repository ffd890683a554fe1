"""The TUI's state and logic that need no terminal: the grid's rows and cells, the outputs kept
as columns, the cell being edited, the queue of saves, the collector policy and the workspace
types. Nothing here imports Textual (``tests/tui/test_tui_state.py`` checks it), so it is tested as
plain Python."""
