"""Expectations about behaviour, for CI: ``wiretap check RECORDING --expect EXPECT.yaml``."""
