"""Fixtures: a mock pool (collector + schedd on one port, FS + AES-GCM) per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.daemons.pool import MockPool
from tests.support import reference_import_problem

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
    problem = reference_import_problem(REFERENCE_TIMEOUT)
    if problem is not None:
        pytest.skip(problem)
