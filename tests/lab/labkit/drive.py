"""What the client does in each scenario, the same for every system.

A system's client supplies `connect()`: an async context manager yielding a `Caller`, one
connection to the system. The driver runs the scenarios in order on one long-lived caller
(a second one only for the concurrent sends) and writes a report of what the client saw.

The client asks the orchestrator to stop or start the upstream server through the control
channel: a line `@lab <command>` on stdout, answered by one line on stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from labkit.effects import rfc3339_now
from labkit.scenarios import (
    BY_ID,
    CLIENT_DROP_TIMEOUT_S,
    CLIENT_PATIENT_TIMEOUT_S,
    READ_ONLY_CALLS,
    REPEAT_PAUSE_S,
    SCENARIOS,
    Scenario,
)


@dataclass
class Outcome:
    """What the client saw for one call: result | timeout | connection_error | error:<text>."""

    kind: str
    text: str = ""
    # The JSON-RPC id of the tools/call, where the client chose it.
    request_id: int | None = None

    @property
    def label(self) -> str:
        return f"error:{self.text}" if self.kind == "error" else self.kind


class Caller(Protocol):
    """One connection to the system under test."""

    async def call(self, tool: str, arguments: dict, timeout_s: float) -> Outcome:
        """Send one tools/call and classify what came back; never raise for a failed call."""


Connect = Callable[[], AbstractAsyncContextManager[Caller]]


Invoke = Callable[[str, dict, float], Awaitable[Outcome]]


class Connection:
    """A Caller over one MCP session at a time, the session held by a task of its own.

    Both SDKs run their HTTP transport in a task group entered by whoever opens the session,
    and a request that cannot connect crashes that group and cancels its host. Holding the
    session in a task of its own confines the crash to it: the call in flight sees a
    connection error, and the next call opens a new session, as a reconnecting client does.
    """

    def __init__(
        self,
        open_session: Callable[[], AbstractAsyncContextManager[Invoke]],
        classify: Callable[[BaseException], Outcome],
    ) -> None:
        self._open_session = open_session
        self._classify = classify
        self._requests: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None

    async def open(self) -> None:
        """Open a session; raise what opening it raised."""
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._requests = asyncio.Queue()
        self._task = asyncio.create_task(self._serve(ready, self._requests))
        await ready

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            await self._requests.put(None)
            await self._task

    async def call(self, tool: str, arguments: dict, timeout_s: float) -> Outcome:
        while True:
            if self._task is None or self._task.done():
                try:
                    await self.open()
                except Exception as error:
                    return self._classify(error)
            future: asyncio.Future = asyncio.get_running_loop().create_future()
            await self._requests.put((tool, arguments, timeout_s, future))
            outcome = await future
            if outcome is not None:  # None: the session ended before the call was sent
                return outcome

    async def _serve(self, ready: asyncio.Future, requests: asyncio.Queue) -> None:
        in_flight: asyncio.Future | None = None
        try:
            async with self._open_session() as invoke:
                ready.set_result(None)
                while (request := await requests.get()) is not None:
                    tool, arguments, timeout_s, in_flight = request
                    in_flight.set_result(await invoke(tool, arguments, timeout_s))
                    in_flight = None
        except Exception as error:  # the transport crashed (an ExceptionGroup), or never opened
            log(f"session ended: {error!r}")
            if not ready.done():
                ready.set_exception(error)
            if in_flight is not None:
                try:
                    in_flight.set_result(self._classify(error))
                except Exception as bug:  # surface a classification bug in the caller
                    in_flight.set_exception(bug)
            while not requests.empty():
                if (request := requests.get_nowait()) is not None:
                    request[3].set_result(None)


@dataclass
class ScenarioReport:
    """The client's side of one scenario."""

    calls: list[dict] = field(default_factory=list)

    async def call(self, caller: Caller, scenario: Scenario, timeout_s: float) -> Outcome:
        sent_at = rfc3339_now()
        started = time.monotonic()
        outcome = await caller.call(scenario.tool, scenario.arguments, timeout_s)
        call = {
            "sent_at": sent_at,
            "ended_at": rfc3339_now(),
            "seconds": round(time.monotonic() - started, 3),
            "saw": outcome.label,
        }
        if outcome.request_id is not None:
            call["jsonrpc_id"] = outcome.request_id
        self.calls.append(call)
        log(f"{scenario.id}: {scenario.tool} -> {outcome.label}")
        return outcome


def log(message: str) -> None:
    """Progress for lab.log (the orchestrator logs the client's stdout lines)."""
    print(message, flush=True)


async def control(command: str) -> str:
    """Ask the orchestrator to do `command` (e.g. stop-upstream) and wait until it is done."""
    print(f"@lab {command}", flush=True)
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
    if answer != "ok":
        raise RuntimeError(f"orchestrator could not {command}: {answer or 'no answer'}")
    return answer


async def settle(scenario: Scenario) -> None:
    """Wait until a call the client gave up on has had time to finish upstream."""
    await asyncio.sleep(scenario.first_answer_delay_s - CLIENT_DROP_TIMEOUT_S + 0.5)


async def drop_then_retry(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    await report.call(caller, s, CLIENT_DROP_TIMEOUT_S)
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)
    await settle(s)


async def drop_no_retry(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    await report.call(caller, s, CLIENT_DROP_TIMEOUT_S)
    await settle(s)


async def repeat_after_result(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)
    await asyncio.sleep(REPEAT_PAUSE_S)
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)


async def target_down_then_retry(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    await control("stop-upstream")
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)
    await control("start-upstream")
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)


async def concurrent_sends(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    async with connect() as second:
        await asyncio.gather(
            report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S),
            report.call(second, s, CLIENT_PATIENT_TIMEOUT_S),
        )


async def read_only_noise(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    for _ in range(READ_ONLY_CALLS):
        await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)


async def gateway_timeout_then_retry(report: ScenarioReport, caller: Caller, connect: Connect, s: Scenario) -> None:
    first = await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)
    if first.kind == "result":
        raise RuntimeError("gateway_timeout_then_retry: the gateway's timeout did not fire")
    await report.call(caller, s, CLIENT_PATIENT_TIMEOUT_S)


RUNNERS: dict[str, Callable[[ScenarioReport, Caller, Connect, Scenario], Awaitable[None]]] = {
    "drop_then_retry": drop_then_retry,
    "drop_no_retry": drop_no_retry,
    "repeat_after_result": repeat_after_result,
    "target_down_then_retry": target_down_then_retry,
    "concurrent_sends": concurrent_sends,
    "read_only_noise": read_only_noise,
    "gateway_timeout_then_retry": gateway_timeout_then_retry,
}
assert set(RUNNERS) == {s.id for s in SCENARIOS}


async def run(connect: Connect, scenario_ids: list[str], report_path: str) -> None:
    """Run the scenarios in order and write the report: {scenario id: {"calls": [...]}}."""
    reports: dict[str, dict] = {}
    async with connect() as caller:
        for scenario_id in scenario_ids:
            report = ScenarioReport()
            await RUNNERS[scenario_id](report, caller, connect, BY_ID[scenario_id])
            reports[scenario_id] = {"calls": report.calls}
    with open(report_path, "w", encoding="utf-8") as out:
        json.dump(reports, out, indent=2)
