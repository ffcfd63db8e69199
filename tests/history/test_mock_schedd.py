"""Our history client against our mock schedd's job and epoch histories, sync and async."""

from __future__ import annotations

import pytest
import trio

from cedar.classad_wire import ClassAd
from cedar.commands import AsyncSchedd, HistoryError, Schedd, Startd
from cedar.commands._sync.history import HistoryQuery
from cedar.commands.history import history_request
from cedar.daemons.pool import MockPool
from cedar.errors import PermissionDenied
from cedar.numbers import Command

JOBS = (
    "executable = /bin/echo\n"
    "transfer_input_files = file:///tmp/in.txt, local.txt\n"
    'transfer_output_remaps = "out.txt = file:///tmp/out.txt"\n'
    "queue 2\n"
)


def _run_jobs(pool: MockPool) -> int:
    """Submit two jobs; proc 0 is vacated once while running, then both complete."""
    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(JOBS).cluster
    queue = pool.schedd.queue
    queue.step(now=1000.0)  # both run (SPAWN run 0)
    schedd.act("vacate", f"{cluster}.0")  # EPOCH run 0 of proc 0, vacated
    queue.step(now=1001.0)  # proc 0 runs again (SPAWN run 1)
    queue.step(now=1001.0 + queue.run_time)  # both exit (EPOCH, INPUT, OUTPUT)
    return cluster


def _raw(schedd: Schedd, request: ClassAd) -> HistoryQuery:
    return HistoryQuery(schedd._iterate, Command.QUERY_SCHEDD_HISTORY, request)


def test_epochs_of_a_vacated_and_rerun_job(pool: MockPool) -> None:
    cluster = _run_jobs(pool)
    schedd = Schedd(pool.schedd_address)
    query = schedd.history(f"ClusterId == {cluster} && ProcId == 0", source="epochs")
    runs = list(query)
    assert [(ad["RunInstanceID"], ad["EpochAdType"]) for ad in runs] == [(1, "EPOCH"), (0, "EPOCH")]
    assert runs[1]["VacateReason"] == "Job vacated by schedd" and "VacateReason" not in runs[0]
    assert all(ad["JobStatus"] == 2 for ad in runs)  # the status while running (spec 08 §5.1)
    assert runs[0]["ExitCode"] == 0 and "EpochWriteDate" in runs[0]
    assert query.summary is not None and query.summary["NumJobMatches"] == 2
    assert query.summary["AdCount"] == 3  # every EPOCH record examined, no SPAWN/INPUT/OUTPUT

    every = list(schedd.history(source="epochs", record_types="ALL", projection=["EpochAdType"]))
    kinds = [ad["EpochAdType"] for ad in every]
    assert sorted(kinds) == ["EPOCH"] * 3 + ["INPUT"] * 3 + ["OUTPUT"] * 2 + ["SPAWN"] * 3
    spawn = list(schedd.history(source="epochs", record_types="spawn", match=1))[0]
    assert set(spawn) >= {"ClusterId", "ProcId", "RunInstanceID", "EpochAdType", "Owner"}
    assert spawn["RunInstanceID"] == 1  # the newest first


def test_transfer_records(pool: MockPool) -> None:
    cluster = _run_jobs(pool)
    schedd = Schedd(pool.schedd_address)
    records = list(schedd.history(f"ClusterId == {cluster}", source="transfer"))
    assert sorted(ad["TransferClass"] for ad in records) == ["INPUT"] * 3 + ["OUTPUT"] * 2
    inputs = list(schedd.history(f"ClusterId == {cluster}", source="transfer", transfer_types="I"))
    assert len(inputs) == 3  # the vacated run fetched its input too
    (result,) = inputs[0]["InputPluginResultList"]
    assert result["TransferUrl"] == "file:///tmp/in.txt" and result["TransferType"] == "download"


def test_since_scan_limit_and_forwards(pool: MockPool) -> None:
    cluster = _run_jobs(pool)
    schedd = Schedd(pool.schedd_address)
    query = schedd.history(source="epochs", since=f"{cluster}.0", projection=["ProcId"])
    assert [ad["ProcId"] for ad in query] == [1]  # newest: 1's EPOCH; then 0's run 1 stops
    assert query.summary is not None and query.summary["AdCount"] == 2
    limited = schedd.history(source="epochs", record_types="ALL", scan_limit=2)
    assert len(list(limited)) == 2
    oldest = list(schedd.history(source="epochs", record_types="ALL", forwards=True, match=1))
    assert oldest[0]["EpochAdType"] == "SPAWN" and oldest[0]["RunInstanceID"] == 0
    assert len(list(schedd.history(source="epochs", scan_limit=0, match=0))) == 3  # 0: no limit
    assert len(list(schedd.history(completed_since=0, projection=["ClusterId"]))) == 2
    done = schedd.history(completed_since=10**10, projection=["ClusterId"])
    assert list(done) == []  # the newest job completed before 10**10: it ends the scan
    assert done.summary is not None and done.summary["AdCount"] == 1


def test_errors_and_silent_closes(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    with pytest.raises(HistoryError, match="STARTD_HISTORY undefined") as info:
        list(schedd.history(source="startd"))
    assert info.value.code == 5
    with pytest.raises(HistoryError, match="JOB_EPOCH_HISTORY_DIR undefined"):
        list(schedd.history(source="epochs", from_dir=True))
    projection = history_request()
    projection["Projection"] = 5
    with pytest.raises(HistoryError, match="ErrorCode 3: the projection is not a list") as info:
        list(_raw(schedd, projection))
    assert info.value.code == 3
    request = history_request(source="daemon")
    del request["DaemonHistorySubsys"]
    with pytest.raises(HistoryError, match="without subsystem") as info:
        list(_raw(schedd, request))
    assert info.value.code == 6
    # What the client refuses to send, sent anyway: the daemon closes without a reply.
    bad = history_request(since=4)
    bad["HistoryReadForwards"] = True
    with pytest.raises(HistoryError, match="Since together with HistoryReadForwards"):
        list(_raw(schedd, bad))
    literal = history_request()
    literal["Since"] = True
    with pytest.raises(HistoryError, match="closed the connection without answering") as info:
        list(_raw(schedd, literal))
    assert info.value.code is None
    # A schedd does not know GET_HISTORY: it refuses it during the security negotiation.
    with pytest.raises(PermissionDenied, match="unknown command"):
        list(Startd(pool.schedd_address).history())


def test_async_history_and_its_summary(pool: MockPool) -> None:
    cluster = _run_jobs(pool)

    async def main() -> None:
        schedd = AsyncSchedd(pool.schedd_address)
        query = schedd.history(f"ClusterId == {cluster}", ["ProcId"], source="epochs", match=1)
        assert [ad async for ad in query] == [ClassAd({"ProcId": 1})]
        assert query.summary is not None and query.summary["NumJobMatches"] == 1
        jobs = [ad async for ad in schedd.history(projection=["ProcId"])]
        assert sorted(ad["ProcId"] for ad in jobs) == [0, 1]

    trio.run(main)
