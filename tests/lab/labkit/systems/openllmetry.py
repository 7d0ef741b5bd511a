"""openllmetry: MCP Python SDK 1.x, client and server, instrumented by OpenLLMetry."""

from __future__ import annotations

from labkit.lab import Lab
from labkit.systems import direct, notes, otel_sdk

SYSTEM = "openllmetry"

NOTES = {
    **otel_sdk.NOTES,
    "drop_then_retry": f"{notes.SDK_DROP}; OpenLLMetry swallowed the timeout (call_tool raised AttributeError), "
    f"the server still answered later, and {notes.RETRY_AT_ONCE} on the same session",
    "drop_no_retry": f"{notes.SDK_DROP}; OpenLLMetry swallowed the timeout, the server still answered later; no retry",
    "target_down_then_retry": f"{notes.TARGET_DOWN}; the first call could not connect, and the client opened a new "
    "session for the retry",
}

EXPECTED = otel_sdk.EXPECTED


def run(lab: Lab) -> dict:
    """Run the scenarios between an SDK 1.x client and server, both instrumented by OpenLLMetry."""
    return direct.run(lab, SYSTEM, "labkit.clients.sdk1", ["--openllmetry"], NOTES, EXPECTED)
