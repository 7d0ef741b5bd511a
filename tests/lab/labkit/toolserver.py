"""The lab's upstream MCP server, written with the official MCP Python SDK.

Runs on SDK 1.x (FastMCP) and 2.x (MCPServer) alike, over Streamable HTTP on 127.0.0.1.
Each side-effecting tool appends one line to the effects file *before* it answers (the act
happens; only the answer may be slow), then waits as its scenario says. How long a tool
waits is a server-side knob from `labkit.scenarios`: it never shows in the tool arguments,
so a retry sends byte-identical arguments.

    python -m labkit.toolserver --port 8001 --effects effects.jsonl [--otlp URL --service-name N]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections import Counter

from labkit.effects import EffectLog
from labkit.scenarios import BY_TOOL, SCENARIOS, annotations_for


class World:
    """What the tools act on: counts the calls each tool sees and records the effects."""

    def __init__(self, effects: EffectLog, first_answer_delays: dict[str, float]) -> None:
        self.effects = effects
        self.first_answer_delays = first_answer_delays
        self.seen: Counter[str] = Counter()

    async def act(self, tool: str, arguments: dict) -> str:
        """Run one call of `tool`: act (unless read-only), wait as configured, answer."""
        scenario = BY_TOOL[tool]
        self.seen[tool] += 1
        attempt = self.seen[tool]
        if not scenario.read_only:
            self.effects.record(tool, arguments, scenario.id, attempt)
        first = self.first_answer_delays.get(tool, scenario.first_answer_delay_s)
        delay = scenario.answer_delay_s + (first if attempt == 1 else 0.0)
        print(f"toolserver: {tool} call {attempt}, answering in {delay:g}s", file=sys.stderr, flush=True)
        if delay:
            await asyncio.sleep(delay)
        verb = "read" if scenario.read_only else "done"
        return f"{tool} {verb} (call {attempt} seen by the server)"


def tool_functions(world: World) -> list:
    """The tools, one per scenario, with typed parameters the SDK turns into input schemas."""

    async def deploy_release(service: str, version: str) -> str:
        """Deploy a release of a service (starts a new rollout on every call)."""
        return await world.act("deploy_release", {"service": service, "version": version})

    async def rotate_credential(account: str, credential: str) -> str:
        """Rotate a service account's credential (the previous secret stops working)."""
        return await world.act("rotate_credential", {"account": account, "credential": credential})

    async def create_ticket(queue: str, title: str) -> str:
        """Open a ticket in a queue (a new ticket on every call)."""
        return await world.act("create_ticket", {"queue": queue, "title": title})

    async def charge_card(customer: str, amount_cents: int, currency: str) -> str:
        """Charge a customer's card (a new charge on every call)."""
        return await world.act(
            "charge_card", {"customer": customer, "amount_cents": amount_cents, "currency": currency}
        )

    async def send_invoice(invoice: str, customer: str) -> str:
        """Send an invoice to a customer (an e-mail goes out on every call)."""
        return await world.act("send_invoice", {"invoice": invoice, "customer": customer})

    async def get_status(service: str) -> str:
        """Read a service's status (changes nothing)."""
        return await world.act("get_status", {"service": service})

    async def run_migration(database: str, migration: str) -> str:
        """Run a schema migration (runs it again on every call)."""
        return await world.act("run_migration", {"database": database, "migration": migration})

    functions = [
        deploy_release,
        rotate_credential,
        create_ticket,
        charge_card,
        send_invoice,
        get_status,
        run_migration,
    ]
    assert sorted(f.__name__ for f in functions) == sorted(s.tool for s in SCENARIOS)
    return functions


def build_app(world: World, json_response: bool, stateless: bool):
    """The Starlette app of an MCP server carrying the lab's tools, for SDK 1.x or 2.x."""
    try:
        from mcp.server.mcpserver import MCPServer  # SDK 2.x
        from mcp_types import ToolAnnotations

        server = MCPServer("lab-tools")
        make_app = lambda: server.streamable_http_app(  # noqa: E731
            json_response=json_response, stateless_http=stateless, host="127.0.0.1"
        )
    except ImportError:
        from mcp.server.fastmcp import FastMCP  # SDK 1.x
        from mcp.types import ToolAnnotations

        server = FastMCP("lab-tools", host="127.0.0.1", json_response=json_response, stateless_http=stateless)
        make_app = server.streamable_http_app

    for function in tool_functions(world):
        scenario = BY_TOOL[function.__name__]
        server.tool(
            title=scenario.title,
            annotations=ToolAnnotations(title=scenario.title, **annotations_for(scenario)),
        )(function)
    return make_app()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--effects", required=True, help="effects.jsonl to append to")
    parser.add_argument("--otlp", help="OTLP/HTTP base URL to export spans to")
    parser.add_argument("--service-name", default="lab-tools")
    parser.add_argument("--openllmetry", action="store_true", help="instrument with OpenLLMetry")
    parser.add_argument("--json-response", action="store_true", help="answer with JSON, not SSE")
    parser.add_argument("--stateless", action="store_true", help="no MCP session ids")
    parser.add_argument(
        "--first-answer-delay",
        action="append",
        default=[],
        metavar="TOOL=SECONDS",
        help="override how long TOOL takes to answer its first call",
    )
    args = parser.parse_args()
    delays = {tool: float(seconds) for tool, seconds in (item.split("=", 1) for item in args.first_answer_delay)}

    provider = None
    if args.otlp:
        from labkit.telemetry import start_tracing

        provider = start_tracing(args.service_name, args.otlp, openllmetry=args.openllmetry)

    import uvicorn

    app = build_app(World(EffectLog(args.effects), delays), args.json_response, args.stateless)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=2)
    # uvicorn re-raises SIGTERM after its graceful shutdown; exit through `finally` instead,
    # so that the tracer provider flushes the last spans.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.Server(config).run()
    finally:
        if provider is not None:
            provider.shutdown()


if __name__ == "__main__":
    main()
