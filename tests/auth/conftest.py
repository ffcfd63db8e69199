"""Fixtures for the security-core tests: mock daemons and the reference client as an oracle.

The reference client (``htcondor2``) reads its configuration from the environment when it is
imported, so every use runs it in a subprocess with its own environment and a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cedar.daemons.daemon import Daemon
from cedar.daemons.testing import RecordingQueryHandler, mock_daemon
from cedar.errors import CedarError
from cedar.stream.drivers import MemoryPair
from tests.support import reference_import_problem

REFERENCE_TIMEOUT = 90


def _probe_reference() -> str:
    return reference_import_problem(REFERENCE_TIMEOUT) or ""


_REFERENCE_PROBLEM: str | None = None


class Reference:
    """Runs snippets of reference-client code in a subprocess; the snippet prints JSON."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path

    def env(self, **knobs: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            CONDOR_CONFIG="/dev/null",
            _condor_SEC_CLIENT_AUTHENTICATION_METHODS="FS",
            _condor_TOOL_DEBUG="D_FULLDEBUG D_SECURITY",
            _condor_TOOL_LOG=str(self.log_path),
        )
        env.update({f"_condor_{name}": value for name, value in knobs.items()})
        return env

    def run(self, code: str, **knobs: str) -> Any:
        """Run ``code`` (which must print one JSON document last) and return it."""
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=self.env(**knobs),
            capture_output=True,
            text=True,
            timeout=REFERENCE_TIMEOUT,
        )
        assert result.returncode == 0, f"reference client failed:\n{result.stderr[-3000:]}"
        return json.loads(result.stdout.strip().splitlines()[-1])

    def start(self, code: str, **knobs: str) -> subprocess.Popen[str]:
        """Start an interactive snippet (stdin/stdout pipes) for multi-step scenarios."""
        return subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=self.env(**knobs),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def log(self) -> str:
        """The reference client's debug log (for assertion messages)."""
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""


@pytest.fixture
def reference(tmp_path: Path) -> Reference:
    """The reference client; skipped only when ``import htcondor2`` really fails."""
    global _REFERENCE_PROBLEM
    if _REFERENCE_PROBLEM is None:
        _REFERENCE_PROBLEM = _probe_reference()
    if _REFERENCE_PROBLEM:
        pytest.skip(f"reference client unavailable: {_REFERENCE_PROBLEM}")
    return Reference(tmp_path / "reference.log")


@pytest.fixture
def served() -> Iterator[tuple[Daemon, RecordingQueryHandler]]:
    """A running mock daemon (FS and CLAIMTOBE; WRITE granted to nobody)."""
    daemon, handler = mock_daemon(allow={"READ": ["*"]})
    with daemon.run_in_thread():
        yield daemon, handler


class Pump(MemoryPair):
    """:class:`~cedar.stream.drivers.MemoryPair` plus a wrapper that records a server failure.

    ``tamper(direction, index, data)`` may rewrite the wire bytes of the ``index``-th message
    sent in ``direction`` ("c2s"/"s2c").
    """

    def __init__(self, tamper: Any = None) -> None:
        super().__init__(tamper=tamper)
        self.server_error: Exception | None = None

    def closing(self, server: Any) -> Any:
        """Wrap a server protocol so a failure closes the connection, as the daemon does."""
        try:
            return (yield from server)
        except CedarError as exc:
            self.server_error = exc
            return None


@pytest.fixture
def pump() -> type[Pump]:
    """The in-memory client/server harness class."""
    return Pump
