"""A small MCP server and client, bundled so that ``wiretap demo`` works offline right after install."""
