"""``cedar history``: the parser, and ``-file`` output byte for byte as condor_history 25.13.2
printed it for the same files (``data/expected.N.out``, recorded with ``TZ=UTC``)."""

from __future__ import annotations

import io
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.classad_wire import ClassAd
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.unparse import unparse
from cedar.cli.common import UsageError
from cedar.cli.history import HistoryOptions, main, parse_options, table_row
from cedar.errors import InvalidArgument

DATA = Path(__file__).parent / "data"
CASES = [line.split("|", 1) for line in (DATA / "cases.txt").read_text().splitlines()]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(("number", "case"), list(enumerate(CASES, 1)))
def test_file_output_is_condor_historys(number: int, case: list[str]) -> None:
    name, options = case
    expected = (DATA / f"expected.{number}.out").read_text()
    out = io.StringIO()
    code = main(["-file", str(DATA / name), *shlex.split(options)], out=out)
    assert out.getvalue() + f"exit {code}\n" == expected


def test_transfer_history_has_no_default_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-file", str(DATA / "pool.epoch_history"), "-transfer-history"]) == 1
    assert "does not have a default print table" in capsys.readouterr().err


def _text(tree: Expr | None) -> str | None:
    """The constraint as the daemon reads it (the options hand the clients a tree)."""
    return None if tree is None else unparse(tree, old=True)


def test_options_and_positionals_in_any_order() -> None:
    opts = parse_options(["5", "-const", "A > 1", "-af:h", "X", "Y", "-limit", "3", "bob"])
    assert opts.restrictions == ["5", "bob"] and opts.af_arguments == ["X", "Y"]
    assert opts.af_modifiers == "h" and opts.limit == 3
    assert _text(opts.constraint()) == '(A > 1) && ((ClusterId == 5) || (Owner == "bob"))'
    request = opts.request()
    assert request.raw_text("Projection") == '"X,Y"'


def test_repeated_constraints_and_af_lists() -> None:
    opts = parse_options(["-constraint", "A == 1", "-constraint", "B == 2", "-af", "X", "-af", "Y"])
    assert _text(opts.constraint()) == "(A == 1) && (B == 2)"
    assert opts.af_arguments == ["X", "Y"]


def test_sources() -> None:
    assert parse_options(["-epochs"]).request()["HistoryRecordSource"] == "JOB_EPOCH"
    transfer = parse_options(["-transfer-history:IO", "-long"]).request()
    assert transfer["HistoryAdTypeFilter"] == "INPUT,OUTPUT" and "Projection" not in transfer
    startd = parse_options(["-startd", "-name", "slot1@vm"])
    assert startd.source == "startd" and startd.name == "slot1@vm"
    daemon = parse_options(["-daemon:startd"]).request()
    assert daemon["DaemonHistorySubsys"] == "STARTD"
    assert parse_options(["--long"]).form == "long"  # double-dash spellings work too
    assert parse_options(["-l"]).form == "long"
    assert parse_options(["-format", "%d\\n", "ClusterId"]).formats == [("%d\\n", "ClusterId")]


@pytest.mark.parametrize(
    "argv",
    [
        ["-bogus"],
        ["-forwards", "-since", "3"],
        ["-since", "3", "-completedsince", "5"],
        ["-limit", "x"],
        ["-constraint", "A =="],
        ["-format", "%d"],
        ["-af"],
        ["-long:x"],
        ["-transfer-history:Q", "-long"],
        ["not/an/owner"],
        ["-since", "true"],
    ],
)
def test_bad_command_lines(argv: list[str]) -> None:
    with pytest.raises(InvalidArgument):
        parse_options(argv).request()


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["-bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: cedar history" in err and "unknown option -bogus" in err
    assert isinstance(UsageError("x"), InvalidArgument)


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-help"]) == 0
    assert "-transfer-history[:IOC]" in capsys.readouterr().out


def test_table_row_of_an_empty_record() -> None:
    # condor_history -file on a record holding only MyType printed exactly this
    row = table_row(ClassAd({"MyType": "Job"}))
    assert row == " " * 13 + "[????????????] [?????????]   0+00:00:00" + " " * 16 + "\n"


def test_default_projection_is_condor_historys() -> None:
    assert HistoryOptions().projection().startswith("Args,Arguments,ClusterId,Cmd,")
