"""A user's constraint is parsed once, by the one rule (cedar/classad_wire/constraints.py), on
its way from the command line, the services or the compat layer to the wire: the parsed tree is
handed on and the clients send it as it is.

The parses are counted at the parser itself (every parse of every module goes through it), and
only those of the user's exact text: the mock schedd's own reading of the request it receives
(``Requirements = ((...))``) is never that text.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import redirect_stderr
from typing import Any

import pytest

from cedar.classad_wire import syntax
from cedar.cli.main import main
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit

CONSTRAINT = 'JobStatus =!= 42 && Owner =!= "nobody-at-all" && ProcId >= 1'


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        Schedd(running.schedd_address).submit(
            Submit("executable = /bin/sleep\narguments = 60\nqueue 3\n"), submit_dir="/tmp"
        )
        yield running


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the ClassAd parser is started on, from now on."""
    seen: list[str] = []
    parser = syntax._Parser
    original = parser.__init__

    def counting(self: Any, text: str, old: bool) -> None:
        seen.append(text)
        original(self, text, old)

    monkeypatch.setattr(parser, "__init__", counting)
    return seen


def _of_user(seen: list[str]) -> int:
    return sum(1 for text in seen if text.strip() == CONSTRAINT)


def cedar(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        status = main(list(argv), out=out)
    return status, out.getvalue(), err.getvalue()


def test_cedar_q_parses_the_constraint_once(pool: MockPool, parses: list[str]) -> None:
    status, out, err = cedar(
        "q", "-allusers", "-constraint", CONSTRAINT, "-af", "ProcId", "-addr", pool.schedd_address
    )
    assert (status, err) == (0, "")
    assert sorted(out.split()) == ["1", "2"]  # the constraint reached the schedd whole
    assert _of_user(parses) == 1


def test_cedar_hold_constraint_parses_it_once(pool: MockPool, parses: list[str]) -> None:
    status, out, err = cedar("hold", "-constraint", CONSTRAINT, "-addr", pool.schedd_address)
    assert (status, err) == (0, "")
    assert "have been held" in out
    assert _of_user(parses) == 1
    assert cedar("release", "-constraint", CONSTRAINT, "-addr", pool.schedd_address)[0] == 0


def test_the_compat_schedd_parses_it_once(pool: MockPool, parses: list[str]) -> None:
    from cedar.compat import htcondor2

    ads = htcondor2.Schedd(pool.schedd_address).query(CONSTRAINT, ["ProcId"])
    assert sorted(ad["ProcId"] for ad in ads) == [1, 2]  # type: ignore[index]
    assert _of_user(parses) == 1


def test_the_service_path_parses_it_once(parses: list[str]) -> None:
    from cedar.commands.schedd import query_request
    from cedar.service_core import check_constraint, scoped_constraint

    tree = check_constraint(CONSTRAINT, 8192)  # the API's input check
    scoped = scoped_constraint(tree, "alice@pool")  # the owner scope, as trees
    request = query_request(scoped, ["ProcId"])  # what goes on the wire
    assert _of_user(parses) == 1
    requirements = request.get_expr("Requirements")
    assert requirements is not None and CONSTRAINT in requirements.unparse(old=True)
    assert 'User == "alice@pool"' in requirements.unparse(old=True)


STATUS_CONSTRAINT = 'MyType =!= "nothing-at-all" && Name =!= "nobody"'


def test_cedar_status_parses_the_constraint_once(
    pool: MockPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in this thread only (the mock collector, in its own, reads the request's
    ``Requirements = ((...))``): any parse of a text holding the constraint, wrapped or not."""
    seen: list[str] = []
    parser = syntax._Parser
    original = parser.__init__
    me = threading.current_thread()

    def counting(self: Any, text: str, old: bool) -> None:
        if threading.current_thread() is me:
            seen.append(text)
        original(self, text, old)

    monkeypatch.setattr(parser, "__init__", counting)
    status, out, err = cedar(
        "status", "-schedd", "-constraint", STATUS_CONSTRAINT, "-af", "Name",
        "-pool", pool.address,
    )  # fmt: skip
    assert (status, err) == (0, "")
    assert out.strip()  # the constraint reached the collector whole: the schedd's ad matched
    assert sum(1 for text in seen if STATUS_CONSTRAINT in text) == 1


def test_cedar_history_parses_the_constraint_once(pool: MockPool, parses: list[str]) -> None:
    Schedd(pool.schedd_address).remove(CONSTRAINT, "to the history")
    parses.clear()  # the removal's own parse, and the mock schedd's reading of it
    status, _out, err = cedar(
        "history", "-constraint", CONSTRAINT, "-af", "ProcId", "-addr", pool.schedd_address
    )
    assert (status, err) == (0, "")
    assert _of_user(parses) == 1
