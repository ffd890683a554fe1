"""The terminal UI's tests: its Textual-free state and the app through Textual's Pilot (snapshots
in __snapshots__/, keyed by test file)."""
