"""The store's tests: migrations, the Workspace API on each backend, two processes on one
database."""
