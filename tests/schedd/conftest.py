"""Fixtures: a mock pool (collector + schedd on one port, FS + AES-GCM) per test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.server.pool import MockPool

REFERENCE_TIMEOUT = 120


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def reference_env(log: Path) -> dict[str, str]:
    """The reference client configured through the environment only."""
    return dict(
        os.environ,
        CONDOR_CONFIG="/dev/null",
        _condor_SEC_CLIENT_AUTHENTICATION_METHODS="FS",
        _condor_TOOL_DEBUG="D_FULLDEBUG D_SECURITY",
        _condor_TOOL_LOG=str(log),
    )


@pytest.fixture(scope="session")
def reference_available() -> None:
    """Skip (with the reason) only when ``import htcondor2`` truly fails."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", "import htcondor2"],
            env=dict(os.environ, CONDOR_CONFIG="/dev/null"),
            capture_output=True,
            text=True,
            timeout=REFERENCE_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot run the reference client: {exc}")
    if result.returncode != 0:
        pytest.skip(f"import htcondor2 failed: {result.stderr.strip()[-300:]}")
