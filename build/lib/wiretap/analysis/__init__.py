"""Analyses: small objects that stream over a recording's events and report what they measured."""
