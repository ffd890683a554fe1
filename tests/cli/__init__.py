"""The command line's tests: help, --json contracts, database commands, hostile input at the
command line."""
