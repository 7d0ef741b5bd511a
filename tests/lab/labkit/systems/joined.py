"""joined: the same calls recorded at three layers, for joining into one timeline.

An MCP SDK 2.x client (built-in tracing, service `lab-agent`) calls ContextForge's MCP
endpoint `/mcp` (Streamable HTTP); ContextForge, with its own OpenTelemetry export on
(service `mcp-gateway`), calls an MCP SDK 2.x server (built-in tracing, service
`lab-tools`). Every process exports to one receiver, so `traces.jsonl` holds all three
layers' spans; ContextForge's database and log are the gateway's own journal.
"""

from __future__ import annotations

import json

from labkit.lab import Lab, Receiver, Upstream, check_expected, count_effects, run_client, scenario_truth
from labkit.scenarios import SCENARIOS
from labkit.systems import contextforge, notes

SYSTEM = "joined"

NOTES = {
    **contextforge.NOTES,
    "drop_then_retry": f"{notes.SDK_DROP} behind ContextForge; {notes.RETRY_AT_ONCE}",
    "drop_no_retry": f"{notes.SDK_DROP} behind ContextForge; no retry",
    "concurrent_sends": f"{notes.CONCURRENT} (two MCP clients in one process)",
}

EXPECTED = contextforge.EXPECTED


def run(lab: Lab) -> dict:
    """Client -> ContextForge -> server, each exporting spans to one receiver."""
    folder = lab.out / SYSTEM
    sdk = lab.python("otel-sdk")
    receiver = Receiver(lab, SYSTEM, sdk)
    upstream = Upstream(
        lab, SYSTEM, sdk, folder / "effects.jsonl", ["--otlp", receiver.url, "--service-name", "lab-tools"]
    )
    upstream.start()
    gateway = contextforge.Gateway(
        lab,
        SYSTEM,
        lab.python("contextforge"),
        folder,
        f"sqlite:///{folder / 'mcp.db'}",
        extra_env={
            "OTEL_ENABLE_OBSERVABILITY": "true",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url + "/v1/traces",
            "OTEL_SERVICE_NAME": "mcp-gateway",
            "OTEL_BSP_SCHEDULE_DELAY": "500",
        },
    )
    gateway.start()
    tool_map = gateway.register(upstream.url)
    report = run_client(
        lab,
        SYSTEM,
        [
            str(sdk),
            "-m",
            "labkit.clients.sdk2",
            "--url",
            gateway.base + "/mcp",
            "--otlp",
            receiver.url,
            "--service-name",
            "lab-agent",
            "--header",
            f"Authorization: Bearer {gateway.token}",
            "--tool-map",
            json.dumps(tool_map),
            *[s.id for s in SCENARIOS],
        ],
        upstream,
    )
    gateway.stop()
    upstream.stop()
    receiver.finish()
    contextforge.checkpoint(folder / "mcp.db")

    effects = count_effects(folder / "effects.jsonl")
    scenarios = [scenario_truth(s.id, tool_map[s.tool], report, effects, NOTES[s.id]) for s in SCENARIOS]
    check_expected(SYSTEM, scenarios, EXPECTED)
    return {"system": SYSTEM, "journals": ["traces.jsonl", "mcp.db", "gateway.log"], "scenarios": scenarios}
