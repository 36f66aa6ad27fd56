"""The MCP server: SAM's tools for agents, over stdio (`manage.py sam_mcp`) and over
streamable HTTP at `/mcp` (samsite.mcp.http), both calling the REST API in-process."""
