"""The bottom layer: units and element sizes in bits, errors a user can cause, the files and
settings every layer above reads. It imports nothing else of the planner."""
