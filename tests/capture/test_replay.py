"""Replaying the clear-text captures against our client coroutines (tools/pcap_replay.py)."""

from __future__ import annotations

import pytest

from cedar.capture import dissect, load_conversations
from cedar.capture.replay import KINDS, ReplayContext, kind_of, replay_capture, replay_client
from cedar.classad_wire import ClassAd

from .conftest import CAPTURES, capture_index

RAW = [row["name"] for row in capture_index() if row["security"] == "raw"]


@pytest.mark.parametrize("name", RAW)
def test_client_replay_of_raw_conversations(name: str) -> None:
    reports = [r for r in replay_capture(str(CAPTURES / f"{name}.pcap")) if r.side == "client"]
    assert reports, "every raw capture has a replayable client conversation"
    for report in reports:
        assert report.ok, report.differences
        assert report.results  # our client decoded results from the recorded reply


def test_every_indexed_kind_has_a_table_entry() -> None:
    for row in capture_index():
        for conv in dissect(CAPTURES / f"{row['name']}.pcap"):
            if conv.command is not None:
                assert kind_of(conv) is not None, (row["name"], conv.command_name)
    assert {"collector-query", "job-query", "history", "submit", "act", "ping"} <= set(KINDS)


def test_a_different_request_is_reported() -> None:
    path = CAPTURES / "status-startd-constraint-af-limit-raw.pcap"
    (dissected,) = dissect(path)
    (conv,) = load_conversations(path)

    class Changed(ReplayContext):
        def request_ad(self) -> ClassAd:
            ad = ClassAd(super().request_ad())
            ad["LimitResults"] = 3  # our client now sends something else than the tool did
            return ad

    report = replay_client(Changed(str(path), conv, dissected), KINDS["collector-query"])
    assert not report.ok
    assert any("limitresults: 2 -> 3" in d.lower() for d in report.differences)


def test_unreplayable_sides_say_why() -> None:
    reports = replay_capture(str(CAPTURES / "hold-cluster-plain.pcap"))
    assert {r.side for r in reports} == {"client", "server"}
    assert all(r.skipped for r in reports)
