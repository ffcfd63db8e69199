"""``cedar q``'s id windows: they tile the id space exactly, and the windowed output is the
sorted output, byte for byte (against the mock pool, with tiny windows)."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from contextlib import redirect_stderr
from typing import Any

import pytest

from cedar.classad_wire import ClassAd, evaluate, parse_expr
from cedar.cli import qorder
from cedar.cli.main import main
from cedar.cli.qorder import FIRST_WINDOW, LARGEST_WINDOW, Window, cluster_counts, plan_windows
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit


def _inside(window: Window, cluster: int, proc: int) -> bool:
    """Evaluate the window's constraint text as the schedd would, on a job ad."""
    text = window.constraint()
    if text is None:
        return True
    job = ClassAd({"ClusterId": cluster, "ProcId": proc})
    return evaluate(parse_expr(text), job) is True


@pytest.mark.parametrize("seed", range(6))
def test_windows_tile_every_job_id_exactly_once(seed: int) -> None:
    rng = random.Random(seed)
    clusters = sorted(rng.sample(range(1, 400), rng.randint(1, 30)))
    counts = {}
    for cluster in clusters:
        jobs = rng.choice([1, 3, 40, 300, 2500])
        counts[cluster] = (jobs, jobs + rng.choice([0, 0, 5]))  # some ids removed
    windows = plan_windows(counts)
    probes = [(c, p) for c in clusters for p in {0, 1, counts[c][1] - 1, counts[c][1] + 7}]
    probes += [(0, 0), (clusters[-1] + 1, 0), (clusters[0] - 1, 99)]  # ids nobody listed
    last = -1
    for cluster, proc in sorted(probes):
        inside = [i for i, w in enumerate(windows) if _inside(w, cluster, proc)]
        assert len(inside) == 1, (cluster, proc, inside)
        assert inside[0] >= last  # windows come in id order
        last = inside[0]


def test_windows_grow_from_small_to_bounded() -> None:
    windows = plan_windows({4: (10_000, 10_000), 5: (10_000, 10_000)})
    first = windows[0].upper
    assert first == (4, FIRST_WINDOW)
    sizes = [
        b[1] - a[1]
        for a, b in zip(
            [w.lower for w in windows[1:-1]], [w.upper for w in windows[1:-1]], strict=True
        )
        if a and b and a[0] == b[0]
    ]
    assert sizes and max(sizes) <= LARGEST_WINDOW and sizes == sorted(sizes)
    assert windows[-1].upper is None and windows[0].lower is None


def test_cluster_counts_from_cluster_ads_or_proc_ads() -> None:
    cluster_ads = [ClassAd({"ClusterId": 7, "JobsPresent": 3, "TotalSubmitProcs": 5})]
    assert cluster_counts(cluster_ads) == {7: (3, 5)}
    proc_ads = [ClassAd({"ClusterId": 7, "ProcId": p}) for p in (0, 4)]
    assert cluster_counts(proc_ads) == {7: (2, 5)}


JOB_WINDOWS = qorder.job_windows


class _Reversed:
    """A job query answering in the reverse of the mock schedd's order (a real schedd's
    order is its hash table's)."""

    def __init__(self, query: Any) -> None:
        self.query = query
        self.summary: ClassAd | None = None

    def __iter__(self) -> Iterator[ClassAd]:
        ads = list(self.query)
        self.summary = self.query.summary
        return iter(ads[::-1])


def _reversed(method: Any) -> Any:
    def query_iter(self: Schedd, *args: Any, **kwargs: Any) -> _Reversed:
        return _Reversed(method(self, *args, **kwargs))

    return query_iter


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        schedd = Schedd(running.schedd_address)
        for count in (3, 1, 7, 2):
            schedd.submit(
                Submit(f"executable = /bin/sleep\narguments = 60\nqueue {count}\n"),
                submit_dir="/tmp",
            )
        yield running


def _cedar(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        status = main(list(argv), out=out)
    return status, out.getvalue()


@pytest.mark.parametrize(
    "options",
    [
        ["-long"],
        ["-json"],
        ["-xml"],
        ["-long", "-constraint", "ProcId >= 1", "-constraint", "ClusterId != 3"],
        ["-json", "-attributes", "ClusterId,ProcId"],
    ],
)
def test_windowed_output_is_the_sorted_output(
    pool: MockPool, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    argv = ["q", "-all", "-addr", pool.schedd_address, *options]
    monkeypatch.setattr(Schedd, "query_iter", _reversed(Schedd.query_iter))
    monkeypatch.setattr(qorder, "job_windows", lambda *_: None)
    status, plain = _cedar(*argv)
    assert status == 0 and plain
    monkeypatch.setattr(qorder, "job_windows", JOB_WINDOWS)
    monkeypatch.setattr(qorder, "FIRST_WINDOW", 2)
    monkeypatch.setattr(qorder, "LARGEST_WINDOW", 3)
    monkeypatch.setattr(qorder, "SMALL_QUEUE", 0)
    seen: list[int] = []
    real = qorder.in_windows

    def counting(*args: Any, **kwargs: Any) -> Iterator[Iterator[ClassAd]]:
        for query in real(*args, **kwargs):
            seen.append(1)
            yield query

    monkeypatch.setattr(qorder, "in_windows", counting)
    status, windowed = _cedar(*argv)
    assert status == 0
    assert len(seen) >= 5  # it really read the queue in several windows
    assert _without_server_time(windowed) == _without_server_time(plain)


def _without_server_time(text: str) -> list[str]:
    return [line for line in text.splitlines() if "ServerTime" not in line]
