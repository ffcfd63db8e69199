"""The mock schedd writes a spooled job's own event log as the real shadow does (the web page's
job page shows it): the reference reader (the ``htcondor2`` wheel) reads it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cedar.classad_wire import ClassAd
from cedar.daemons.spool_area import TERMINATED, SpoolArea, log_event, one_line

#: A fixed moment (the 7th: a single-digit day), so no test depends on today's date.
NOW = 1796601600


def test_the_reference_reads_the_mock_event_log(tmp_path: Path) -> None:
    htcondor2 = pytest.importorskip("htcondor2")
    area = SpoolArea(tmp_path)
    area.job_dir(7, 2).mkdir(parents=True)
    ad = ClassAd()
    ad.update({"UserLog": "/somewhere/else/job.log", "QDate": NOW - 60})
    log_event(area, ad, 7, 2, 1, NOW, "\tSlotName: slot1@mock\n")
    reason = one_line("too\nbig")
    log_event(area, ad, 7, 2, 12, NOW + 1, f"\t{reason}\n\tCode 1 Subcode 3\n")
    log_event(area, ad, 7, 2, 13, NOW + 2, "\tby the test\n")
    log_event(area, ad, 7, 2, 5, NOW + 3, TERMINATED)
    path = area.job_dir(7, 2) / "job.log"  # in the spool directory, by its base name
    with htcondor2.JobEventLog(str(path)) as log:
        events = list(log.events(0))
    kinds = [htcondor2.JobEventType(e.type).name for e in events]
    assert kinds == ["SUBMIT", "EXECUTE", "JOB_HELD", "JOB_RELEASED", "JOB_TERMINATED"]
    assert {(e.cluster, e.proc) for e in events} == {(7, 2)}
    assert events[0].timestamp == NOW - 60 and events[4].timestamp == NOW + 3
    assert events[1]["SlotName"] == "slot1@mock"
    assert events[2]["HoldReason"] == "too big" and events[2]["HoldReasonSubCode"] == 3
    assert events[3]["Reason"] == "by the test"
    assert events[4]["ReturnValue"] == 0 and events[4]["TerminatedNormally"]


def test_no_log_without_a_log_or_a_spool_directory(tmp_path: Path) -> None:
    area = SpoolArea(tmp_path)
    log_event(area, ClassAd({"UserLog": "job.log"}), 1, 0, 1, NOW, "")  # no spool directory
    area.job_dir(1, 0).mkdir(parents=True)
    log_event(area, ClassAd(), 1, 0, 1, NOW, "")  # no log
    assert list(tmp_path.rglob("*.log")) == []
