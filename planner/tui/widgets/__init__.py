"""The TUI's widgets, one a module: the scenario grid (a documented DataTable subclass), the
formula bar, the details pane and the Models, GPUs, Measurements and Plan tabs."""
