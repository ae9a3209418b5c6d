"""wiretap: see what really crosses the wire between an AI client and its MCP servers and A2A agents."""

__version__ = "0.1.0"
