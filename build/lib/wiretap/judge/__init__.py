"""Judging behaviour: expectations (``check``), behaviour profiles, ``diff`` and ``compare``."""
