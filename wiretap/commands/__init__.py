"""The commands, each in its own module, imported by ``wiretap.cli`` only when it is run."""
