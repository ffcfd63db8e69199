"""Caches kept outside the checkout are one per checkout (``tests.support.per_checkout``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import support
from tests.live_pool import test_compat_programs


def test_two_checkouts_get_two_directories(monkeypatch: pytest.MonkeyPatch) -> None:
    base = Path("/var/tmp/cedar-compat-venv")
    here = support.per_checkout(base)
    assert here.parent == base.parent and here.name.startswith("cedar-compat-venv-")
    assert support.per_checkout(base) == here  # stable: the second run finds its venv
    monkeypatch.setattr(support, "REPO", Path("/elsewhere/htc-cedar"))
    assert support.per_checkout(base) != here


def test_the_compat_programs_venv_is_this_checkouts() -> None:
    if os.environ.get("CEDAR_COMPAT_VENV"):
        pytest.skip("CEDAR_COMPAT_VENV chooses the venv")
    assert support.per_checkout(Path("/var/tmp/cedar-compat-venv")) == test_compat_programs.VENV
