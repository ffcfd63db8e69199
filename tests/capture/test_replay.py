"""Replaying the clear-text captures against our client and mock servers (tools/pcap_replay.py)."""

from __future__ import annotations

import dataclasses
import functools
import os

import pytest

from cedar.capture import dissect, load_conversations
from cedar.capture.replay import (
    KINDS,
    ReplayContext,
    ReplayReport,
    constraint_pins,
    kind_of,
    replay_capture,
    replay_client,
    replay_server,
)
from cedar.classad_wire import ClassAd
from cedar.daemons.daemon import Daemon
from cedar.daemons.schedd import MockSchedd

from .conftest import CAPTURES, capture_index

CLEAR = [row["name"] for row in capture_index() if row["security"] in ("raw", "plain")]
ENCRYPTED = [row["name"] for row in capture_index() if row["security"] not in ("raw", "plain")]
#: Server sides that cannot be replayed, and why (the report must say exactly this).
UNRECONSTRUCTIBLE = {
    ("status-startd-constraint-af-limit-raw", 1, "server"): "the recorded results lack slotid",
    ("spool-bindings-heldother-plain", 4, "server"): "refusal depends on queue state",
    ("spool-bindings-twice-plain", 4, "server"): "refusal depends on queue state",
    ("spool-transfer-data-raw", 1, "client"): "does not authenticate in-band after a raw start",
    ("history-startd-raw", 1, "server"): "cedar has no mock startd",
}
#: Sides whose failure is the recorded behaviour (a words of the report's difference).
EXPECTED_FAILURES = {
    # The real history helper cannot write on a BLOWFISH session and closes (spec 08 §3.4):
    # our client must say so; our server deliberately answers (it has no such defect).
    ("history-epochs-blowfish-plain", 1, "client"): "cannot write on a BLOWFISH session",
    (
        "history-epochs-blowfish-plain",
        1,
        "server",
    ): "our server sent 2 more message(s)",  # header, final,
}
if os.geteuid() == 0:
    UNRECONSTRUCTIBLE[("spool-bindings-unreadable-plain", 3, "client")] = "root can read"


@functools.cache
def reports(name: str) -> tuple[ReplayReport, ...]:
    return tuple(replay_capture(str(CAPTURES / f"{name}.pcap")))


@pytest.mark.parametrize("name", CLEAR)
def test_clear_text_conversations_replay_on_both_sides(name: str) -> None:
    done = reports(name)
    assert {r.side for r in done} == {"client", "server"}
    for report in done:
        key = (name, report.conversation, report.side)
        if key in UNRECONSTRUCTIBLE:
            assert report.skipped and UNRECONSTRUCTIBLE[key] in report.skipped
            continue
        if key in EXPECTED_FAILURES:
            assert any(EXPECTED_FAILURES[key] in d for d in report.differences), report
            continue
        assert report.ok, (report.conversation, report.side, report.skipped, report.differences)


@pytest.mark.parametrize("name", ENCRYPTED)
def test_encrypted_conversations_are_skipped_with_a_reason(name: str) -> None:
    done = reports(name)
    assert done and all(r.skipped for r in done)
    assert all("encrypted" in (r.skipped or "") for r in done)


def test_every_clear_text_kind_of_the_index_is_replayed() -> None:
    kinds = {r.kind for name in CLEAR for r in reports(name) if r.ok}
    assert {
        "collector-query", "job-query", "history", "submit", "act", "edit", "ping", "reschedule",
        "spool", "transfer-data",
    } <= kinds  # fmt: skip
    resumed = [r for r in reports("bindings-query-twice-submit-plain") if r.conversation in (2, 4)]
    assert len(resumed) == 4 and all(r.ok for r in resumed)  # session resumption, both sides


def test_our_client_decodes_what_the_real_tool_printed() -> None:
    (client, _) = reports("q-constraint-af-raw")
    printed = (CAPTURES / "q-constraint-af-raw.out").read_text().splitlines()[:-1]
    ours = [f"{ad['ClusterId']} {ad['ProcId']} {ad['HoldReason']}" for ad in client.results]
    assert ours == printed


def test_every_indexed_kind_has_a_table_entry() -> None:
    for row in capture_index():
        for conv in dissect(CAPTURES / f"{row['name']}.pcap"):
            if conv.command is not None:
                assert kind_of(conv) is not None, (row["name"], conv.command_name)


def _context(name: str, number: int = 1) -> ReplayContext:
    path = CAPTURES / f"{name}.pcap"
    dissected = [c for c in dissect(path) if c.number == number][0]
    conv = [c for c in load_conversations(path) if c.number == number][0]
    return ReplayContext(str(path), conv, dissected)


def test_a_different_request_is_reported() -> None:
    ctx = _context("status-startd-constraint-af-limit-raw")

    class Changed(ReplayContext):
        def request_ad(self) -> ClassAd:
            ad = ClassAd(super().request_ad())
            ad["LimitResults"] = 3  # our client now sends something else than the tool did
            return ad

    changed = Changed(ctx.capture, ctx.conversation, ctx.dissected)
    report = replay_client(changed, KINDS["collector-query"])
    assert not report.ok
    assert any("limitresults: 2 -> 3" in d.lower() for d in report.differences)


def test_a_different_server_state_is_reported() -> None:
    ctx = _context("hold-cluster-plain")
    kind = KINDS["act"]
    assert kind.server is not None and replay_server(ctx, kind).ok
    build = kind.server

    def one_job_less(ctx: ReplayContext) -> Daemon:
        daemon = build(ctx)
        assert isinstance(daemon, MockSchedd)
        daemon.queue.jobs.pop(min(daemon.queue.jobs))
        return daemon

    report = replay_server(ctx, dataclasses.replace(kind, server=one_job_less))
    assert any("result_total_1: 2 -> 1" in d for d in report.differences), report.differences


def test_qmgmt_conversations_are_told_apart() -> None:
    for name, expected in (("qedit-plain", "edit"), ("submit-2procs-plain", "submit")):
        ctx = _context(name)
        kind = kind_of(ctx.dissected, ctx)
        assert kind is not None and kind.name == expected


def test_constraint_pins() -> None:
    assert constraint_pins("((JobStatus == 5))") == {"JobStatus": "5"}
    assert constraint_pins('( (ClusterId == 15 ) ) && Owner == "bob"') == {
        "ClusterId": "15",
        "Owner": '"bob"',
    }
    assert constraint_pins("JobStatus == 5 || JobStatus == 1") == {}
    assert constraint_pins("SlotID >= 2") == {}
    assert constraint_pins('regexp("x", Name) && A == 1') == {}
