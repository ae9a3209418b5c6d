"""Recordings as regression fixtures: replay a recorded server to a live client, or a recorded client to a
live server.

The data flow is the layout: ``script.py`` reads a recording into exchanges (a request and everything
the server sent for it) → ``matchers.py`` picks the recorded exchange for a live request (vcrpy's
``match_on``; ``index.py`` finds it without a scan), with ``volatile.py`` deciding what never counts →
``tasks.py`` answers task polls by the live client's clock → ``player.py`` serves a live client, over
``stdio.py`` or ``http.py`` → ``client.py`` drives a live server instead, and ``structural_diff.py``
says how its answers differ. What a live client sent is read as a server must by
``wiretap.wire.jsonrpc.parse``, and ``record_modes.py`` is the pytest record modes behind
``pytest_plugin.py``'s fixtures.
"""
