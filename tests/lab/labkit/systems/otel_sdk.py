"""otel-sdk: the official MCP Python SDK 2.x, client and server, each exporting its own spans."""

from __future__ import annotations

from labkit.lab import Lab
from labkit.systems import direct, notes

SYSTEM = "otel-sdk"

NOTES = {
    "drop_then_retry": f"{notes.SDK_DROP}; the SDK cancelled the request, and {notes.RETRY_AT_ONCE}",
    "drop_no_retry": f"{notes.SDK_DROP}; the SDK cancelled the request; no retry",
    "repeat_after_result": notes.REPEAT,
    "target_down_then_retry": f"{notes.TARGET_DOWN}; the first call could not connect",
    "concurrent_sends": f"{notes.CONCURRENT} (two MCP clients in one process)",
    "read_only_noise": notes.READ_ONLY,
}

EXPECTED = {
    "drop_then_retry": (2, ["timeout", "result"]),
    "drop_no_retry": (1, ["timeout"]),
    "repeat_after_result": (2, ["result", "result"]),
    "target_down_then_retry": (1, ["connection_error", "result"]),
    "concurrent_sends": (2, ["result", "result"]),
    "read_only_noise": (0, ["result"] * 5),
}


def run(lab: Lab) -> dict:
    """Run the scenarios between an SDK 2.x client and server (built-in tracing)."""
    return direct.run(lab, SYSTEM, "labkit.clients.sdk2", [], NOTES, EXPECTED)
