"""The core's tests: hostile files and names at every reader (planner/files.py's gate, errors)."""
