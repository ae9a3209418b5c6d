"""The wire: sans-IO framing, SSE, JSON-RPC, recorded messages and redaction."""
