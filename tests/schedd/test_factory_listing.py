"""``cedar q -factory`` and the batch view of a factory cluster against the mock schedd, which
materializes factories (the layout is condor_q 25.13.2's, docs/late-materialization.md)."""

from __future__ import annotations

import io
import time

from cedar.cli.q import run_argv
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool
from cedar.output import factory_lines
from cedar.submit_language import Submit

SIX_BY_TWO = "executable = /bin/sleep\narguments = 300\nmax_materialize = 2\nqueue 6\n"


def _q(pool: MockPool, *argv: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_argv(["-allusers", "-addr", pool.schedd_address, *argv], out, err)
    assert status == 0, err.getvalue()
    return out.getvalue().splitlines()


def test_factory_table_and_batch_counts(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    first = schedd.submit(Submit(SIX_BY_TWO)).cluster
    second = schedd.submit(Submit(SIX_BY_TWO.replace("= 2", "= 3"))).cluster
    schedd.remove(f"{first}.0", "one proc leaves")  # the factory makes proc 2
    (ad,) = schedd.query(f"ClusterId == {first}", ["Owner", "QDate"], 1)
    owner, t = ad["Owner"], time.localtime(ad["QDate"])
    when = f"{t.tm_mon:>2}/{t.tm_mday:<2} {t.tm_hour:02}:{t.tm_min:02}"  # 12/7  18:40, no 0
    digests = {
        ad["ClusterId"]: ad["JobMaterializeDigestFile"]
        for ad in schedd.query("ProcId =?= undefined", include_cluster_ads=True)
    }
    width = max(len(path) for path in digests.values())

    lines = _q(pool, "-factory")
    assert lines[2].startswith("-- Schedd: ")
    assert lines[3:] == [
        " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE "
        + "DIGEST".ljust(width),
        f"{first:>4}.    {owner:<14} {when}      2      2      0      2      0      3 Norm "
        f"{digests[first]}",
        f"{second:>4}.    {owner:<14} {when}      3      3      0      3      0      3 Norm "
        f"{digests[second]}",
    ]  # and no totals lines, as condor_q -factory
    assert _q(pool, "-factory", "-af", "ClusterId", "JobsPresent") == [
        f"{first} 2",
        f"{second} 3",
    ]
    assert _q(pool, "-factory", str(second))[4].startswith(f"{second:>4}.  ")

    batch = _q(pool)
    assert batch[3] == "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS"
    # DONE is what the factory made and has left (1), not TOTAL - present (4)
    assert batch[4].split()[-5:] == ["1", "_", "2", "6", f"{first}.1-2"]
    assert batch[5].split()[-5:] == ["_", "_", "3", "6", f"{second}.0-2"]
    assert _q(pool, str(first))[4] == batch[4]  # a restriction list counts DONE too
    # under -constraint condor_q leaves DONE empty (observed, ordinary clusters too)
    constrained = _q(pool, "-constraint", f"ClusterId == {first}")
    assert constrained[4].split()[-5:] == ["_", "_", "2", "6", f"{first}.1-2"]


def test_a_held_factory_is_listed_held(pool: MockPool) -> None:
    """condor_q -factory's MODE is Held after condor_hold of the cluster, Norm after release
    (the mock sets JobFactoryPaused as the real schedd does)."""
    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(Submit(SIX_BY_TWO)).cluster
    mode = lambda: _q(pool, "-factory")[4].split()[-2]  # noqa: E731
    assert mode() == "Norm"
    schedd.hold(str(cluster), "pause")
    assert mode() == "Held"
    assert _q(pool, "-factory", "-af", "JobsHeld", "JobMaterializeNextProcId") == ["2 2"]
    schedd.release(str(cluster))
    assert mode() == "Norm"


def test_no_factory_heading_is_not_padded(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    schedd.submit(Submit("executable = /bin/sleep\nqueue 2\n"))  # not a factory
    lines = _q(pool, "-factory")
    assert lines[3:] == [
        " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"
    ]
    assert "".join(factory_lines([])).endswith("DIGEST\n")
