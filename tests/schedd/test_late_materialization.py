"""Late materialization in both roles: our client sends a job factory, our mock schedd
materializes procs from it up to ``max_idle``/``max_materialize`` (docs/late-materialization.md)."""

from __future__ import annotations

import pytest
import trio

from cedar.commands import AsyncSchedd, Schedd
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit, SubmitError
from cedar.submit_language.factory import (
    digest_queue,
    item_bytes,
    job_factory,
    materialize,
    max_materialize,
    parse_item_bytes,
)

MAX_IDLE = "executable = /bin/sleep\narguments = 60\nmax_idle = 2\nqueue 10\n"
ITEMS = (
    "executable = /bin/echo\narguments = $(Process) $(name)\nmax_materialize = 3\n"
    "queue name from (\nalpha\nbeta\ngamma\ndelta\n)\n"
)
FACTORY_COLUMNS = ["ProcId", "JobMaterializeLimit", "JobMaterializeNextProcId", "JobsPresent"]


def _procs(schedd: Schedd, cluster: int) -> list[tuple[int, object]]:
    ads = schedd.query(f"ClusterId == {cluster}", ["ProcId", "Args"])
    return sorted((ad["ProcId"], ad.get("Args")) for ad in ads)


def test_max_idle_materializes_two_procs_and_more_as_they_leave(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.submit(Submit(MAX_IDLE))
    assert result.num_procs == 10 and result.proc_ads == []  # the schedd makes the procs
    assert [p for p, _ in _procs(schedd, result.cluster)] == [0, 1]
    (factory,) = schedd.query(
        f"ClusterId == {result.cluster} && ProcId =?= undefined", include_cluster_ads=True
    )
    assert factory["JobMaterializeMaxIdle"] == 2 and factory["JobMaterializeLimit"] == 10
    assert factory["TotalSubmitProcs"] == 10 and factory["JobsIdle"] == 2
    assert factory["JobMaterializeNextProcId"] == 2
    assert str(factory["JobMaterializeDigestFile"]).endswith(
        f"/{result.cluster}/condor_submit.{result.cluster}.digest"
    )
    # without IncludeClusterAd a query sees only the procs
    assert all("ProcId" in ad for ad in schedd.query(f"ClusterId == {result.cluster}"))
    schedd.hold(f"{result.cluster}.0", "wait")  # held counts as waiting: no proc is made
    assert [p for p, _ in _procs(schedd, result.cluster)] == [0, 1]
    schedd.remove(f"{result.cluster}.0", "gone")  # a proc leaves: the next one is made
    assert [p for p, _ in _procs(schedd, result.cluster)] == [1, 2]
    queue = pool.schedd.queue
    start = queue.clock()
    for tick in range(1, 40):  # run everything: the factory ends with its last proc
        queue.step(now=start + 1000 * tick)
    assert _procs(schedd, result.cluster) == []
    assert schedd.query(f"ClusterId == {result.cluster}", include_cluster_ads=True) == []
    history = list(schedd.history(f"ClusterId == {result.cluster}", ["ProcId", "JobStatus"]))
    assert sorted(ad["ProcId"] for ad in history) == list(range(10))
    assert sorted(ad["JobStatus"] for ad in history) == [3] + [4] * 9  # one removed


def test_items_and_max_materialize_async(pool: MockPool) -> None:
    async def main() -> tuple[int, list[tuple[int, object]]]:
        schedd = AsyncSchedd(pool.schedd_address)
        result = await schedd.submit(Submit(ITEMS))
        ads = await schedd.query(f"ClusterId == {result.cluster}", ["ProcId", "Args"])
        return result.num_procs, sorted((ad["ProcId"], ad["Args"]) for ad in ads)

    total, procs = trio.run(main)
    assert total == 4
    assert procs == [(0, "0 alpha"), (1, "1 beta"), (2, "2 gamma")]  # max_materialize = 3


def test_remove_ends_the_factory(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.submit(Submit(MAX_IDLE))
    schedd.remove(result.cluster, "enough")
    queue = pool.schedd.queue
    start = queue.clock()
    for tick in range(1, 4):
        queue.step(now=start + 1000 * tick)
    assert _procs(schedd, result.cluster) == []
    assert schedd.query(f"ClusterId == {result.cluster}", include_cluster_ads=True) == []


def test_a_digest_without_queue_statement_fails_the_commit(pool: MockPool) -> None:
    from cedar.commands import qmgmt
    from cedar.submit_language.factory import JobFactory

    schedd = Schedd(pool.schedd_address)
    bad = JobFactory({"Cmd": '"/bin/true"'}, 1, 1, "", 1, ["Item"], None)
    bad.digest = lambda items_file=None: "arguments = x\n"  # type: ignore[method-assign]
    with pytest.raises(qmgmt.QmgmtError, match="Queue statement"):
        schedd.transaction(lambda conn: qmgmt.submit_transaction(conn, lambda c: bad))
    assert schedd.query() == []


def test_digest_is_condor_submits() -> None:
    """Byte for byte the digests condor_submit 25.13.2 sent (captures/latemat)."""
    iwd = "/tmp/pool-latemat/jobs/lm"
    plain = Submit(MAX_IDLE.replace("sleep\narguments = 60", "sleep\narguments = 300"))
    factory = job_factory(plain, plain.build(1, submit_dir=iwd), max_materialize=None)
    assert factory.maximum == 10 and factory.items is None
    assert factory.digest() == (
        "FACTORY.Requirements=MY.Requirements\nFACTORY.Iwd=/tmp/pool-latemat/jobs/lm\n"
        "Item=\n\nQueue 10 \n"
    )
    items = Submit(ITEMS.replace("executable", "universe = vanilla\nexecutable"))
    ads = items.build(2, submit_dir=iwd)
    factory = job_factory(items, ads, max_materialize=max_materialize(items), submit_dir=iwd)
    assert (factory.maximum, factory.total_procs) == (3, 4)
    assert factory.item_data() == b"alpha\nbeta\ngamma\ndelta\n"
    spool = "/tmp/pool-latemat/local/spool/2/condor_submit.2.items"
    assert factory.digest(spool) == (
        "FACTORY.Requirements=MY.Requirements\narguments=$(Process) $(name)\n"
        "FACTORY.Iwd=/tmp/pool-latemat/jobs/lm\nmax_materialize=3\nuniverse=vanilla\n\n"
        f"Queue 1 name from {spool}\n"
    )
    assert digest_queue(factory.digest(spool)) == (1, ["name"], spool)
    assert ads.cluster_ad["Args"] == '"0 alpha"'  # the cluster ad is proc 0's


def test_user_variables_used_per_job_stay_in_the_digest() -> None:
    text = (
        "executable = /bin/echo\nbase = run\nsuffix = $(base)_$(Process)\noutput = $(suffix).out\n"
        "request_memory = 1G\nmax_idle = 1\nqueue 3\n"
    )
    submit = Submit(text)
    ads = submit.build(7, submit_dir="/w")
    digest = job_factory(submit, ads, max_materialize=None).digest()
    lines = digest.splitlines()
    # as condor_submit: user variables expanded, per-job macros left, sorted by name
    assert lines[1:6] == [
        "base=run",
        "FACTORY.Iwd=/w",
        "output=run_$(Process).out",
        "suffix=run_$(Process)",
        "Item=",
    ]
    assert not any(line.startswith(("executable", "request_memory")) for line in lines)
    procs = materialize(digest, ads.cluster_ad, 7, None)
    assert [p.get("Out") for p in procs] == [None, '"run_1.out"', '"run_2.out"']
    assert [ads.job_ad(i)["Out"] for i in range(3)] == ['"run_0.out"', '"run_1.out"', '"run_2.out"']


def test_item_rows_round_trip_with_several_fields() -> None:
    rows = [["a", "b c"], ["d", ""]]
    assert parse_item_bytes(item_bytes(rows), 2) == rows


def test_bad_max_materialize_is_an_error() -> None:
    with pytest.raises(SubmitError, match="max_materialize"):
        max_materialize(Submit("executable = /bin/true\nmax_materialize = lots\nqueue 2\n"))
    with pytest.raises(SubmitError, match="at least 1"):
        max_materialize(Submit("executable = /bin/true\nmax_materialize = 0\nqueue 2\n"))
    assert max_materialize(Submit("executable = /bin/true\nqueue 2\n")) is None


@pytest.mark.parametrize(
    "line",
    [
        "include : echo executable=/bin/evil |",
        "include = x",
        "if true",
        "getenv = true",
        "environment = $ENV(HOME)",
        "arguments = a \\",
        "just words",
    ],
)
def test_the_mock_refuses_a_digest_that_does_more_than_assign(line: str) -> None:
    digest = f"FACTORY.Requirements=MY.Requirements\n{line}\narguments=$(Process)\n\nQueue 2 \n"
    with pytest.raises(SubmitError, match="digest line 2"):
        materialize(digest, {"Cmd": '"/bin/true"', "Iwd": '"/tmp"'}, 1, None)


def test_the_mock_refuses_a_factory_over_its_limit(pool: MockPool) -> None:
    from cedar.commands import qmgmt
    from cedar.daemons.factories import MAX_FACTORY_PROCS

    schedd = Schedd(pool.schedd_address)
    text = f"executable = /bin/true\nmax_idle = 1\nqueue {MAX_FACTORY_PROCS + 1}\n"
    with pytest.raises(qmgmt.QmgmtError, match="the mock's limit"):
        schedd.submit(Submit(text))
    assert schedd.query(include_cluster_ads=True) == []


FACTORY_PAUSE = ["JobFactoryPaused", "JobMaterializePaused", "JobMaterializePauseReason"]


def _factory(schedd: Schedd, cluster: int) -> dict[str, object]:
    (ad,) = schedd.query(
        f"ClusterId == {cluster} && ProcId =?= undefined", include_cluster_ads=True
    )
    return {name: ad.get(name) for name in [*FACTORY_PAUSE, "JobMaterializeNextProcId"]}


@pytest.mark.parametrize("how", ["cluster id", "constraint", "owner"])
def test_holding_the_cluster_pauses_the_factory(pool: MockPool, how: str) -> None:
    """As the real schedd (25.13.2, docs/late-materialization.md): a hold that names the
    cluster itself sets JobFactoryPaused = JobMaterializePaused = 1 with the hold's reason and
    makes no proc, not even for one removed; release sets both to 0 and materializes again."""
    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(Submit(MAX_IDLE)).cluster
    assert _factory(schedd, cluster) == {
        "JobFactoryPaused": 0,
        "JobMaterializePaused": None,  # not there until the factory was paused once
        "JobMaterializePauseReason": None,
        "JobMaterializeNextProcId": 2,
    }
    schedd.hold(f"{cluster}.0", "one proc")  # a proc of it: the factory runs on
    assert _factory(schedd, cluster)["JobFactoryPaused"] == 0
    schedd.release(f"{cluster}.0")
    owner = schedd.query(f"ClusterId == {cluster}", ["Owner"])[0]["Owner"]
    target = {
        "cluster id": str(cluster),
        "constraint": f"ClusterId == {cluster}",
        "owner": f'Owner == "{owner}"',
    }[how]
    schedd.hold(target, "stop it")
    paused = _factory(schedd, cluster)
    assert paused["JobFactoryPaused"] == paused["JobMaterializePaused"] == 1
    assert str(paused["JobMaterializePauseReason"]).startswith("stop it (by user ")
    schedd.remove(f"{cluster}.0", "gone")  # room for a proc, but paused: none is made
    assert [p for p, _ in _procs(schedd, cluster)] == [1]
    schedd.release(target)
    assert _factory(schedd, cluster) == {
        "JobFactoryPaused": 0,
        "JobMaterializePaused": 0,
        "JobMaterializePauseReason": None,
        "JobMaterializeNextProcId": 3,
    }
    assert [p for p, _ in _procs(schedd, cluster)] == [1, 2]
