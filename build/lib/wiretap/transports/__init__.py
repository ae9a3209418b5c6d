"""Transports: the only code that touches pipes, processes and sockets."""
