"""condor_q's job-id order, streamed: the queue read in id windows, each sorted on its own.

condor_q prints jobs sorted by (ClusterId, ProcId), but the schedd answers in its own (hash)
order, so a single query can print nothing before its last ad arrived (``| head -3`` waited
for 40 000 ads).  Instead, the schedd is first asked for its cluster ads alone
(``IncludeClusterAd`` + ``NoProcAds``: one small ad per cluster with ``JobsPresent``, read in
milliseconds) and the id space is cut into windows of a growing number of jobs
(:data:`FIRST_WINDOW` doubling up to :data:`LARGEST_WINDOW`; a large cluster is cut by
``ProcId``).  Each window is one query with the user's constraint ANDed; its ads are rendered
as they arrive, sorted, and written before the next window is asked for.  The first lines
come after a few hundred jobs, and memory holds one window's text.

The windows tile the whole id space (the first is open below, the last open above), so a
job submitted or removed meanwhile is never lost or duplicated by the cutting: the cluster
list only chooses where to cut.  A schedd that ignores ``NoProcAds`` (older schedds, the mock
pool) answers with its proc ads, which are counted the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cedar.classad_wire.classad import ClassAd
    from cedar.classad_wire.expr import Expr

__all__ = ["FIRST_WINDOW", "LARGEST_WINDOW", "Window", "cluster_counts", "plan_windows"]

#: Jobs in the first window (the first lines wait for this many ads).
FIRST_WINDOW = 250
#: Jobs in the largest window (bounds the text kept at once: ~25 MB of ``-long``).
LARGEST_WINDOW = 8000
#: Below this many jobs in the queue, one plain query (the cluster query would not pay).
SMALL_QUEUE = 2 * FIRST_WINDOW


#: A cut between two windows: the first job id of the upper one, ``(ClusterId, ProcId)``.
Cut = tuple[int, int]


@dataclass(frozen=True)
class Window:
    """The job ids ``lower <= (ClusterId, ProcId) < upper`` (``None``: open)."""

    lower: Cut | None = None
    upper: Cut | None = None

    def constraint(self) -> str | None:
        """The window as a constraint (``None``: every job)."""
        parts = []
        if self.lower is not None:
            cluster, proc = self.lower
            parts.append(
                f"ClusterId >= {cluster}"
                if proc == 0
                else f"(ClusterId > {cluster} || (ClusterId == {cluster} && ProcId >= {proc}))"
            )
        if self.upper is not None:
            cluster, proc = self.upper
            parts.append(
                f"ClusterId < {cluster}"
                if proc == 0
                else f"(ClusterId < {cluster} || (ClusterId == {cluster} && ProcId < {proc}))"
            )
        return " && ".join(parts) or None


def _int(ad: ClassAd, name: str) -> int | None:
    value = ad.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def cluster_counts(ads: Iterable[ClassAd]) -> dict[int, tuple[int, int]]:
    """``ClusterId -> (jobs present, proc ids span)`` from cluster ads (``JobsPresent``,
    ``TotalSubmitProcs``) or, from a schedd that sent proc ads instead, by counting them."""
    counts: dict[int, tuple[int, int]] = {}
    for ad in ads:
        cluster = _int(ad, "ClusterId")
        if cluster is None:
            continue
        proc = _int(ad, "ProcId")
        jobs, span = counts.get(cluster, (0, 0))
        if proc is None:  # a cluster ad
            present = _int(ad, "JobsPresent") or 0
            total = _int(ad, "TotalSubmitProcs") or present
            counts[cluster] = (jobs + present, max(span, total))
        else:
            counts[cluster] = (jobs + 1, max(span, proc + 1))
    return counts


def plan_windows(counts: dict[int, tuple[int, int]]) -> list[Window]:
    """Cut the id space into windows of growing size (see the module's docstring); they
    cover every id exactly once, in order."""
    cuts: list[Cut] = []
    budget = FIRST_WINDOW
    pending = 0  # jobs since the last cut

    def cut(at: Cut) -> None:
        nonlocal budget, pending
        cuts.append(at)
        pending = 0
        budget = min(budget * 2, LARGEST_WINDOW)

    for cluster in sorted(counts):
        jobs, span = counts[cluster]
        if pending and pending + jobs > budget:
            cut((cluster, 0))
        if jobs > budget:  # a large cluster: cut by ProcId (its ids spread over ``span``)
            procs_per_job = max(span, jobs) / jobs
            proc, left = 0, jobs
            while left > budget:
                proc += max(1, int(budget * procs_per_job))
                left -= budget
                cut((cluster, proc))
            pending = left
        else:
            pending += jobs
        if pending >= budget:
            cut((cluster + 1, 0))
    bounds: list[Cut | None] = [None, *cuts, None]
    return [Window(lower, upper) for lower, upper in zip(bounds[:-1], bounds[1:], strict=True)]


def job_windows(schedd: Any, with_auth: bool) -> list[Window] | None:
    """The windows for this schedd's queue, or ``None`` when it is small enough for one
    plain query."""
    from cedar.commands import JobQuery
    from cedar.commands.schedd import job_query_command, query_request

    request = query_request(
        None,
        ["ClusterId", "ProcId", "JobsPresent", "TotalSubmitProcs"],
        send_server_time=False,
        include_cluster_ads=True,
    )
    request["NoProcAds"] = True
    counts = cluster_counts(JobQuery(schedd, job_query_command(with_auth), request))
    if sum(jobs for jobs, _ in counts.values()) <= SMALL_QUEUE:
        return None
    return plan_windows(counts)


def in_windows(
    schedd: Any,
    windows: list[Window],
    constraint: str | Expr | None,
    projection: Iterable[str],
    **options: Any,
) -> Iterator[Iterator[ClassAd]]:
    """One job query per window (the user's ``constraint`` ANDed: a tree is not parsed again),
    each as it is reached."""
    from cedar.classad_wire.constraints import and_constraints

    fields = tuple(projection)
    for window in windows:
        query = and_constraints([constraint, window.constraint()])
        yield iter(schedd.query_iter(query, fields, -1, **options))
