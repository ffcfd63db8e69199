"""The condor-style command lines of ``cedar q`` and ``cedar status`` (no pool needed)."""

from __future__ import annotations

import io

import pytest

from cedar.cli import q, query
from cedar.cli.common import UsageError
from cedar.cli.listing import ListingArgs, scan


def _q(*argv: str) -> ListingArgs:
    return scan(list(argv), q.Q_OPTIONS, q._handle)


def _status(*argv: str) -> ListingArgs:
    return scan(list(argv), query.STATUS_OPTIONS, query._handle)


def test_af_takes_everything_up_to_the_next_option() -> None:
    # condor_status -af Name Memory slots evaluates "slots": it is not an ad type
    args = _status("-af", "Name", "Memory", "slots")
    assert args.output.af == ["Name", "Memory", "slots"] and args.positionals == []
    args = _status("-af", "Name", "-schedd", "vm@x")
    assert args.output.af == ["Name"] and args.flags["type"] == "schedd"
    assert args.positionals == ["vm@x"]


def test_repeated_af_lists_are_concatenated_and_modifiers_united() -> None:
    args = _q("-af:j", "Owner", "-af:h", "ClusterId", "--af", "ProcId")
    assert args.output.af == ["Owner", "ClusterId", "ProcId"]
    assert set(args.output.af_modifiers) == {"j", "h"}


def test_format_is_repeatable_and_not_af() -> None:
    args = _q("-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId")
    assert args.output.formats == [("%d.", "ClusterId"), ("%d\\n", "ProcId")]
    assert args.output.af == []


def test_repeated_constraints_are_anded_as_trees() -> None:
    args = _q("-constraint", "ProcId == 0", "-const", "ClusterId == 1")
    assert args.constraint() == "(ProcId == 0) && (ClusterId == 1)"
    args = _q("-constraint", "true) || (true")
    with pytest.raises(UsageError, match="invalid constraint"):
        args.constraint()


@pytest.mark.parametrize(
    "argv",
    [
        ["-l", "12"],
        ["12", "-long"],
        ["--long", "12"],
        ["12", "--l"],
    ],
)
def test_spellings_and_positions(argv: list[str]) -> None:
    args = _q(*argv)
    assert args.output.form == "long" and args.positionals == ["12"]


def test_condor_abbreviations_and_their_minimum() -> None:
    assert _q("-const", "x == 1").constraints == ["x == 1"]
    assert _q("-tot").flags["states"] == ["totals"]
    assert _q("-nob").flags["batch"] is False
    assert _q("-all").flags["allusers"] is True
    assert _status("-sched").flags["type"] == "schedd"
    assert _status("-subm").flags["type"] == "submitters"
    assert _status("-long:json").output.form == "json"
    assert _q("-h").help is True  # -h is -help; -ho is -hold
    assert _q("-ho").flags["states"] == ["hold"]
    with pytest.raises(UsageError, match="unknown option -hx"):
        _q("-hx")
    with pytest.raises(UsageError, match="unknown option -nosuch"):
        _status("-nosuch")


def test_missing_values_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        _q("-format", "%d")
    with pytest.raises(UsageError):
        _q("-af")
    with pytest.raises(UsageError):
        _q("-limit", "many")


def test_unknown_option_prints_the_subcommands_usage() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert q.run_argv(["-hold", "-nosuchoption"], out, err) == 2
    assert out.getvalue() == ""
    assert err.getvalue().startswith("cedar q: unknown option -nosuchoption\nusage: cedar q ")
    assert "not supported (condor options cedar lacks): -userlog" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert query.run_argv(["--help"], out, err) == 0
    assert out.getvalue().startswith("usage: cedar status ") and "-startd" in out.getvalue()


def test_q_restriction_list() -> None:
    assert q.restriction(["12", "13.4", "alice"]) == (
        '(ClusterId == 12) || (ClusterId == 13 && ProcId == 4) || (Owner == "alice")',
        True,
    )
    assert q.restriction([]) == (None, False)
    with pytest.raises(UsageError):
        q.restriction(["not a user!"])


def test_q_hands_analysis_options_to_the_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cedar q 12 -better-analyze`` is the analysis program (cedar/cli/analyze.py), with the
    same arguments; ``-af Analyzed`` is not."""
    from cedar.cli import analyze

    calls: list[list[str]] = []

    def fake(argv: list[str], out: io.StringIO) -> int:
        calls.append(argv)
        return 7

    monkeypatch.setattr(analyze, "main", fake)
    assert q.run_argv(["12", "-better-analyze"], io.StringIO(), io.StringIO()) == 7
    assert calls == [["12", "-better-analyze"]]
    assert not analyze.wants_analysis(["-af", "Analyzed"])
