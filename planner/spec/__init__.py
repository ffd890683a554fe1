"""Model and GPU specs: a checkpoint's ``config.json`` and ``quantization_config`` parsed into a
:class:`~planner.spec.architecture.ModelSpec`, exact parameter counts, GPU datasheet figures, the
shipped catalog in ``seeds/`` and the domain objects built from them. Shapes and numbers only:
the formulas that use them live in :mod:`planner.formulas`, one layer up."""
