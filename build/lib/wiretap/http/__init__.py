"""Sans-IO pieces of the HTTP proxy: headers, A2A REST routes, agent-card and endpoint rewriting."""
