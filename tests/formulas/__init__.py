"""The estimator formulas' tests: serving, memory, FLOPs, disaggregation, speculation, expert
parallelism, topology, training, offload, the golden figures."""
