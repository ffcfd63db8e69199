"""The one job-id grammar (cedar/jobid.py): the forms HTCondor 25.13.2's tools take, observed on
a real pool (condor_q's lenient restriction list, condor_rm's strict one), and hostile input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, parse_expr
from cedar.errors import InvalidArgument
from cedar.jobid import (
    MAX_NUMBER,
    JobId,
    format_job_id,
    ids_constraint,
    ids_constraint_text,
    match_job_id,
    parse_job_id,
)

# (text, what condor_rm made of it: a job id, or None = taken as a user name)
STRICT = [
    ("1", JobId(1)),
    ("1.2", JobId(1, 2)),
    ("01.2", JobId(1, 2)),  # condor_rm 099.2: "Job 99.2 not found"
    ("99.01", JobId(99, 1)),
    ("007", JobId(7)),
    ("0.0", JobId(0, 0)),  # the grammar takes it; condor_rm's cluster-0 refusal is the CLI's
    ("1.", None),  # condor_rm: 'jobs of user "99."'
    ("1.-1", None),
    ("+1", None),
    (" 1.2", None),
    ("1.2 ", None),
    ("1.+1", None),
    ("1.2.3", None),
    ("0x1", None),
    ("1e0", None),
    ("1.2x", None),
    ("a1", None),
    (".1", None),
    ("1,2", None),
    ("-1", None),
    ("", None),
    ("1\n", None),  # a regex "$" would take it
    ("\uff11", None),  # fullwidth one: \d takes it, condor does not
    ("\u0661.\u0662", None),  # Arabic-Indic digits
]
# condor_q's restriction list (what it listed on a pool with clusters 1 and 2)
LENIENT = [
    ("1", JobId(1)),
    ("1.1", JobId(1, 1)),
    ("1.", JobId(1)),  # listed all of cluster 1
    ("1.-1", JobId(1)),  # a negative proc: the whole cluster
    ("+1", JobId(1)),
    (" 1.2", JobId(1, 2)),  # blanks before (strtol)
    ("01.2", JobId(1, 2)),
    ("1.2 ", None),  # nothing after
    ("1.+1", None),
    ("1.2.3", None),
    ("0x1", None),
    ("1.1a", None),
    ("\uff11", None),
]


@pytest.mark.parametrize(("text", "expected"), STRICT)
def test_strict_grammar_is_condor_rm_s(text: str, expected: JobId | None) -> None:
    assert match_job_id(text) == expected


@pytest.mark.parametrize(("text", "expected"), LENIENT)
def test_lenient_grammar_is_condor_q_s(text: str, expected: JobId | None) -> None:
    assert match_job_id(text, lenient=True) == expected


@pytest.mark.parametrize(
    "text", ["2147483648", "1.2147483648", "4294967395", "9" * 200, "1." + "9" * 1_000_000]
)
def test_numbers_past_32_bits_are_refused_not_wrapped(text: str) -> None:
    # condor_rm wraps 4294967395 into cluster 99; cedar says so instead
    with pytest.raises(InvalidArgument, match="at most 2147483647"):
        match_job_id(text)


def test_the_largest_numbers_and_leading_zeros() -> None:
    assert match_job_id(f"{MAX_NUMBER}.{MAX_NUMBER}") == JobId(MAX_NUMBER, MAX_NUMBER)
    assert match_job_id("0" * 100 + "5") == JobId(5)


@pytest.mark.parametrize("value", [None, 12, b"1.2", 1.5])
def test_a_non_string_is_not_a_job_id(value: object) -> None:
    assert match_job_id(value) is None  # type: ignore[arg-type]


def test_parse_job_id_names_the_shape_and_bounds_the_message() -> None:
    with pytest.raises(InvalidArgument, match=r"is not a job id \(cluster or cluster.proc\)"):
        parse_job_id("alice")
    with pytest.raises(InvalidArgument, match=r"\(cluster.proc\)"):
        parse_job_id("12", need_proc=True)
    with pytest.raises(InvalidArgument) as caught:
        parse_job_id("x" * 100_000)
    assert len(str(caught.value)) < 120
    assert parse_job_id("12.3", need_proc=True) == JobId(12, 3)


@pytest.mark.parametrize(
    "fields", [(-1, None), (1, -1), (MAX_NUMBER + 1, 0), (True, 0), ("1", 0), (1, 2.0)]
)
def test_a_job_id_holds_only_numbers_in_range(fields: tuple[object, object]) -> None:
    with pytest.raises(InvalidArgument):
        JobId(*fields)  # type: ignore[arg-type]


def test_format_and_order() -> None:
    assert format_job_id(12, 3) == str(JobId(12, 3)) == "12.3"
    assert format_job_id(12) == str(JobId(12)) == "12"
    assert JobId(12).is_cluster and not JobId(12, 0).is_cluster
    assert sorted([JobId(2, 0), JobId(1, 5), JobId(1, 0)]) == [
        JobId(1, 0),
        JobId(1, 5),
        JobId(2, 0),
    ]


def test_ids_constraint_is_a_tree_that_selects_exactly_the_ids() -> None:
    jobs = [JobId(1, 2), JobId(3)]
    assert ids_constraint_text(jobs) == "(ClusterId == 1 && ProcId == 2) || (ClusterId == 3)"
    assert ids_constraint_text([JobId(4, 0)]) == "ClusterId == 4 && ProcId == 0"
    assert ids_constraint([]) is None and ids_constraint_text([]) is None
    tree = ids_constraint(jobs)
    assert tree is not None and parse_expr(ids_constraint_text(jobs) or "") == tree
    picked = [
        (c, p)
        for c in range(1, 5)
        for p in range(3)
        if tree.eval(ClassAd({"ClusterId": c, "ProcId": p})) is True
    ]
    assert picked == [(1, 2), (3, 0), (3, 1), (3, 2)]


@given(st.integers(0, MAX_NUMBER), st.none() | st.integers(0, MAX_NUMBER))
def test_formatting_then_parsing_gives_the_id_back(cluster: int, proc: int | None) -> None:
    """Property: printing any valid id and reading it back, strictly or leniently, gives it."""
    job = JobId(cluster, proc)
    assert match_job_id(str(job)) == job
    assert match_job_id(str(job), lenient=True) == job


@given(st.text(max_size=40))
def test_any_text_is_an_id_none_or_a_cedar_error(text: str) -> None:
    """Property: any text is an id, None or InvalidArgument (never another exception), and the
    strict grammar gives an id only for ASCII digits whose canonical spelling, but for leading
    zeros, is the text."""
    for lenient in (False, True):
        try:
            job = match_job_id(text, lenient=lenient)
        except InvalidArgument:
            continue
        if job is not None and not lenient:
            assert text.replace(".", "").isascii() and text.replace(".", "").isdigit()
            assert [part.lstrip("0") or "0" for part in text.split(".")] == str(job).split(".")
