"""``cedar submit`` reports a bad description as before it became an ``InvalidArgument``: the
parser's reason on one line and exit 1 (a refused description, as ``condor_submit``), while an
unreadable file stays a usage error (exit 2)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.cli.main import main
from cedar.daemons.pool import MockPool
from cedar.errors import InvalidArgument
from cedar.submit_language import SubmitError


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def submit(pool: MockPool, path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["submit", str(path), "--addr", pool.schedd_address], out=io.StringIO())
    return status, err.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("+Name%s = 1", "cedar submit: line 2: syntax error: +Name%s = 1"),
        ("+A = (", "cedar submit: Parse error in expression: A = ( (expected an expression,"),
        ("priority = abc", "cedar submit: priority = abc is not an integer"),
    ],
)
def test_bad_description_exits_1_with_the_reason(
    pool: MockPool, tmp_path: Path, line: str, message: str
) -> None:
    sub = tmp_path / "bad.sub"
    sub.write_text(f"executable = /bin/true\n{line}\nqueue\n")
    status, last = submit(pool, sub)
    assert (status, last[: len(message)]) == (1, message)
    assert pool.schedd.queue.all_jobs() == []


def test_unreadable_file_is_still_a_usage_error(pool: MockPool, tmp_path: Path) -> None:
    status, last = submit(pool, tmp_path / "missing.sub")
    assert status == 2 and last.startswith("cedar submit: cannot read submit file")


def test_submit_error_is_an_invalid_argument() -> None:
    assert issubclass(SubmitError, InvalidArgument) and issubclass(SubmitError, ValueError)
