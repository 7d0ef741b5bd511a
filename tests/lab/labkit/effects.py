"""Ground truth: one JSON line per real execution of a side-effecting tool, fsync'd."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone


def rfc3339_now() -> str:
    """The current UTC time as RFC 3339 with microseconds, e.g. 2026-07-22T10:00:00.123456Z."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EffectLog:
    """Appends effect lines to a file; each line is on disk before the tool answers."""

    def __init__(self, path: str) -> None:
        self.path = path

    def record(self, tool: str, arguments: dict, scenario: str, attempt_seen_by_server: int) -> None:
        """Append one effect line and fsync it."""
        line = json.dumps(
            {
                "at": rfc3339_now(),
                "tool": tool,
                "arguments": arguments,
                "scenario": scenario,
                "attempt_seen_by_server": attempt_seen_by_server,
            },
            separators=(",", ":"),
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
