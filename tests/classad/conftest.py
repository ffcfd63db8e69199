"""Shared fixtures: the reference implementation (classad2) as a black-box oracle."""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")

try:
    import classad2 as _classad2
except Exception as exc:  # pragma: no cover - depends on the environment
    _classad2 = None
    _IMPORT_ERROR = repr(exc)
else:
    _IMPORT_ERROR = ""
    # classad2 registers some built-in functions (split, splitUserName, ...) only on its first
    # parse of an ad; do one before any comparison.
    _classad2.parseOne("A = 1")


@pytest.fixture(scope="session")
def classad2() -> Any:
    """The reference bindings; tests using this are skipped when they cannot be imported."""
    if _classad2 is None:
        pytest.skip(f"reference oracle unavailable: import classad2 failed ({_IMPORT_ERROR})")
    return _classad2
