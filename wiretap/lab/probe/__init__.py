"""The lab's probe MCP server: a sans-IO core and its stdio and Streamable HTTP transports."""
