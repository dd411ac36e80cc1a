"""What the fault tests share: a port nothing listens on, and the log lines of an outage."""

from __future__ import annotations

import socket

import pytest


def closed_port() -> int:
    """A local TCP port nothing listens on (bound once, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def outage_lines(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    """The log lines saying ``name`` went down (one per outage)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "crusade.faults" and r.getMessage().startswith(f"{name} unavailable")
    ]


def recovery_lines(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "crusade.faults" and r.getMessage().startswith(f"{name} is back")
    ]
