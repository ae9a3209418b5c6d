"""``wiretap ui``: a local web view that follows recordings while they are written.

The server indexes each recording (byte offsets and a few columns per event), serves windows of rows
on demand, pushes growth over server-sent events and recomputes the report, debounced, off the loop.
"""
