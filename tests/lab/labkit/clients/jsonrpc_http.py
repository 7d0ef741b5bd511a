"""Client for the gateways: plain JSON-RPC over HTTP POST, as agents call ContextForge's /rpc.

One HTTP connection per caller (httpx); a call the client gives up on is abandoned by
closing that connection, so the gateway sees the client go away. JSON-RPC ids come from
one counter for the whole process, so every request of a run has its own id.

    python -m labkit.clients.jsonrpc_http --url URL [--header 'K: V']... --tool-map JSON
        [--handshake | --list-tools] --report FILE IDS...
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from contextlib import asynccontextmanager

import httpx

from labkit import drive
from labkit.drive import Outcome

_ids = itertools.count(1)


class HttpCaller:
    """Sends tools/call requests over one HTTP connection; reconnects after a dropped one."""

    def __init__(self, url: str, headers: dict[str, str], tool_map: dict[str, str]) -> None:
        self.url = url
        self.headers = headers
        self.tool_map = tool_map
        self.http = self._client()

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(headers=self.headers, limits=httpx.Limits(max_connections=1))

    async def request(self, method: str, params: dict | None, timeout_s: float, request_id: int | None = None) -> dict:
        """One JSON-RPC request; raise httpx errors, return the response object."""
        body = {"jsonrpc": "2.0", "id": next(_ids) if request_id is None else request_id, "method": method}
        if params is not None:
            body["params"] = params
        response = await self.http.post(self.url, json=body, timeout=timeout_s)
        if not response.content:
            return {}
        return response.json()

    async def notify(self, method: str) -> None:
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": method}, timeout=10)

    async def call(self, tool: str, arguments: dict, timeout_s: float) -> Outcome:
        request_id = next(_ids)
        outcome = await self._call(tool, arguments, timeout_s, request_id)
        outcome.request_id = request_id
        return outcome

    async def _call(self, tool: str, arguments: dict, timeout_s: float, request_id: int) -> Outcome:
        params = {"name": self.tool_map[tool], "arguments": arguments}
        try:
            message = await self.request("tools/call", params, timeout_s, request_id)
        except httpx.TimeoutException:
            # Give up: drop the connection, so the gateway sees the client go away.
            await self.http.aclose()
            self.http = self._client()
            return Outcome("timeout")
        except httpx.TransportError:
            return Outcome("connection_error")
        if "error" in message:
            return Outcome("error", message["error"].get("message", ""))
        result = message.get("result", {})
        if result.get("isError"):
            content = result.get("content") or [{}]
            return Outcome("error", content[0].get("text", ""))
        return Outcome("result")

    async def close(self) -> None:
        await self.http.aclose()


def connector(url: str, headers: dict[str, str], tool_map: dict[str, str], handshake: bool, list_tools: bool):
    @asynccontextmanager
    async def connect():
        caller = HttpCaller(url, headers, tool_map)
        try:
            if handshake:
                await caller.request(
                    "initialize",
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "lab-agent", "version": "1.0"},
                    },
                    10,
                )
                await caller.notify("notifications/initialized")
            if handshake or list_tools:
                await caller.request("tools/list", {}, 30)
            yield caller
        finally:
            await caller.close()

    return connect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--header", action="append", default=[], help="'Name: value'")
    parser.add_argument("--tool-map", required=True, help="JSON: upstream tool name -> exposed name")
    parser.add_argument("--handshake", action="store_true", help="initialize and list tools first")
    parser.add_argument("--list-tools", action="store_true", help="list tools first")
    parser.add_argument("--report", required=True)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    headers = dict(h.split(": ", 1) for h in args.header)
    connect = connector(args.url, headers, json.loads(args.tool_map), args.handshake, args.list_tools)
    asyncio.run(drive.run(connect, args.scenarios, args.report))


if __name__ == "__main__":
    main()
