"""retrace's lab: real MCP journals from real third-party software, with their ground truth."""
