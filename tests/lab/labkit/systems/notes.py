"""The sentences of truth.json's `notes` that several systems share."""

from __future__ import annotations

from labkit.scenarios import (
    CLIENT_DROP_TIMEOUT_S,
    CONCURRENT_WORK_S,
    READ_ONLY_CALLS,
    REPEAT_PAUSE_S,
    SLOW_FIRST_ANSWER_S,
)

SLOW_TOOL = f"the tool (acted, then {SLOW_FIRST_ANSWER_S:g} s to answer)"
SDK_DROP = f"the client's read timeout ({CLIENT_DROP_TIMEOUT_S:g} s) fired while {SLOW_TOOL} was still working"
HTTP_DROP = (
    f"the client gave up after {CLIENT_DROP_TIMEOUT_S:g} s and closed its HTTP connection while {SLOW_TOOL} "
    "was still working"
)
RETRY_AT_ONCE = "the client at once sent the identical call again, answered at once"
REPEAT = f"the client got the result, waited {REPEAT_PAUSE_S:g} s and deliberately sent the identical call again"
TARGET_DOWN = (
    "the lab stopped the server process before the first call; it was started again on the same port and the "
    "client sent the identical call again"
)
CONCURRENT = (
    f"two identical calls sent at the same moment on two connections; the tool takes {CONCURRENT_WORK_S:g} s, "
    "so they overlapped"
)
READ_ONLY = f"{READ_ONLY_CALLS} identical calls of a read-only tool in a row"
