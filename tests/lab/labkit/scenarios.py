"""The lab's scenarios: one upstream tool each, fixed arguments, and the server-side knobs.

This module is imported by the orchestrator (system Python) and by the servers and clients
(inside each system's virtualenv), so it uses the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

# How long the client waits before it gives up on a slow call (drop scenarios). Above a
# gateway's worst delay before it dispatches (ContextForge's first call: over 1 s on a busy
# machine), so that the call reaches the tool before the client leaves.
CLIENT_DROP_TIMEOUT_S = 2.0
# How long a slow tool takes to answer its first call: 2.5x the client's patience.
SLOW_FIRST_ANSWER_S = 5.0
# ContextForge's own timeout (TOOL_TIMEOUT): 2x the client's patience in the drop scenarios,
# so that only the client's drop ends those calls.
CONTEXTFORGE_TOOL_TIMEOUT_S = 4
# How long a tool takes to answer the first call of the gateway-timeout scenario: 2.5x
# ContextForge's timeout.
GATEWAY_TIMEOUT_ANSWER_S = 10.0
# How long each of two concurrent calls keeps the tool busy, so that they overlap.
CONCURRENT_WORK_S = 0.5
# The pause between a delivered result and the deliberate repeat.
REPEAT_PAUSE_S = 1.0
# A client timeout that no healthy call comes near.
CLIENT_PATIENT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Scenario:
    """One scenario: which tool the client calls, with which arguments, and what the tool does."""

    id: str
    tool: str
    arguments: dict
    # Seconds the tool sleeps after acting, on the first call it sees only.
    first_answer_delay_s: float = 0.0
    # Seconds the tool sleeps after acting, on every call.
    answer_delay_s: float = 0.0
    read_only: bool = False
    destructive: bool = False
    title: str = ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="drop_then_retry",
        tool="deploy_release",
        arguments={"service": "catalog", "version": "2026.07.22"},
        first_answer_delay_s=SLOW_FIRST_ANSWER_S,
        destructive=True,
        title="Deploy a release of a service",
    ),
    Scenario(
        id="drop_no_retry",
        tool="rotate_credential",
        arguments={"account": "svc-billing", "credential": "api-key"},
        first_answer_delay_s=SLOW_FIRST_ANSWER_S,
        destructive=True,
        title="Rotate a service account's credential",
    ),
    Scenario(
        id="repeat_after_result",
        tool="create_ticket",
        arguments={"queue": "ops", "title": "Disk 91% full on db-3"},
        title="Open a ticket in a queue",
    ),
    Scenario(
        id="target_down_then_retry",
        tool="charge_card",
        arguments={"customer": "cus_0042", "amount_cents": 4999, "currency": "EUR"},
        title="Charge a customer's card",
    ),
    Scenario(
        id="concurrent_sends",
        tool="send_invoice",
        arguments={"invoice": "INV-2026-0117", "customer": "cus_0042"},
        answer_delay_s=CONCURRENT_WORK_S,
        title="Send an invoice to a customer",
    ),
    Scenario(
        id="read_only_noise",
        tool="get_status",
        arguments={"service": "catalog"},
        read_only=True,
        title="Read a service's status",
    ),
    Scenario(
        id="gateway_timeout_then_retry",
        tool="run_migration",
        arguments={"database": "orders", "migration": "0042_add_index"},
        first_answer_delay_s=GATEWAY_TIMEOUT_ANSWER_S,
        destructive=True,
        title="Run a schema migration",
    ),
)

BY_ID = {s.id: s for s in SCENARIOS}
BY_TOOL = {s.tool: s for s in SCENARIOS}

# How many identical calls the read-only scenario sends.
READ_ONLY_CALLS = 5


def annotations_for(scenario: Scenario) -> dict:
    """The MCP ToolAnnotations of a scenario's tool, as truthful hints.

    Every side-effecting tool acts anew on each call (nothing is idempotent); read-only
    tools change nothing.
    """
    if scenario.read_only:
        return {"readOnlyHint": True, "openWorldHint": False}
    return {
        "readOnlyHint": False,
        "destructiveHint": scenario.destructive,
        "idempotentHint": False,
        "openWorldHint": True,
    }
