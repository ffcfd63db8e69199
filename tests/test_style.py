"""Style and types are part of the suite, so the one test command (and so `.ci/run`) fails on a
lint error, an unformatted file or a type error, the same as on a failing test.

The tools come with the `dev` extra the README installs; without it these tests skip and say so.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_ruff_check() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    """`mypy --strict` (configured in pyproject.toml, with warn_unused_ignores) over `cedar`."""
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
