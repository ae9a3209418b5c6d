"""``wiretap -- CLIENT``: sessions, their folders, and one module per client."""
