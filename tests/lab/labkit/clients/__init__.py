"""The lab's MCP clients, one per kind of system; each runs inside that system's virtualenv."""
