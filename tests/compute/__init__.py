"""The compute layer's tests (the sheet): table, graph, checks, plans, sweeps, frontier,
calibration, harness, row function, validation, verdict."""
