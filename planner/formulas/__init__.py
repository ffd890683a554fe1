"""The formulas: every scenario output as a pure function over the operator set of
:mod:`planner.formulas.ops` (memory, KV cache, FLOPs, the serving engine's step operators, load
and queueing, SLO sizing, disaggregated pools, cost, training). numpy at most; the column registry
that orders and evaluates them is :mod:`planner.compute`, one layer up."""
