"""The project's own rules: layers, lazy imports, start-up, packaging, documentation, CI scripts
and the test markers."""
