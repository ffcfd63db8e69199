"""The `cedar conformance` battery against the real pool: the very checks the product runs."""

from __future__ import annotations

import pytest

from cedar.conformance import CHECKS, Check, Target
from cedar.conformance.checks import run_check


@pytest.mark.parametrize("item", CHECKS, ids=[c.name for c in CHECKS])
def test_conformance(item: Check, live_target: Target) -> None:
    outcome = run_check(item, live_target)
    if outcome.status == "skip":
        pytest.skip(outcome.detail)
    assert outcome.status == "pass", f"{outcome.detail}\nobserved: {outcome.observed.hex()}"
