"""``wiretap lab serve --a2a``: an A2A agent whose skills are the A2A conditions."""
