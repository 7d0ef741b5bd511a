"""Child processes of the lab: started in their own process group, always stopped by pid.

Standard library only (the orchestrator runs on the system Python).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


class LabError(Exception):
    """A step of the lab failed; the message names the system and the step."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_listening(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _signal_group(child: "Child", sig: int) -> None:
    try:
        os.killpg(child.popen.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Child:
    """One started process, its log file, and the ports it is expected to listen on."""

    def __init__(self, name: str, popen: subprocess.Popen, log_path: Path, ports: tuple[int, ...]) -> None:
        self.name = name
        self.popen = popen
        self.log_path = log_path
        self.ports = ports

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class Processes:
    """Every process the lab starts, so that each is stopped on success, failure or Ctrl-C."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.children: list[Child] = []
        self.ports_used: set[int] = set()

    def start(
        self,
        name: str,
        argv: list[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        ports: tuple[int, ...] = (),
        pipes: bool = False,
        popen_extra: dict | None = None,
    ) -> Child:
        """Start `argv` in a new session (its own process group), output to `log_path`.

        With `pipes`, stdin and stdout are pipes (the client's control channel) and only
        stderr goes to the log. `popen_extra` goes to Popen as is (e.g. user and group).
        """
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = open(log_path, "ab")
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipes else log_file,
            stderr=log_file,
            env=env,
            cwd=cwd,
            start_new_session=True,
            text=pipes,
            bufsize=1 if pipes else -1,
            **(popen_extra or {}),
        )
        log_file.close()
        child = Child(name, popen, log_path, ports)
        self.children.append(child)
        self.ports_used.update(ports)
        self.log(f"started {name} (pid {popen.pid}{', port ' + ','.join(map(str, ports)) if ports else ''})")
        return child

    def wait_listening(self, child: Child, timeout_s: float, step: str) -> None:
        """Wait until `child` listens on all its ports; fail if it exits or takes too long."""
        deadline = time.monotonic() + timeout_s
        while not all(is_listening(port) for port in child.ports):
            if child.popen.poll() is not None:
                raise LabError(f"{step}: {child.name} exited with {child.popen.returncode}\n{child.log_tail()}")
            if time.monotonic() > deadline:
                raise LabError(f"{step}: {child.name} did not listen within {timeout_s:g}s\n{child.log_tail()}")
            time.sleep(0.1)

    def stop(self, child: Child, grace_s: float = 15.0, sig: int = signal.SIGTERM) -> None:
        """Stop `child`'s process group by its pid: `sig`, then SIGKILL after `grace_s`."""
        if child.popen.poll() is None:
            _signal_group(child, sig)
            try:
                child.popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.log(f"{child.name} (pid {child.popen.pid}) ignored signal {sig} for {grace_s:g}s: killing it")
                _signal_group(child, signal.SIGKILL)
                child.popen.wait(timeout=10)
        # The leader is gone; members of its group may not be.
        _signal_group(child, signal.SIGKILL)
        for stream in (child.popen.stdin, child.popen.stdout):
            if stream is not None:
                stream.close()
        if child in self.children:
            self.children.remove(child)
        self.log(f"stopped {child.name} (pid {child.popen.pid}, exit {child.popen.returncode})")

    def stop_all(self) -> None:
        """Stop every child still running, the most recently started first."""
        for child in reversed(list(self.children)):
            self.stop(child, grace_s=10.0)

    def check_nothing_listens(self) -> None:
        """Fail if any port the lab used still accepts connections after the stop."""
        left = sorted(port for port in self.ports_used if is_listening(port))
        if left:
            raise LabError(f"cleanup: still listening on 127.0.0.1 port(s) {left}")
