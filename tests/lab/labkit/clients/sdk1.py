"""Client for the openllmetry system: MCP Python SDK 1.x instrumented by OpenLLMetry.

Uses the deprecated `streamablehttp_client`: only that one is wrapped by OpenLLMetry's
transport instrumentation, which injects the trace context into `params._meta`.

OpenLLMetry's `@dont_throw` wrapper around `BaseSession.send_request` swallows every
exception of a call (a read timeout's McpError included) and returns None, so
`ClientSession.call_tool` then fails with AttributeError. The swallowed exception reaches
the instrumentor's `exception_logger`, which is how this client learns what happened.

    python -m labkit.clients.sdk1 --url http://127.0.0.1:8001/mcp --otlp URL --report FILE IDS...
"""

from __future__ import annotations

import argparse
import asyncio
from contextlib import asynccontextmanager
from datetime import timedelta

from labkit import drive
from labkit.drive import Connection, Outcome

swallowed: list[BaseException] = []


def classify(error: BaseException) -> Outcome:
    """What a call that raised looked like to the client."""
    import httpx
    from mcp.shared.exceptions import McpError

    if isinstance(error, BaseExceptionGroup):
        return classify(error.exceptions[0])
    if isinstance(error, McpError):
        # SDK 1.x reports its own read timeout as McpError code 408 (httpx.codes.REQUEST_TIMEOUT).
        if error.error.code == httpx.codes.REQUEST_TIMEOUT:
            return Outcome("timeout")
        return Outcome("error", error.error.message)
    if isinstance(error, (httpx.TransportError, ConnectionError)):
        return Outcome("connection_error")
    return Outcome("error", repr(error))


def session_opener(url: str):
    """Opens a `ClientSession` over the deprecated `streamablehttp_client`."""

    @asynccontextmanager
    async def open_session():
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client
        from mcp.shared.exceptions import McpError

        async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()

            async def invoke(tool: str, arguments: dict, timeout_s: float) -> Outcome:
                swallowed.clear()
                try:
                    result = await session.call_tool(tool, arguments, read_timeout_seconds=timedelta(seconds=timeout_s))
                except AttributeError:
                    # OpenLLMetry swallowed the real error and handed it to the exception logger.
                    return classify(swallowed[-1]) if swallowed else Outcome("error", "swallowed by OpenLLMetry")
                except McpError as error:  # what the SDK raises when nothing swallows it
                    return classify(error)
                if result.isError:
                    return Outcome("error", result.content[0].text if result.content else "")
                return Outcome("result")

            yield invoke

    return open_session


def connector(url: str):
    @asynccontextmanager
    async def connect():
        connection = Connection(session_opener(url), classify)
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
    parser.add_argument("--report", required=True)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()

    from labkit.telemetry import start_tracing

    provider = start_tracing(args.service_name, args.otlp, openllmetry=True, exception_logger=swallowed.append)
    try:
        asyncio.run(drive.run(connector(args.url), args.scenarios, args.report))
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
