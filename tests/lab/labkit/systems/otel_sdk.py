"""otel-sdk: the official MCP Python SDK 2.x, client and server, each exporting its own spans."""

from __future__ import annotations

from labkit.lab import Lab
from labkit.systems import direct

SYSTEM = "otel-sdk"

NOTES = {
    "drop_then_retry": "the client's read timeout (1 s) fired while the tool (acted, then 3 s to answer) was "
    "still working; the SDK cancelled the request, and the client at once sent the identical call again, "
    "answered at once",
    "drop_no_retry": "the client's read timeout (1 s) fired while the tool (acted, then 3 s to answer) was "
    "still working; the SDK cancelled the request; no retry",
    "repeat_after_result": "the client got the result, waited 1 s and deliberately sent the identical call again",
    "target_down_then_retry": "the server process was stopped, so the first call could not connect; the server "
    "was started again on the same port and the client sent the identical call again",
    "concurrent_sends": "two identical calls sent at the same moment on two client connections (two MCP "
    "clients in one process); the tool takes 0.5 s, so they overlapped",
    "read_only_noise": "five identical calls of a read-only tool in a row",
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
