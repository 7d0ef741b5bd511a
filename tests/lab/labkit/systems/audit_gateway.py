"""mcp-audit-gateway: the `mcp-audit-gateway` package (module mcp_gateway) in front of the server.

The client sends JSON-RPC to the gateway's `POST /mcp` with its identity in `X-MCP-Principal`
(no request signing); the gateway calls the lab's server (SDK 1.x FastMCP) over Streamable
HTTP and appends one line per request to `audit-log.jsonl`.

The upstream answers with plain JSON (`json_response`) and keeps no MCP session
(`stateless_http`), both FastMCP settings. With the default (SSE, sessions) the gateway keeps
the session id it got at its first call and never initializes again, so after the upstream
restarts every call fails for good ("returned HTTP 404 ... Session not found"), and its
fixed 15 s read timeout races the SSE keep-alive ping the server sends every 15 s.
"""

from __future__ import annotations

import json
import signal

from labkit.lab import Lab, Upstream, check_expected, count_effects, run_client, scenario_truth
from labkit.procs import free_port
from labkit.scenarios import SCENARIOS
from labkit.systems import notes

SYSTEM = "mcp-audit-gateway"
UPSTREAM_NAME = "lab-tools"
PRINCIPAL = "lab-agent"
# The gateway's upstream read timeout is fixed at 15 s; the migration answers after 2.1x that.
MIGRATION_ANSWER_S = 32

NOTES = {
    "drop_then_retry": f"{notes.HTTP_DROP}; the gateway's handler was not cancelled, got the answer and wrote `ok`, "
    f"its reply going to a closed socket; {notes.RETRY_AT_ONCE}",
    "drop_no_retry": f"{notes.HTTP_DROP}; the gateway's handler was not cancelled, got the answer and wrote `ok`; "
    "no retry",
    "repeat_after_result": notes.REPEAT,
    "target_down_then_retry": f"{notes.TARGET_DOWN}; the gateway could not connect (`upstream_error`, connection "
    "refused)",
    "concurrent_sends": notes.CONCURRENT,
    "read_only_noise": notes.READ_ONLY,
    "gateway_timeout_then_retry": "the gateway's fixed 15 s upstream read timeout fired while the tool (acted, then "
    f"{MIGRATION_ANSWER_S} s to answer, in plain JSON) kept working; the gateway answered with an internal error "
    "and the client sent the identical call again, answered at once",
}

EXPECTED = {
    "drop_then_retry": (2, ["timeout", "result"]),
    "drop_no_retry": (1, ["timeout"]),
    "repeat_after_result": (2, ["result", "result"]),
    "target_down_then_retry": (1, ["error:", "result"]),
    "concurrent_sends": (2, ["result", "result"]),
    "read_only_noise": (0, ["result"] * 5),
    "gateway_timeout_then_retry": (2, ["error:", "result"]),
}


def config_yaml(port: int, upstream_url: str) -> str:
    """The gateway's policy file: one tenant, one principal allowed every tool, default audit."""
    return f"""\
gateway:
  name: lab-audit-gateway
  http: {{ host: 127.0.0.1, port: {port} }}
security:
  require_signature: false
audit:
  enabled: true
  path: audit-log.jsonl
  argument_logging: redacted
roles:
  agent: {{ allow_tools: ["*"] }}
principals:
  - {{ id: {PRINCIPAL}, tenant: lab, role: agent, secret: "unused-without-signing" }}
tenants:
  lab:
    upstreams:
      - {{ name: {UPSTREAM_NAME}, transport: http, url: "{upstream_url}" }}
"""


def run(lab: Lab) -> dict:
    """Run every scenario through mcp-audit-gateway and return this system's truth entry."""
    python = lab.python(SYSTEM)
    folder = lab.out / SYSTEM
    server_args = ["--json-response", "--stateless", "--first-answer-delay", f"run_migration={MIGRATION_ANSWER_S}"]
    upstream = Upstream(lab, SYSTEM, python, folder / "effects.jsonl", server_args)
    upstream.start()
    port = free_port()
    config = folder / "gateway.yaml"
    config.write_text(config_yaml(port, upstream.url), encoding="utf-8")
    gateway = lab.procs.start(
        f"{SYSTEM} gateway",
        [str(python.parent / "mcp-audit-gateway"), "serve", "--config", str(config), "--transport", "http"],
        folder / "lab" / "gateway.log",
        env=lab.env(),
        ports=(port,),
    )
    lab.procs.wait_listening(gateway, 60, f"{SYSTEM}: start gateway")
    tool_map = {s.tool: f"{UPSTREAM_NAME}.{s.tool}" for s in SCENARIOS}
    report = run_client(
        lab,
        SYSTEM,
        [
            str(python),
            "-m",
            "labkit.clients.jsonrpc_http",
            "--url",
            f"http://127.0.0.1:{port}/mcp",
            "--header",
            f"X-MCP-Principal: {PRINCIPAL}",
            "--tool-map",
            json.dumps(tool_map),
            "--handshake",
            *[s.id for s in SCENARIOS],
        ],
        upstream,
    )
    lab.procs.stop(gateway, sig=signal.SIGINT)
    upstream.stop()

    effects = count_effects(folder / "effects.jsonl")
    scenarios = [scenario_truth(s.id, tool_map[s.tool], report, effects, NOTES[s.id]) for s in SCENARIOS]
    check_expected(SYSTEM, scenarios, EXPECTED)
    return {"system": SYSTEM, "journals": ["audit-log.jsonl"], "scenarios": scenarios}
