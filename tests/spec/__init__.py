"""The model and GPU specs' tests: config.json and quantization readers, parameter counts,
catalogs, Hub names."""
