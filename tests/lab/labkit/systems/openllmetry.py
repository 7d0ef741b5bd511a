"""openllmetry: MCP Python SDK 1.x, client and server, instrumented by OpenLLMetry."""

from __future__ import annotations

from labkit.lab import Lab
from labkit.systems import direct, otel_sdk

SYSTEM = "openllmetry"

NOTES = {
    **otel_sdk.NOTES,
    "drop_then_retry": "the client's read timeout (1 s) fired while the tool (acted, then 3 s to answer) was "
    "still working; OpenLLMetry swallowed the timeout (call_tool raised AttributeError) and the client at "
    "once sent the identical call again on the same session, answered at once",
    "drop_no_retry": "the client's read timeout (1 s) fired while the tool (acted, then 3 s to answer) was "
    "still working; OpenLLMetry swallowed the timeout; no retry",
}

EXPECTED = otel_sdk.EXPECTED


def run(lab: Lab) -> dict:
    """Run the scenarios between an SDK 1.x client and server, both instrumented by OpenLLMetry."""
    return direct.run(lab, SYSTEM, "labkit.clients.sdk1", ["--openllmetry"], NOTES, EXPECTED)
