"""The TUI's modal screens, each with its stylesheet beside it: the dialogs (edit a value,
confirm, choose a fleet, a new scenario, a text page), go to column, the options of a row,
the sweep and the solve views."""
