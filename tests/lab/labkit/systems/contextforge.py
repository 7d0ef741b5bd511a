"""contextforge and contextforge-pg: IBM ContextForge MCP gateway between the client and the server.

The client calls ContextForge's JSON-RPC endpoint `POST /rpc` with a JWT; ContextForge calls
the lab's server (SDK 1.x FastMCP, Streamable HTTP), registered with `POST /gateways`. The
journal is ContextForge's database (SQLite file, or a PostgreSQL dump) and its JSON log.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from labkit.lab import Lab, Upstream, check_expected, count_effects, run_client, scenario_truth
from labkit.postgres import Postgres
from labkit.procs import Child, LabError, free_port
from labkit.scenarios import CONTEXTFORGE_TOOL_TIMEOUT_S, GATEWAY_TIMEOUT_ANSWER_S, SCENARIOS
from labkit.systems import notes

GATEWAY_NAME = "lab-tools"
ADMIN_EMAIL = "admin@example.com"

NOTES = {
    "drop_then_retry": f"{notes.HTTP_DROP} behind ContextForge; {notes.RETRY_AT_ONCE}",
    "drop_no_retry": f"{notes.HTTP_DROP} behind ContextForge; no retry",
    "repeat_after_result": notes.REPEAT,
    "target_down_then_retry": f"{notes.TARGET_DOWN}; ContextForge could not connect and answered the first call "
    "with an error",
    "concurrent_sends": notes.CONCURRENT,
    "read_only_noise": notes.READ_ONLY,
    "gateway_timeout_then_retry": f"ContextForge's own timeout (TOOL_TIMEOUT={CONTEXTFORGE_TOOL_TIMEOUT_S}) fired "
    f"while the tool (acted, then {GATEWAY_TIMEOUT_ANSWER_S:g} s to answer) kept working; the client got "
    "ContextForge's error and sent the identical call again, answered at once",
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


class Gateway:
    """One ContextForge process (`mcpgateway`) on 127.0.0.1, logging into `folder`."""

    def __init__(
        self,
        lab: Lab,
        system: str,
        python: Path,
        folder: Path,
        database_url: str,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.lab = lab
        self.system = system
        self.python = python
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = lab.env(
            HOME=str(folder / "lab"),
            DATABASE_URL=database_url,
            JWT_SECRET_KEY=secrets.token_hex(32),
            AUTH_ENCRYPTION_SECRET=secrets.token_hex(32),
            PLATFORM_ADMIN_EMAIL=ADMIN_EMAIL,
            PLATFORM_ADMIN_PASSWORD=secrets.token_hex(16),
            SSRF_ALLOW_LOCALHOST="true",
            OBSERVABILITY_ENABLED="true",
            STRUCTURED_LOGGING_DATABASE_ENABLED="true",
            LOG_REQUESTS="true",
            LOG_LEVEL="INFO",
            LOG_TO_FILE="true",
            LOG_FORMAT="json",
            LOG_FOLDER=str(folder),
            LOG_FILE="gateway.log",
            TOOL_TIMEOUT=str(CONTEXTFORGE_TOOL_TIMEOUT_S),
            **(extra_env or {}),
        )
        self.child: Child | None = None
        self.token = ""

    def start(self) -> None:
        argv = [str(self.python.parent / "mcpgateway"), "--host", "127.0.0.1", "--port", str(self.port)]
        self.child = self.lab.procs.start(
            f"{self.system} mcpgateway",
            argv,
            Path(self.env["HOME"]) / "mcpgateway.log",
            env=self.env,
            cwd=Path(self.env["HOME"]),
            ports=(self.port,),
        )
        self.lab.procs.wait_listening(self.child, 120, f"{self.system}: start ContextForge")
        self._wait_healthy()
        self.token = self._mint_token()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise LabError(f"{self.system}: ContextForge /health never answered 200\n{self.child.log_tail()}")
            time.sleep(0.5)

    def _mint_token(self) -> str:
        """A JWT for the admin user, from ContextForge's own `create_jwt_token` utility."""
        done = subprocess.run(
            [str(self.python), "-m", "mcpgateway.utils.create_jwt_token", "--username", ADMIN_EMAIL, "--exp", "120"],
            capture_output=True,
            text=True,
            timeout=60,
            env=self.env,
            cwd=self.env["HOME"],
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise LabError(f"{self.system}: create_jwt_token failed\n{done.stderr[-2000:]}")
        return lines[-1].strip()

    def api(self, method: str, path: str, body: dict | None = None) -> object:
        """One call of ContextForge's REST API with the admin token."""
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise LabError(f"{self.system}: {method} {path} -> HTTP {error.code}: {error.read()[:2000]!r}") from None

    def register(self, upstream_url: str) -> dict[str, str]:
        """Register the upstream with POST /gateways; return upstream tool name -> exposed name."""
        gateway = self.api(
            "POST", "/gateways", {"name": GATEWAY_NAME, "url": upstream_url, "transport": "STREAMABLEHTTP"}
        )
        tools = self.api("GET", "/tools?limit=0")
        items = tools if isinstance(tools, list) else tools.get("items", [])
        tool_map = {t["originalName"]: t["name"] for t in items if t.get("gatewayId") == gateway["id"]}
        missing = sorted({s.tool for s in SCENARIOS} - set(tool_map))
        if missing:
            raise LabError(f"{self.system}: ContextForge did not list the upstream's tools {missing}")
        self.lab.log(f"{self.system}: registered gateway {gateway['id']} ({gateway['url']}), {len(tool_map)} tools")
        return tool_map

    def stop(self) -> None:
        """Graceful stop (SIGTERM), so that buffered metrics are written."""
        if self.child is not None:
            self.lab.procs.stop(self.child, grace_s=30)
            self.child = None


def run_sqlite(lab: Lab) -> dict:
    """ContextForge on SQLite: journal mcp.db + gateway.log."""
    folder = lab.out / "contextforge"
    entry = _run(lab, "contextforge", folder, f"sqlite:///{folder / 'mcp.db'}", ["mcp.db", "gateway.log"])
    checkpoint(folder / "mcp.db")
    return entry


def run_postgres(lab: Lab) -> dict:
    """ContextForge on a real PostgreSQL server: journal dump.sql + gateway.log."""
    system = "contextforge-pg"
    folder = lab.out / system
    postgres = Postgres(lab, system, folder / "lab")
    postgres.start()
    try:
        entry = _run(lab, system, folder, postgres.url, ["dump.sql", "gateway.log"])
        postgres.dump(folder / "dump.sql")
    finally:
        postgres.stop()
    return entry


def _run(lab: Lab, system: str, folder: Path, database_url: str, journals: list[str]) -> dict:
    python = lab.python("contextforge")
    upstream = Upstream(lab, system, python, folder / "effects.jsonl", [])
    upstream.start()
    gateway = Gateway(lab, system, python, folder, database_url)
    gateway.start()
    tool_map = gateway.register(upstream.url)
    ids = [s.id for s in SCENARIOS]
    report = run_client(
        lab,
        system,
        [
            str(python),
            "-m",
            "labkit.clients.jsonrpc_http",
            "--url",
            gateway.base + "/rpc",
            "--header",
            f"Authorization: Bearer {gateway.token}",
            "--tool-map",
            json.dumps(tool_map),
            "--list-tools",
            *ids,
        ],
        upstream,
    )
    gateway.stop()
    upstream.stop()

    effects = count_effects(folder / "effects.jsonl")
    scenarios = [scenario_truth(s.id, tool_map[s.tool], report, effects, NOTES[s.id]) for s in SCENARIOS]
    check_expected(system, scenarios, EXPECTED)
    return {"system": system, "journals": journals, "scenarios": scenarios}


def checkpoint(database: Path) -> None:
    """Fold SQLite's write-ahead log into the database file, so that mcp.db stands alone."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA journal_mode=DELETE")
    connection.close()
