"""The analysis against the recorded runs of the real ``condor_q``: same numbers, same text."""

from __future__ import annotations

import json

import pytest

from cedar.analysis import analyze_job
from cedar.analysis.clauses import ClauseTable, number_clauses
from cedar.analysis.text import banner, render_job
from cedar.classad_wire import Expr
from tests.analysis.recorded import BANNER, recording

CASES = [
    ("q-better-analyze-match-raw", True, False),
    ("q-better-analyze-memory-plain", True, False),
    ("q-better-analyze-impossible-raw", True, False),
    ("q-better-analyze-held-raw", True, False),
    ("q-analyze-memory-raw", False, False),
    ("q-better-analyze-priority-raw", True, True),
]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recordings were made on a host in UTC (ctime is local time)."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


@pytest.mark.parametrize(("name", "better", "priority"), CASES)
def test_text_is_the_tools(name: str, better: bool, priority: bool) -> None:
    rec = recording(name)
    prios = {"testuser@minicondor": 527.061} if priority else None
    result = analyze_job(rec.jobs[0], rec.slots, analyze_summary=rec.analyze, priorities=prios)
    text = banner(*BANNER) + render_job(result, better=better, priority_mode=priority)
    assert text == rec.expected


def test_memory_case_numbers_and_words() -> None:
    rec = recording("q-better-analyze-memory-plain")
    result = analyze_job(rec.jobs[0], rec.slots, analyze_summary=rec.analyze)
    c = result.counts
    assert (c.slots, c.machines, c.rejected_by_job, c.rejecting_job, c.available_now) == (
        4, 1, 4, 0, 0
    )  # fmt: skip
    shown = {r.step: r.matched for r in result.clauses if r.shown}
    assert shown == {0: 4, 1: 4, 3: 4, 7: 0}
    memory = result.clauses[7]
    assert memory.suggestions[0].text == "lower RequestMemory to 1024 to match 4 slots"
    assert memory.histograms[0].attribute == "Memory"
    assert [(b.value, b.slots) for b in memory.histograms[0].bins] == [(1024, 4)]
    assert result.explanation == (
        "All 4 slots have less memory than the 2 GB you asked for (RequestMemory); "
        "the largest has 1 GB."
    )
    plain = json.loads(json.dumps(result.to_json()))  # plain JSON all the way down
    assert plain["counts"]["rejected_by_job"] == 4
    assert plain["clauses"][7]["suggestions"][0]["value"] == 1024


def test_held_case_state_and_autocluster_history() -> None:
    rec = recording("q-better-analyze-held-raw")
    result = analyze_job(rec.jobs[0], rec.slots, analyze_summary=rec.analyze)
    assert result.state == "Job is held.\n\nHold reason: submitted on hold at user's request"
    assert result.history.autocluster_running == 3
    assert result.counts.running_yours == 4
    assert result.explanation.startswith("Job is held (submitted on hold at user's request).")


def test_impossible_clause_is_the_blocker() -> None:
    rec = recording("q-better-analyze-impossible-raw")
    result = analyze_job(rec.jobs[0], rec.slots, analyze_summary=rec.analyze)
    assert [(r.step, r.matched) for r in result.clauses if r.shown] == [(0, 0), (5, 4)]
    assert 'TARGET.Machine == "nosuchhost.example.org"' in result.explanation


def test_numbering_skips_function_arguments() -> None:
    """Comparisons inside a call's arguments get no number (spec 08 §7.2)."""
    expr = Expr.parse('ifthenelse(A ?: "" != "Copy", B is undefined || C, 0) <= MY.Disk')
    assert [c.text for c in number_clauses(expr)] == [
        'ifthenelse(A ?: "" != "Copy",B is undefined || C,0) <= MY.Disk'
    ]


def test_parenthesised_arithmetic_gets_its_own_number() -> None:
    clauses = number_clauses(Expr.parse("(TARGET.RequestDisk - 5) <= MY.Disk && MY.Disk > 0"))
    assert [c.text for c in clauses] == [
        "TARGET.RequestDisk - 5",
        "[0] (TARGET.RequestDisk - 5) <= MY.Disk",
        "MY.Disk > 0",
        "[1] && [2]",
    ]


def test_constant_clauses_fold() -> None:
    from cedar.classad_wire import ClassAd

    job = ClassAd({"X": 1})
    table = ClauseTable(job, Expr.parse("(X == 1) && (TARGET.Y > 2) || (X == 2)"))
    table.count([ClassAd({"Y": 3}), ClassAd({"Y": 1})])
    shown = [(c.number, table.constant_word(c) or table.total(c)) for c in table.clauses
             if table.shown(c)]  # fmt: skip
    assert shown == [(1, 1)]  # X == 1 always true, X == 2 never: only the slot test is left
