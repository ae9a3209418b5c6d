"""The lab: a probe MCP server whose tools are an investigation's conditions."""
