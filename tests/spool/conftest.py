"""Fixtures: an input tree like the captures' (spec 07 §10) and a simulating mock pool."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.daemons.pool import MockPool


def make_inputs(root: Path) -> Path:
    """``job.sh`` (0755), ``blob.bin`` (bytes 00..ff, 0600), ``sub/`` (0750) with ``data.txt``
    (0640) and ``empty.dat`` (0644): the input tree of the spool-* captures."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "job.sh").write_text("#!/bin/sh\necho result ok > result.txt\n")
    os.chmod(root / "job.sh", 0o755)
    (root / "blob.bin").write_bytes(bytes(range(256)))
    os.chmod(root / "blob.bin", 0o600)
    (root / "sub").mkdir(exist_ok=True)
    os.chmod(root / "sub", 0o750)
    (root / "sub" / "data.txt").write_text("line one\nline two\n")
    os.chmod(root / "sub" / "data.txt", 0o640)
    (root / "sub" / "empty.dat").write_bytes(b"")
    os.chmod(root / "sub" / "empty.dat", 0o644)
    return root


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    return make_inputs(tmp_path / "job")


@pytest.fixture
def spool_pool(tmp_path: Path) -> Iterator[MockPool]:
    pool = MockPool(simulate=True, tick=0.05, run_time=0.1, spool_dir=str(tmp_path / "spool"))
    with pool.run_in_thread() as running:
        yield running
