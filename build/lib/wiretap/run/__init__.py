"""Starting a relay with its recorder: ``wiretap tap`` and ``wiretap proxy``."""
