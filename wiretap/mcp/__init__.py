"""``wiretap mcp``: a read-only MCP server over stdio, so that an agent can read sessions and recordings."""
