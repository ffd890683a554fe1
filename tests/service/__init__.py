"""The service layer's tests: saves, bulk import, options."""
