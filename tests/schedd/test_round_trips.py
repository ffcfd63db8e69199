"""Round trips of the daemon-bound benchmark cases, counted on the mock pool (structure only).

``bench/wire_count.py`` counts them against the real pool (docs/performance.md, "Daemon-bound
cases"); these tests keep the counts from creeping back: a submission waits for the schedd
once per pipeline window, not once per proc (B4), and a query on a resumed session is one
round trip (B2).  A round trip is data arriving on a connection after the client wrote to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cedar.commands import Schedd, qmgmt
from cedar.daemons.pool import MockPool
from cedar.stream.drivers import SyncChannel
from cedar.submit_language import Submit


@dataclass
class _Talk:
    round_trips: int = 0
    waiting: bool = False


@pytest.fixture
def talks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[_Talk]]:
    """Every blocking connection's round trips, in the order the connections were used."""
    seen: dict[int, _Talk] = {}
    order: list[_Talk] = []
    write, receive = SyncChannel._write, SyncChannel._receive

    def talk(channel: SyncChannel) -> _Talk:
        if id(channel) not in seen:
            seen[id(channel)] = _Talk()
            order.append(seen[id(channel)])
        return seen[id(channel)]

    def counted_write(self: SyncChannel, data: bytes, limit: float) -> None:
        talk(self).waiting = True
        write(self, data, limit)

    def counted_receive(self: SyncChannel, limit: float) -> bytes:
        data = receive(self, limit)
        state = talk(self)
        if data and state.waiting:
            state.round_trips += 1
            state.waiting = False
        return data

    monkeypatch.setattr(SyncChannel, "_write", counted_write)
    monkeypatch.setattr(SyncChannel, "_receive", counted_receive)
    yield order


PROCS = 1000
DESCRIPTION = "executable = /bin/sleep\narguments = 600\nhold = true\nrequest_memory = 64\n"
#: The new session's handshake (M1/M2, the method, K1 and P1) takes at most this many.
HANDSHAKE = 4


def test_a_submission_waits_once_per_pipeline_window(pool: MockPool, talks: list[_Talk]) -> None:
    """B4: GetCapabilities, NewCluster, NewProc 0, one wait per window of NewProc answers, the
    commit: about 20 round trips for 1 000 procs where answering every call takes 1 000+."""
    result = Schedd(pool.schedd_address).submit(Submit(DESCRIPTION), count=PROCS)
    assert result.num_procs == PROCS
    qmgmt_talk = max(talks, key=lambda t: t.round_trips)  # the other one is RESCHEDULE
    windows = math.ceil(PROCS / qmgmt.PIPELINE_WINDOW)
    assert 3 + windows <= qmgmt_talk.round_trips <= HANDSHAKE + 3 + windows + 1


def test_waiting_for_every_answer_costs_a_round_trip_a_proc(
    pool: MockPool, talks: list[_Talk]
) -> None:
    """The counter's own check: without NO_ACK every SetAttribute is answered and waited for."""
    ads = Submit(DESCRIPTION).build(1, count=50)

    def build(cluster: int) -> qmgmt.ProcAds:
        return ads.cluster_ad, ads.proc_ads

    outcome = Schedd(pool.schedd_address).transaction(
        lambda conn: qmgmt.submit_transaction(conn, build, flags=0)
    )
    assert outcome.num_procs == 50
    per_proc = 1 + 2  # NewProc, ProcId, JobStatus (the procs differ in nothing else)
    assert talks[0].round_trips >= 50 * per_proc


def test_a_query_on_a_resumed_session_is_one_round_trip(pool: MockPool, talks: list[_Talk]) -> None:
    """B2: the resume message and the query leave in one write; the answer is the only wait."""
    schedd = Schedd(pool.schedd_address)
    schedd.query(limit=1)  # makes the session
    for _ in range(3):
        schedd.query(projection=["ClusterId", "ProcId"])
    assert len(talks) == 4
    assert talks[0].round_trips > 1  # the new session's handshake
    assert [t.round_trips for t in talks[1:]] == [1, 1, 1]
