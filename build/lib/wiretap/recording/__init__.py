"""Recordings on disk: writing them as traffic flows, reading them back."""
