"""Fixtures of the collector tests (helpers are in :mod:`tests.collector.pool`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cedar.auth.server_policy import open_policy
from cedar.daemons.collector import MockCollector

from .pool import new_store


@pytest.fixture(scope="module")
def mock() -> Iterator[MockCollector]:
    """A mock collector holding the captured pool, served from a thread."""
    collector = MockCollector("mock@test", store=new_store())
    with collector.run_in_thread():
        yield collector


@pytest.fixture
def fresh_mock() -> Iterator[MockCollector]:
    """A mock collector of the captured pool that a test may change (with raw, anonymous
    updates: the loosened policy; the secure default is tested in tests/robustness)."""
    collector = MockCollector("fresh@test", store=new_store(), policy=open_policy())
    with collector.run_in_thread():
        yield collector
