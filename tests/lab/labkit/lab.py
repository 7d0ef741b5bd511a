"""The orchestrator's toolbox: logging, venvs, the upstream server, the OTLP receiver, clients.

Standard library only: this runs on the system Python and starts everything else inside the
systems' virtualenvs.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from labkit import venvs
from labkit.procs import Child, LabError, Processes, free_port
from labkit.scenarios import BY_ID, Scenario

LAB_DIR = Path(__file__).resolve().parent.parent  # tests/lab, put on PYTHONPATH
START_TIMEOUT_S = 90
CLIENT_TIMEOUT_S = 240


class Lab:
    """Everything one run of the lab shares: output folder, log, processes, venvs."""

    def __init__(self, out: Path, venv_root: Path) -> None:
        self.out = out
        self.venv_root = venv_root
        self.started = time.monotonic()
        self.log_file = open(out / "lab.log", "a", encoding="utf-8")
        self.log_lock = threading.Lock()
        self.procs = Processes(self.log)
        self.pythons: dict[str, Path] = {}

    def log(self, message: str) -> None:
        line = f"[{time.monotonic() - self.started:7.1f}s] {message}"
        with self.log_lock:
            print(line, flush=True)
            self.log_file.write(line + "\n")
            self.log_file.flush()

    def prepare_venvs(self, names: list[str]) -> None:
        """Make (or reuse) the named venvs, installing them in parallel."""
        pool = ThreadPoolExecutor(max_workers=max(1, len(names)))
        try:
            pythons = list(pool.map(lambda name: venvs.ensure_venv(name, self.venv_root, self.log), names))
        except BaseException:
            venvs.stop_installs()
            raise
        finally:
            pool.shutdown(wait=True)
        self.pythons.update(zip(names, pythons, strict=True))

    def python(self, venv: str) -> Path:
        """The python of a prepared venv."""
        return self.pythons[venv]

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a child: ours, with the lab on PYTHONPATH and no proxies."""
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env["PYTHONPATH"] = str(LAB_DIR)
        env["PYTHONUNBUFFERED"] = "1"
        env["NO_PROXY"] = "127.0.0.1,localhost"
        env.update(extra)
        return env


class Upstream:
    """The lab's MCP server (labkit.toolserver) for one system, which can be stopped and restarted."""

    def __init__(self, lab: Lab, system: str, python: Path, effects: Path, extra_args: list[str]) -> None:
        self.lab = lab
        self.system = system
        self.python = python
        self.effects = effects
        self.extra_args = extra_args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.child: Child | None = None

    def start(self) -> None:
        argv = [
            str(self.python),
            "-m",
            "labkit.toolserver",
            "--port",
            str(self.port),
            "--effects",
            str(self.effects),
            *self.extra_args,
        ]
        log_path = self.lab.out / self.system / "lab" / "toolserver.log"
        self.child = self.lab.procs.start(
            f"{self.system} toolserver", argv, log_path, env=self.lab.env(), ports=(self.port,)
        )
        self.lab.procs.wait_listening(self.child, START_TIMEOUT_S, f"{self.system}: start toolserver")

    def stop(self) -> None:
        if self.child is not None:
            self.lab.procs.stop(self.child)
            self.child = None


class Receiver:
    """The OTLP/HTTP receiver writing `traces.jsonl` for one system."""

    def __init__(self, lab: Lab, system: str, python: Path) -> None:
        self.lab = lab
        self.system = system
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.traces = lab.out / system / "traces.jsonl"
        argv = [str(python), "-m", "labkit.otlp_receiver", "--port", str(self.port), "--out", str(self.traces)]
        self.child = lab.procs.start(
            f"{system} otlp receiver",
            argv,
            lab.out / system / "lab" / "receiver.log",
            env=lab.env(),
            ports=(self.port,),
        )
        lab.procs.wait_listening(self.child, START_TIMEOUT_S, f"{system}: start OTLP receiver")

    def finish(self) -> None:
        """Stop the receiver (after every exporter has shut down) and write otlp-body.json."""
        self.lab.procs.stop(self.child)
        write_otlp_body(self.traces, self.traces.with_name("otlp-body.json"))


def write_otlp_body(traces: Path, body: Path) -> None:
    """All spans of a traces.jsonl as one ExportTraceServiceRequest JSON body, on one line."""
    resource_spans = []
    if traces.exists():
        for line in traces.read_text(encoding="utf-8").splitlines():
            if line.strip():
                resource_spans.extend(json.loads(line)["resourceSpans"])
    body.write_text(json.dumps({"resourceSpans": resource_spans}, separators=(",", ":")) + "\n", encoding="utf-8")


def run_client(
    lab: Lab, system: str, argv: list[str], upstream: Upstream | None, env: dict[str, str] | None = None
) -> dict:
    """Run a client to the end, serving its control requests; return its report."""
    report_path = lab.out / system / "lab" / "client-report.json"
    argv = [*argv, "--report", str(report_path)]
    child = lab.procs.start(
        f"{system} client", argv, lab.out / system / "lab" / "client.log", env=env or lab.env(), pipes=True
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in child.popen.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while True:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise LabError(f"{system}: client did not finish within {CLIENT_TIMEOUT_S}s\n{child.log_tail()}") from None
        if line is None:
            break
        if line.startswith("@lab "):
            command = line[len("@lab ") :]
            lab.log(f"{system}: client asks to {command}")
            if upstream is None or command not in ("stop-upstream", "start-upstream"):
                raise LabError(f"{system}: client asked for an unknown control command {command!r}")
            upstream.stop() if command == "stop-upstream" else upstream.start()
            child.popen.stdin.write("ok\n")
            child.popen.stdin.flush()
        else:
            lab.log(f"{system} client: {line}")
    code = child.popen.wait(timeout=30)
    lab.procs.stop(child)
    if code != 0:
        raise LabError(f"{system}: client exited with {code}\n{child.log_tail()}")
    return json.loads(report_path.read_text(encoding="utf-8"))


def count_effects(effects: Path) -> dict[str, int]:
    """How many effect lines each scenario has in an effects.jsonl."""
    counts: dict[str, int] = {}
    if effects.exists():
        for line in effects.read_text(encoding="utf-8").splitlines():
            if line.strip():
                scenario = json.loads(line)["scenario"]
                counts[scenario] = counts.get(scenario, 0) + 1
    return counts


def scenario_truth(
    scenario_id: str, exposed_tool: str, report: dict, effects: dict[str, int], notes: str, **extra
) -> dict:
    """The truth.json entry of a reproduced scenario, from the client's report and the effects."""
    scenario: Scenario = BY_ID[scenario_id]
    calls = report[scenario_id]["calls"]
    saw = [c["saw"] for c in calls]
    return {
        "id": scenario_id,
        "reproduced": True,
        "tool": scenario.tool,
        "exposed_tool": exposed_tool,
        "arguments": scenario.arguments,
        "calls_sent": len(calls),
        "effects": effects.get(scenario_id, 0),
        "results_delivered": saw.count("result"),
        "client_saw": saw,
        "notes": notes,
        "calls": calls,
        **extra,
    }


def not_reproduced(scenario_id: str, why: str) -> dict:
    """The truth.json entry of a scenario this system cannot show."""
    scenario = BY_ID[scenario_id]
    return {"id": scenario_id, "reproduced": False, "tool": scenario.tool, "why": why}


def check_expected(system: str, entries: list[dict], expected: dict[str, tuple[int, list[str]]]) -> None:
    """Fail loudly when a scenario did not go as designed: (effects, client_saw kinds) per id.

    An expected `client_saw` item ending in ':' matches any error text after it.
    """
    for entry in entries:
        if not entry["reproduced"]:
            continue
        effects, saw = expected[entry["id"]]
        actual = entry["client_saw"]
        matches = len(actual) == len(saw) and all(
            a.startswith(e) if e.endswith(":") else a == e for a, e in zip(actual, saw, strict=False)
        )
        if entry["effects"] != effects or not matches:
            raise LabError(
                f"{system}: scenario {entry['id']} went otherwise than designed: "
                f"effects {entry['effects']} (expected {effects}), client saw {actual} (expected {saw})"
            )
