"""The history request ad: what each option puts on the wire (spec 08 §3.1-§3.2)."""

from __future__ import annotations

import io

import pytest

from cedar.commands.history import (
    HistoryError,
    history_request,
    read_history_file,
    record_type_filter,
    since_expression,
)
from cedar.errors import InvalidArgument

DEFAULT_TABLE = (
    "Args,Arguments,ClusterId,Cmd,CompletionDate,JobDescription,JobId,JobStatus,"
    "LastSuspensionTime,MATCH_EXP_JobDescription,NiceUser,Owner,ProcId,QDate,RemoteUserCpu,"
    "RemoteWallClockTime,TransferQueued,TransferringInput,TransferringOutput"
)


def texts(**kwargs: object) -> dict[str, str]:
    ad = history_request(**kwargs)  # type: ignore[arg-type]
    return {name: ad.raw_text(name) for name in ad}


def test_epochs_with_since_job_id() -> None:
    # history-epochs-since-raw (spec 08 §9.2)
    assert texts(projection="ClusterId,ProcId,RunInstanceID", since="4.0", source="epochs") == {
        "Since": "ClusterId == 4 && ProcId == 0",
        "Projection": '"ClusterId,ProcId,RunInstanceID"',
        "NumJobMatches": "-1",
        "StreamResults": "true",
        "HistoryRecordSource": '"JOB_EPOCH"',
    }


def test_transfer_history_input_only() -> None:
    # history-transfer-input-raw (spec 08 §9.1)
    assert texts(
        projection="ClusterId,ProcId,RunInstanceID,TransferClass",
        source="transfer",
        transfer_types="I",
    ) == {
        "Projection": '"ClusterId,ProcId,RunInstanceID,TransferClass"',
        "NumJobMatches": "-1",
        "StreamResults": "true",
        "HistoryAdTypeFilter": '"INPUT"',
        "HistoryRecordSource": '"JOB_EPOCH"',
    }
    assert texts(source="transfer")["HistoryAdTypeFilter"] == '"CHECKPOINT,INPUT,OUTPUT"'


def test_startd_history_limit() -> None:
    # history-startd-raw (spec 08 §9.3)
    assert texts(projection=DEFAULT_TABLE, match=3, source="startd") == {
        "Projection": f'"{DEFAULT_TABLE}"',
        "NumJobMatches": "3",
        "StreamResults": "true",
        "HistoryRecordSource": '"STARTD"',
    }


def test_completedsince_forwards_scanlimit_and_long() -> None:
    assert texts(completed_since=1795630021)["Since"] == "CompletionDate <= 1795630021"
    got = texts(forwards=True, scan_limit=3, projection="ClusterId,JobStatus,ProcId")
    assert got["ScanLimit"] == "3" and got["HistoryReadForwards"] == "true"
    assert "Projection" not in texts()  # -long / -json: whole records
    assert texts(match=0)["NumJobMatches"] == "-1"  # condor_history: N <= 0 => -1
    assert texts(constraint="((ClusterId == 4))")["Requirements"] == "((ClusterId == 4))"


def test_daemon_history() -> None:
    got = texts(source="daemon")
    assert got["HistoryRecordSource"] == '"DAEMON"'
    assert got["DaemonHistorySubsys"] == '"SCHEDD"' and got["HistoryAdTypeFilter"] == '"SCHEDD"'
    assert texts(source="daemon", subsystem="startd")["DaemonHistorySubsys"] == '"STARTD"'


def test_type_filters() -> None:
    assert record_type_filter("spawn") == "SPAWN"
    assert record_type_filter("input, output") == "INPUT,OUTPUT"
    assert record_type_filter(["TRANSFER", "epoch"]) == "CHECKPOINT,EPOCH,INPUT,OUTPUT"
    assert record_type_filter(None, "OC") == "CHECKPOINT,OUTPUT"
    assert record_type_filter(None) is None
    assert texts(source="epochs", record_types="ALL")["HistoryAdTypeFilter"] == '"ALL"'
    with pytest.raises(InvalidArgument):
        record_type_filter(None, "X")
    with pytest.raises(InvalidArgument):
        record_type_filter("a;b")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"source": "bogus"}, "unknown history source"),
        ({"since": 4, "forwards": True}, "forwards"),
        ({"completed_since": 5, "forwards": True}, "forwards"),
        ({"since": 4, "completed_since": 5}, "cannot be combined"),
        ({"since": "true"}, "constant"),
        ({"since": '"6.0"'}, "constant"),
        ({"since": "(("}, "invalid since"),
        ({"constraint": "(("}, "invalid constraint"),
        ({"transfer_types": "I"}, "only to source='transfer'"),
        ({"subsystem": "SCHEDD"}, "only to source='daemon'"),
    ],
)
def test_requests_the_daemon_would_drop_are_refused_here(
    kwargs: dict[str, object], words: str
) -> None:
    with pytest.raises(InvalidArgument, match=words):
        history_request(**kwargs)  # type: ignore[arg-type]


def test_since_forms() -> None:
    assert since_expression(4) == "ClusterId == 4"
    assert since_expression(" 4.2 ") == "ClusterId == 4 && ProcId == 2"
    assert since_expression("QDate > 5") == "QDate > 5"
    with pytest.raises(InvalidArgument):
        since_expression(True)


def test_history_error_carries_the_code() -> None:
    exc = HistoryError("x", code=5, reason="why")
    assert exc.code == 5 and exc.reason == "why"


HISTORY_FILE = """\
ClusterId = 1
ProcId = 0
Owner = "u"
*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = "u" CompletionDate = 10 CurrentTime = 10
ClusterId = 2
ProcId = 0
EpochAdType = "SPAWN"
*** SPAWN ClusterId=2 ProcId=0 RunInstanceId=0 Owner="u" CurrentTime=11
ClusterId = 2
ProcId = 0
Args = "a b"
*** EPOCH ClusterId=2 ProcId=0 RunInstanceId=0 Owner="u" CurrentTime=12
"""


def test_history_file_records_and_types() -> None:
    records = list(read_history_file(io.StringIO(HISTORY_FILE)))
    assert [(r.type, r.ad["ClusterId"]) for r in records] == [
        ("EPOCH", 2),
        ("SPAWN", 2),
        ("JOB", 1),
    ]
    assert records[0].ad["Args"] == "a b"
    forwards = list(read_history_file(io.StringIO(HISTORY_FILE), forwards=True))
    assert [r.type for r in forwards] == ["JOB", "SPAWN", "EPOCH"]
    with pytest.raises(InvalidArgument, match="ends inside a record"):
        list(read_history_file(io.StringIO("A = 1\n")))
    with pytest.raises(InvalidArgument, match="not a history file line"):
        list(read_history_file(io.StringIO("garbage\n*** x\n")))
