"""Client for the otel-sdk and joined systems: the official MCP Python SDK 2.x, built-in tracing.

python -m labkit.clients.sdk2 --url http://127.0.0.1:8001/mcp --otlp URL
    [--header 'K: V']... [--tool-map JSON] --report FILE IDS...
"""

from __future__ import annotations

import argparse
import asyncio
import json
from contextlib import asynccontextmanager

from labkit import drive
from labkit.drive import Connection, Outcome


def classify(error: BaseException) -> Outcome:
    """What a call that raised looked like to the client."""
    import httpx2
    from mcp.shared.exceptions import MCPError
    from mcp_types import REQUEST_TIMEOUT

    if isinstance(error, BaseExceptionGroup):
        return classify(error.exceptions[0])
    if isinstance(error, MCPError):
        return Outcome("timeout") if error.code == REQUEST_TIMEOUT else Outcome("error", error.error.message)
    if isinstance(error, (httpx2.TransportError, ConnectionError)):
        return Outcome("connection_error")
    return Outcome("error", repr(error))


def session_opener(url: str, headers: dict[str, str], tool_map: dict[str, str]):
    """Opens an `mcp.Client` over Streamable HTTP: revision 2026-07-28 where `server/discover`
    answers, else the initialize handshake."""

    @asynccontextmanager
    async def open_session():
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.exceptions import MCPError

        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            await client.list_tools()

            async def invoke(tool: str, arguments: dict, timeout_s: float) -> Outcome:
                try:
                    result = await client.call_tool(tool_map.get(tool, tool), arguments, read_timeout_seconds=timeout_s)
                except MCPError as error:
                    return classify(error)
                if result.is_error:
                    return Outcome("error", result.content[0].text if result.content else "")
                return Outcome("result")

            yield invoke

    return open_session


def connector(url: str, headers: dict[str, str], tool_map: dict[str, str]):
    @asynccontextmanager
    async def connect():
        connection = Connection(session_opener(url, headers, tool_map), classify)
        await connection.open()
        try:
            yield connection
        finally:
            await connection.close()

    return connect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--otlp", required=True)
    parser.add_argument("--service-name", default="lab-agent")
    parser.add_argument("--header", action="append", default=[], help="'Name: value'")
    parser.add_argument("--tool-map", default="{}", help="JSON: upstream tool name -> exposed name")
    parser.add_argument("--report", required=True)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    headers = dict(h.split(": ", 1) for h in args.header)

    from labkit.telemetry import start_tracing

    provider = start_tracing(args.service_name, args.otlp)
    try:
        asyncio.run(drive.run(connector(args.url, headers, json.loads(args.tool_map)), args.scenarios, args.report))
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
