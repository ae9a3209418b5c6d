"""Sans-IO pieces of the HTTP proxy: message boundaries and heads (wire), headers, A2A REST routes,
agent-card and endpoint rewriting."""
