"""Exports of a recording for people and tools: an SVG timeline, a Mermaid sequence diagram, HAR 1.2, and
a self-contained HTML report."""
