"""Renderers: recordings and analyses turned into something a person reads."""
