"""The core's tests: hostile files and names at every reader (planner/core/files.py's
gate, errors)."""
