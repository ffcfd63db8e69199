"""Our client against our mock schedd, sync and async."""

from __future__ import annotations

import re

import pytest
import trio

from cedar.commands import AsyncSchedd, Schedd, qmgmt
from cedar.daemons import job_queue
from cedar.daemons.pool import MockPool
from cedar.daemons.schedd import Transaction
from cedar.errors import CedarError, InvalidArgument
from cedar.numbers import JobAction
from cedar.submit_language import Submit, SubmitError, SubmitSettings

DESCRIPTION = "executable = /bin/echo\narguments = job $(Process)\nqueue 3\n"


def _seed_foreign_job(pool: MockPool) -> int:
    """A job owned by someone else, put into the queue directly."""
    txn = Transaction(pool.schedd.queue, "alice@elsewhere")
    cluster = txn.new_cluster()
    txn.new_proc(cluster)
    txn.set_attribute(cluster, -1, "Cmd", '"/bin/true"')
    txn.commit()
    return cluster


def test_sync_lifecycle(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.submit(Submit(DESCRIPTION))
    assert result.num_procs == 3 and result.job_ids()[-1] == f"{result.cluster}.2"
    stream = schedd.query_iter(f"ClusterId == {result.cluster}", ["ProcId", "Args"])
    assert stream.summary is None
    ads = list(stream)
    assert [ad["Args"] for ad in ads] == ["job 0", "job 1", "job 2"]
    assert stream.summary is not None and stream.summary["Idle"] == 3
    assert len(schedd.query(limit=1)) == 1
    assert schedd.query(limit=0) == []

    held = schedd.act("hold", result.cluster, "maintenance")
    assert held.succeeded == 3 and held.changed
    again = schedd.hold(f"{result.cluster}.0")
    assert again.count(4) == 1 and not again.changed  # already held
    released = schedd.act(JobAction.Release, [f"{result.cluster}.1"], long=True)
    assert released.jobs == {f"{result.cluster}.1": 1}
    assert schedd.edit(result.cluster, "Foo", '"bar"') == 3
    assert schedd.edit([f"{result.cluster}.0"], "Num", 7) == 1
    by_proc = {ad["ProcId"]: ad for ad in schedd.query(f"ClusterId == {result.cluster}")}
    assert by_proc[0]["JobStatus"] == 5 and by_proc[1]["JobStatus"] == 1
    assert by_proc[0]["HoldReason"].startswith("maintenance (by user ")
    assert by_proc[2]["Foo"] == "bar" and by_proc[0]["Num"] == 7

    removed = schedd.remove(f"ClusterId == {result.cluster} && ProcId == 2", "done")
    assert removed.succeeded == 1
    history = list(schedd.history(f"ClusterId == {result.cluster}", ["ProcId", "RemoveReason"]))
    assert [ad["ProcId"] for ad in history] == [2]
    assert history[0]["RemoveReason"].startswith("done (by user ")
    assert schedd.act("release", 999).succeeded == 0


def test_state_machine_runs_jobs_to_completion(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.submit(Submit(DESCRIPTION))
    schedd.hold(f"{result.cluster}.2")
    queue = pool.schedd.queue
    queue.step(now=1000.0)
    assert sorted(ad["JobStatus"] for ad in schedd.query()) == [2, 2, 5]
    queue.step(now=1000.0 + queue.run_time)
    remaining = schedd.query()
    assert [(ad["ProcId"], ad["JobStatus"]) for ad in remaining] == [(2, 5)]
    done = list(schedd.history(projection=["ProcId", "JobStatus", "ExitCode"]))
    assert sorted((ad["ProcId"], ad["JobStatus"], ad["ExitCode"]) for ad in done) == [
        (0, 4, 0),
        (1, 4, 0),
    ]


def test_async_lifecycle(pool: MockPool) -> None:
    async def main() -> None:
        schedd = AsyncSchedd(pool.schedd_address)
        result = await schedd.submit(DESCRIPTION)
        ads = await schedd.query(f"ClusterId == {result.cluster}", ["ProcId"])
        assert [ad["ProcId"] for ad in ads] == [0, 1, 2]
        assert (await schedd.act("hold", result.cluster)).succeeded == 3
        assert await schedd.edit(result.cluster, "Foo", 1) == 3
        assert (await schedd.act("remove", [f"{result.cluster}.0"])).succeeded == 1
        history = [ad async for ad in schedd.history(projection=["ProcId"])]
        assert [ad["ProcId"] for ad in history] == [0]

    trio.run(main)


def test_disconnect_mid_transaction_leaves_queue_unchanged(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    schedd.submit(Submit(DESCRIPTION))
    before = [dict(ad) for ad in pool.schedd.queue.all_jobs()]

    class Boom(Exception):
        pass

    def work(conn):  # type: ignore[no-untyped-def]
        cluster = yield from qmgmt.new_cluster(conn)
        yield from qmgmt.new_proc(conn, cluster)
        yield from qmgmt.set_attribute(conn, cluster, -1, "Cmd", '"/bin/echo"')
        yield from qmgmt.set_attribute(conn, 1, 0, "Foo", "42")
        raise Boom  # the connection drops without a commit

    with pytest.raises(Boom):
        schedd.transaction(work)
    assert [dict(ad) for ad in pool.schedd.queue.all_jobs()] == before


def test_failed_submit_leaves_nothing(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    with pytest.raises(SubmitError):
        schedd.submit(Submit("executable = /no/such/program\nqueue 2\n"))
    with pytest.raises(qmgmt.QmgmtPermissionDenied, match="owner"):
        schedd.submit({"Cmd": "/bin/echo", "Owner": "nobody"}, count=2)
    assert pool.schedd.queue.all_jobs() == []


MANY = "executable = /bin/echo\narguments = job $(Process)\nrequest_memory = 64\nqueue 300\n"


def _queued(pool: MockPool, cluster: int) -> list[dict[str, object]]:
    jobs = [dict(ad) for ad in pool.schedd.queue.all_jobs() if ad["ClusterId"] == cluster]
    return sorted(jobs, key=lambda ad: int(ad["ProcId"]))  # type: ignore[call-overload]


def test_a_pipelined_submission_gives_every_proc_its_full_ad(pool: MockPool) -> None:
    """Several pipeline windows; per proc only ProcId, JobStatus and Args travel, yet every
    job ends with the cluster's attributes plus its own."""
    result = Schedd(pool.schedd_address).submit(Submit(MANY))
    jobs = _queued(pool, result.cluster)
    assert [job["ProcId"] for job in jobs] == list(range(300))
    assert [job["Args"] for job in jobs] == [f"job {i}" for i in range(300)]
    first = jobs[0]
    for job in jobs[1:]:
        differ = {k for k in first.keys() | job.keys() if first.get(k) != job.get(k)}
        assert differ <= {"ProcId", "Args", "GlobalJobId"}
    assert first["RequestMemory"] == 64 and first["Cmd"] == "/bin/echo"


def test_submitting_with_every_call_answered_gives_the_same_jobs(pool: MockPool) -> None:
    # Held jobs and a stopped clock: nothing the schedd does afterwards (start a job, stamp
    # EnteredCurrentStatus at the commit's second) tells the two submissions apart.
    pool.schedd.queue.clock = lambda: 1000.0
    schedd = Schedd(pool.schedd_address)
    held = MANY.replace("300", "70").replace("queue", "hold = true\nqueue")
    ads = Submit(held).build(1, settings=SubmitSettings(), now=1000)

    def build(cluster: int) -> qmgmt.ProcAds:
        return ads.cluster_ad, ads.proc_ads

    piped = schedd.transaction(lambda conn: qmgmt.submit_transaction(conn, build))
    answered = schedd.transaction(lambda conn: qmgmt.submit_transaction(conn, build, flags=0))
    assert answered.num_procs == piped.num_procs == 70

    def strip(jobs: list[dict[str, object]]) -> list[dict[str, object]]:
        return [
            {k: v for k, v in job.items() if k not in ("ClusterId", "GlobalJobId")} for job in jobs
        ]

    assert strip(_queued(pool, answered.cluster)) == strip(_queued(pool, piped.cluster))
    assert len(_queued(pool, piped.cluster)) == 70
    assert {job["JobStatus"] for job in _queued(pool, piped.cluster)} == {5}  # held


def test_a_proc_refused_mid_pipeline_leaves_the_queue_unchanged(
    pool: MockPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedd = Schedd(pool.schedd_address)
    schedd.submit(Submit(DESCRIPTION))
    before = [dict(ad) for ad in pool.schedd.queue.all_jobs()]
    monkeypatch.setattr(job_queue, "MAX_JOBS", len(before) + 150)  # NewProc 150 is refused
    with pytest.raises(qmgmt.QmgmtError, match="refused to create a job"):
        schedd.submit(Submit(MANY))
    assert [dict(ad) for ad in pool.schedd.queue.all_jobs()] == before
    monkeypatch.setattr(job_queue, "MAX_JOBS", len(before) + 300)
    assert schedd.submit(Submit(MANY)).num_procs == 300


def test_editing_someone_elses_job_is_refused(pool: MockPool) -> None:
    foreign = _seed_foreign_job(pool)
    schedd = Schedd(pool.schedd_address)
    with pytest.raises(qmgmt.QmgmtPermissionDenied):
        schedd.edit([f"{foreign}.0"], "Foo", 1)
    with pytest.raises(qmgmt.QmgmtPermissionDenied):
        schedd.edit(foreign, "Foo", 1)
    with pytest.raises(qmgmt.QmgmtPermissionDenied):
        schedd.edit([f"{foreign}.0"], "Owner", '"root"')
    assert schedd.act("hold", foreign).count(5) == 1
    assert "Foo" not in pool.schedd.queue.all_jobs()[0]


def test_query_errors_and_my_jobs(pool: MockPool) -> None:
    _seed_foreign_job(pool)
    schedd = Schedd(pool.schedd_address)
    schedd.submit(Submit("executable = /bin/echo\nqueue\n"))
    assert len(schedd.query()) == 2
    stream = schedd.query_iter(my_jobs="somebody", with_auth=True)
    mine = list(stream)
    assert len(mine) == 1 and stream.summary is not None and stream.summary["MyJobs"] == 1
    with pytest.raises(InvalidArgument):
        schedd.query("((")
    with pytest.raises(InvalidArgument):
        schedd.query("JobStatus ==")
    with pytest.raises(CedarError):
        Schedd("<127.0.0.1:1>", timeout=2).query()


def test_large_cluster_is_submitted_pipelined(pool: MockPool) -> None:
    """More procs than the NewProc pipeline window: every proc lands with its own attributes."""
    procs = 3 * qmgmt.PIPELINE_WINDOW + 5
    schedd = Schedd(pool.schedd_address)
    result = schedd.submit(
        Submit("executable = /bin/echo\narguments = p$(Process)\nhold = true\n"), count=procs
    )
    assert result.num_procs == procs
    ads = schedd.query(f"ClusterId == {result.cluster}", ["ProcId", "Args"])
    assert sorted((ad["ProcId"], ad["Args"]) for ad in ads) == [(i, f"p{i}") for i in range(procs)]


def test_repeated_job_queries_share_one_request_ad() -> None:
    from cedar.commands.schedd import query_request, shared_query_request

    first = shared_query_request("ClusterId > 1", ("ClusterId", "ProcId"), 5)
    assert shared_query_request("ClusterId > 1", ("ClusterId", "ProcId"), 5) is first
    assert shared_query_request("ClusterId > 2", ("ClusterId", "ProcId"), 5) is not first
    expected = query_request("ClusterId > 1", ("ClusterId", "ProcId"), 5)
    assert dict(first) == dict(expected)

    class Unhashable:  # e.g. an expression object given as the constraint
        __hash__ = None  # type: ignore[assignment]

        def __str__(self) -> str:
            return "ClusterId > 1"

    built = shared_query_request(Unhashable(), ("ClusterId", "ProcId"), 5)  # type: ignore[arg-type]
    assert built is not first and dict(built) == dict(expected)


def test_query_chunks_writes_every_ad_as_the_ad_writer_does(pool: MockPool) -> None:
    """``query_chunks`` turns each ad into bytes: the first of a shape through the ad (``other``),
    those of a shape that recurs straight from the message (``shaped``, no ad made), in the
    query's order, in lists of about ``chunk_size`` bytes; the summary comes last, and
    ``max_results`` still counts ads, not lists."""
    from cedar.classad_wire import ClassAd
    from cedar.classad_wire.jsonfmt import ad_to_json_compact_bytes, columns_json_bytes
    from cedar.errors import ResultLimitExceeded

    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(
        Submit("executable = /bin/echo\narguments = p$(Process)\nhold = true\n"), count=300
    ).cluster
    constraint = f"ClusterId == {cluster}"
    names = ["ProcId", "Args", "Owner", "JobStatus", "Requirements", "QDate", "CumulativeSlotTime"]
    taken = {"shaped": 0, "other": 0}

    def shaped(names: tuple[str, ...], values: object) -> bytes:
        taken["shaped"] += 1
        return columns_json_bytes(names, values)  # type: ignore[arg-type]

    def other(ad: ClassAd) -> bytes:
        taken["other"] += 1
        return ad_to_json_compact_bytes(ad)

    runs = []
    for _ in range(2):  # the shape gets its reader during the first run
        chunks = schedd.query_chunks(constraint, names, shaped=shaped, other=other, chunk_size=4096)
        lists = list(chunks)
        assert all(sum(map(len, items)) < 4096 + max(map(len, items)) for items in lists)
        assert len(lists) > 5 and chunks.summary is not None and chunks.summary["Held"] >= 300
        runs.append([data for items in lists for data in items])
    assert taken["shaped"] >= 300 and taken["other"] >= 100
    expected = [ad_to_json_compact_bytes(ad) for ad in schedd.query(constraint, names)]
    clock = re.compile(rb'"ServerTime": [0-9]+')  # the schedd's clock when it answered
    assert [[clock.sub(b"", data) for data in run] for run in (*runs, expected)] == [
        [clock.sub(b"", data) for data in expected]
    ] * 3
    small = Schedd(pool.schedd_address, max_results=299)
    with pytest.raises(ResultLimitExceeded):
        list(small.query_chunks(constraint, names, shaped=shaped, other=other))
