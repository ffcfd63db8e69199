"""Building many procs parses each expression once (issue 12 B4) and sends per proc only what
differs from the cluster ad (spec 05 §4.7)."""

from __future__ import annotations

import pytest

from cedar.classad_wire import parse_expr as real_parse_expr
from cedar.submit_language import Submit, SubmitSettings, encodings

DESCRIPTION = """
executable = /bin/sleep
arguments = 60 $(Process)
request_memory = 128
output = out.$(Process)
requirements = Memory > 100 && OpSys == "LINUX"
queue {count}
"""


def _parses(monkeypatch: pytest.MonkeyPatch, count: int) -> int:
    calls = 0

    def counting(text: str):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real_parse_expr(text)

    for cache in (
        encodings._parsed,
        encodings._reprinted,
        encodings.quote,
        encodings.literal_value,
        encodings.requirement_references,
    ):
        cache.cache_clear()
    monkeypatch.setattr(encodings, "parse_expr", counting)
    Submit(DESCRIPTION.format(count=count)).build(1, settings=SubmitSettings())
    return calls


def test_expression_parses_do_not_grow_with_the_number_of_procs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    few = _parses(monkeypatch, 2)
    many = _parses(monkeypatch, 300)
    assert many == few
    assert few < 40


def test_proc_ads_hold_only_the_differences() -> None:
    ads = Submit(DESCRIPTION.format(count=3)).build(7, settings=SubmitSettings())
    assert ads.proc_ads[0] == {"ProcId": "0", "JobStatus": "1"}
    assert ads.proc_ads[2] == {"ProcId": "2", "JobStatus": "1", "Out": '"out.2"', "Args": '"60 2"'}
    assert ads.cluster_ad["Out"] == '"out.0"'
    full = ads.job_ad(2)
    assert full["Out"] == '"out.2"' and full["ClusterId"] == "7"
    assert "Requirements" in ads.cluster_ad
    assert all("Requirements" not in proc for proc in ads.proc_ads)


REUSED = """
executable = /bin/sleep
arguments = 600 $(Item)
hold = true
request_memory = 64
environment = "ROW=$(Row) NODE=$(Node) C=$(Cluster)"
queue 4 in (a, b)
"""


class _NeverDisjoint(frozenset):  # type: ignore[type-arg]
    def isdisjoint(self, other: object) -> bool:
        return False


@pytest.mark.parametrize(
    "description",
    [REUSED, DESCRIPTION.format(count=5), REUSED.replace("$(Item)", "$(Step)")],
)
def test_reused_builds_give_the_ads_of_a_build_per_proc(
    monkeypatch: pytest.MonkeyPatch, description: str
) -> None:
    """Steps that use no per-step macro are built once; the ads are those of a build per proc."""
    from cedar.submit_language import jobad

    settings = SubmitSettings()
    shared = Submit(description).build(9, settings=settings, now=1000)
    monkeypatch.setattr(jobad, "PER_STEP_MACROS", _NeverDisjoint())
    each = Submit(description).build(9, settings=settings, now=1000)
    assert shared.cluster_ad == each.cluster_ad
    assert shared.proc_ads == each.proc_ads
    procs = range(each.num_procs)
    assert each.num_procs > 1
    assert [shared.job_ad(i) for i in procs] == [each.job_ad(i) for i in procs]


def test_a_build_per_proc_where_the_steps_differ() -> None:
    ads = Submit(REUSED.replace("$(Item)", "$(Item) $(Step)")).build(3, settings=SubmitSettings())
    args = [ads.job_ad(i)["Args"] for i in range(8)]
    assert args == [f'"600 {item} {step}"' for item in "ab" for step in range(4)]
    assert [p["ProcId"] for p in ads.proc_ads] == [str(i) for i in range(8)]


def test_random_macros_are_drawn_for_every_proc() -> None:
    text = "executable = /bin/sleep\narguments = $RANDOM_INTEGER(0, 1000000000)\nqueue 20\n"
    ads = Submit(text).build(3, settings=SubmitSettings())
    assert len({ads.job_ad(i)["Args"] for i in range(20)}) > 1
