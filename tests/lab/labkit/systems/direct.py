"""Direct runs (no gateway): an OpenTelemetry-instrumented client and server, one receiver."""

from __future__ import annotations

from labkit.lab import (
    Lab,
    Receiver,
    Upstream,
    check_expected,
    count_effects,
    not_reproduced,
    run_client,
    scenario_truth,
)
from labkit.scenarios import SCENARIOS

NO_GATEWAY = "no gateway in a direct client-to-server run: only the client has a timeout"


def run(
    lab: Lab, system: str, client_module: str, server_args: list[str], notes: dict[str, str], expected: dict
) -> dict:
    """Run the scenarios in `notes` and return the system's truth entry."""
    python = lab.python(system)
    folder = lab.out / system
    receiver = Receiver(lab, system, python)
    upstream = Upstream(
        lab,
        system,
        python,
        folder / "effects.jsonl",
        ["--otlp", receiver.url, "--service-name", "lab-tools", *server_args],
    )
    upstream.start()
    ids = [s.id for s in SCENARIOS if s.id in notes]
    report = run_client(
        lab,
        system,
        [
            str(python),
            "-m",
            client_module,
            "--url",
            upstream.url,
            "--otlp",
            receiver.url,
            "--service-name",
            "lab-agent",
            *ids,
        ],
        upstream,
    )
    upstream.stop()
    receiver.finish()

    effects = count_effects(folder / "effects.jsonl")
    scenarios = [
        scenario_truth(s.id, s.tool, report, effects, notes[s.id])
        if s.id in notes
        else not_reproduced(s.id, NO_GATEWAY)
        for s in SCENARIOS
    ]
    check_expected(system, scenarios, expected)
    return {"system": system, "journals": ["traces.jsonl"], "scenarios": scenarios}
