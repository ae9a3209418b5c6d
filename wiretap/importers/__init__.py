"""``wiretap import``: sessions wiretap did not record, rebuilt from what a client kept in its own logs."""
