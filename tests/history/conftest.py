"""Fixtures: a mock pool (collector + schedd on one port) per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cedar.daemons.pool import MockPool


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running
