"""Mock daemons fed malformed requests: a bad client loses only its own connection.

Valid client conversations are recorded against the daemons in memory, one client message is
mutated, and the daemon's whole connection protocol is replayed over it.  Nothing but a
CedarError may come out, the daemon must then still answer a good request, and a qmgmt
transaction that did not commit must leave the queue as it was.
"""

from __future__ import annotations

import functools
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd
from cedar.commands import collector as cc
from cedar.commands import qmgmt
from cedar.commands import schedd as cs
from cedar.daemons.collector import AdStore, MockCollector
from cedar.daemons.pool import MockPool
from cedar.daemons.schedd import MAX_JOBS, JobQueue, MockSchedd, Transaction
from cedar.numbers import Command, QmgmtCall
from cedar.stream.framing import frame_plain
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol

from .helpers import (
    FIXED_NOW,
    client_protocol,
    converse,
    frozen,
    fuzz,
    mutated_conversation,
    plain_policy,
    replay_server,
    retyped_conversation,
)

Client = Callable[..., Protocol[Any]]


def _submit(conn: Any) -> Protocol[Any]:
    return qmgmt.submit_transaction(
        conn, lambda c: ({"Cmd": '"/bin/true"'}, [{"Args": '"1"'}, {"Args": '"2"'}])
    )


def _collector() -> MockCollector:
    daemon = MockCollector("c", policy=plain_policy(), store=AdStore(clock=lambda: FIXED_NOW))
    daemon.store.add(
        {"MyType": "Machine", "Name": "slot1@x", "Cpus": 1, "MyAddress": "<1.2.3.4:5>"}
    )
    return daemon


def _schedd() -> MockSchedd:
    queue = JobQueue(name="s", clock=lambda: FIXED_NOW)
    return MockSchedd("s", policy=plain_policy(), queue=queue)


QUERY = cc.build_query_ad(cc.AdType.STARTD, constraint="Cpus >= 0", projection=["Name"])
UPDATE = ClassAd({"MyType": "Machine", "Name": "slot9@y", "MyAddress": "<1.2.3.4:6>"})


def _update(session: Any) -> Protocol[None]:
    yield from cc.advertise_protocol(session, [UPDATE], Command.UPDATE_STARTD_AD)


COLLECTOR_CLIENTS: dict[str, Client] = {
    "query": client_protocol(int(Command.QUERY_STARTD_ADS), lambda s: cc.query_protocol(s, QUERY)),
    "query-raw": client_protocol(
        int(Command.QUERY_STARTD_ADS), lambda s: cc.query_protocol(s, QUERY), raw=True
    ),
    "update": client_protocol(int(Command.UPDATE_STARTD_AD), _update),
}
SCHEDD_CLIENTS: dict[str, Client] = {
    "submit": client_protocol(Command.QMGMT_WRITE_CMD, cs.qmgmt_body(_submit)),
    "query": client_protocol(
        Command.QUERY_JOB_ADS, lambda s: cs.query_protocol(s, cs.query_request("true", (), -1))
    ),
    "edit": client_protocol(
        Command.QMGMT_WRITE_CMD, cs.qmgmt_body(lambda c: cs.edit_protocol(c, "1", "Foo", "42"))
    ),
    "hold": client_protocol(
        Command.ACT_ON_JOBS,
        lambda s: cs.act_protocol(s, cs.act_request(cs.JobAction.Hold, "1", "why")),
    ),
    "history": client_protocol(
        Command.QUERY_SCHEDD_HISTORY,
        lambda s: cs.history_protocol(s, cs.history_request("true", (), -1, None)),
    ),
}


@functools.cache
def recorded() -> dict[str, list[bytes]]:
    """Client payloads of each valid conversation (schedd ones run in order: submit first)."""
    out: dict[str, list[bytes]] = {}
    with frozen():
        collector = _collector()
        for name, client in COLLECTOR_CLIENTS.items():
            out[f"collector-{name}"] = converse(collector, client).client_payloads
        schedd = _schedd()
        for name, client in SCHEDD_CLIENTS.items():
            out[f"schedd-{name}"] = converse(schedd, client).client_payloads
    return out


@pytest.fixture(scope="module")
def collector() -> MockCollector:
    return _collector()


@pytest.fixture(scope="module")
def schedd() -> MockSchedd:
    daemon = _schedd()
    with frozen():
        converse(daemon, SCHEDD_CLIENTS["submit"])
    return daemon


@pytest.fixture(autouse=True)
def _no_handler_crash(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A handler bug is logged by the daemon as 'unexpected error': that fails the test."""
    with caplog.at_level(logging.ERROR):
        yield
    assert not [r for r in caplog.records if "unexpected error" in r.getMessage()]


def _still_serves_collector(daemon: MockCollector) -> None:
    rec = converse(daemon, COLLECTOR_CLIENTS["query"])
    assert rec.result >= 1


def _snapshot(queue: JobQueue) -> tuple[Any, ...]:
    with queue.lock:
        jobs = {k: j.ad.print_old() for k, j in queue.jobs.items()}
        clusters = {k: a.print_old() for k, a in queue.clusters.items()}
        return jobs, clusters, len(queue.history)


def _still_serves_schedd(daemon: MockSchedd) -> None:
    rec = converse(daemon, SCHEDD_CLIENTS["query"])
    assert rec.result["Owner"] == 0


def _restore(daemon: MockSchedd, snapshot_queue: JobQueue) -> None:
    """Undo what a (still valid) mutated transaction committed, to keep examples independent."""
    daemon.queue = snapshot_queue


COLLECTOR_NAMES = ["collector-query", "collector-query-raw", "collector-update"]
SCHEDD_NAMES = ["schedd-submit", "schedd-query", "schedd-edit", "schedd-hold", "schedd-history"]


@pytest.mark.parametrize("name", COLLECTOR_NAMES)
@fuzz(120)
@given(data=st.data())
def test_collector_mutated_requests(collector: MockCollector, name: str, data: Any) -> None:
    """After any mutated recorded request, the collector still answers an honest query."""
    strategy = data.draw(st.sampled_from([mutated_conversation, retyped_conversation]))
    bad = data.draw(strategy(recorded()[name]), label="client payloads")
    replay_server(collector, bad)
    _still_serves_collector(collector)


def _fresh_schedd(daemon: MockSchedd) -> JobQueue:
    """A copy of the fixture's queue (one submitted cluster) for one example."""
    queue = JobQueue(name="s", clock=lambda: FIXED_NOW)
    with daemon.queue.lock:
        queue.jobs = {
            k: type(j)(j.cluster, j.proc, j.ad.copy()) for k, j in daemon.queue.jobs.items()
        }
        queue.clusters = {k: a.copy() for k, a in daemon.queue.clusters.items()}
        queue.next_cluster = daemon.queue.next_cluster
    return queue


@pytest.mark.parametrize("name", SCHEDD_NAMES)
@fuzz(100)
@given(data=st.data())
def test_schedd_mutated_requests(schedd: MockSchedd, name: str, data: Any) -> None:
    """After any mutated recorded request, the schedd still answers an honest job query."""
    original = schedd.queue
    schedd.queue = _fresh_schedd(schedd)
    try:
        strategy = data.draw(st.sampled_from([mutated_conversation, retyped_conversation]))
        bad = data.draw(strategy(recorded()[name]), label="client payloads")
        with frozen():
            replay_server(schedd, bad)
            _still_serves_schedd(schedd)
    finally:
        schedd.queue = original


def _calls(payloads: list[bytes]) -> list[int]:
    return [int.from_bytes(p[:8], "big", signed=True) for p in payloads]


@pytest.mark.parametrize("name", ["schedd-submit", "schedd-edit"])
@fuzz(120)
@given(data=st.data())
def test_uncommitted_transaction_leaves_queue_unchanged(
    schedd: MockSchedd, name: str, data: Any
) -> None:
    """A mutated transaction that never commits leaves the queue exactly as it was, and the
    schedd still serves."""
    original = schedd.queue
    schedd.queue = _fresh_schedd(schedd)
    try:
        payloads = recorded()[name]
        commits = {QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags}
        cut = next(i for i, call in enumerate(_calls(payloads)) if call in commits)
        strategy = data.draw(st.sampled_from([mutated_conversation, retyped_conversation]))
        bad = data.draw(strategy(payloads[:cut]), label="client payloads")
        # Drop anything that became a commit: this transaction must never apply.
        bad = [p for p in bad if int.from_bytes(p[:8], "big", signed=True) not in commits]
        before = _snapshot(schedd.queue)
        with frozen():
            replay_server(schedd, bad)
        assert _snapshot(schedd.queue) == before
        with frozen():
            _still_serves_schedd(schedd)
    finally:
        schedd.queue = original


@fuzz(60)
@given(data=st.data())
def test_failed_commit_is_all_or_nothing(schedd: MockSchedd, data: Any) -> None:
    """Mutations anywhere in a submit: the queue either stays or gains whole clusters only
    (procs 0..TotalSubmitProcs-1)."""
    original = schedd.queue
    schedd.queue = _fresh_schedd(schedd)
    try:
        bad = data.draw(mutated_conversation(recorded()["schedd-submit"]))
        before = set(schedd.queue.jobs)
        with frozen():
            replay_server(schedd, bad)
        added = set(schedd.queue.jobs) - before
        for cluster in {c for c, _ in added}:
            procs = sorted(p for c, p in schedd.queue.jobs if c == cluster)
            total = schedd.queue.clusters[cluster]["TotalSubmitProcs"]
            assert procs == list(range(total))
    finally:
        schedd.queue = original


@fuzz(150)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_to_both_daemons(collector: MockCollector, data: bytes) -> None:
    """Arbitrary bytes, raw or framed, end the connection with at most a CedarError, and both
    daemons then still answer an honest query."""
    schedd = _schedd()
    for daemon in (collector, schedd):
        replay_server(daemon, [], data or b"\0")
        replay_server(daemon, [], frame_plain(data) if data else b"\0")
    _still_serves_collector(collector)
    with frozen():
        _still_serves_schedd(schedd)


# --------------------------------------------------------------------------- memory limits


def _qmgmt_wire(*calls: MessageWriter) -> list[bytes]:
    """Recorded handshake of a qmgmt connection followed by our own calls."""
    payloads = recorded()["schedd-submit"]
    first = _calls(payloads).index(QmgmtCall.GetCapabilities)
    return [*payloads[:first], *(c.getvalue() for c in calls)]


def test_new_cluster_flood_is_bounded(schedd: MockSchedd) -> None:
    # Regression: every NewCluster in one transaction kept an (empty) cluster ad in memory.
    txn = Transaction(schedd.queue, "alice@example.net")
    for _ in range(200):
        txn.new_cluster()
    assert len(txn.new_clusters) == 1


def test_edits_of_one_transaction_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: SetAttribute on an existing job grew txn.edits without limit.
    from cedar.daemons import job_queue as server

    monkeypatch.setattr(server, "MAX_TXN_EDITS", 50)
    queue = JobQueue(name="s", clock=lambda: FIXED_NOW)
    txn = Transaction(queue, "alice@example.net")
    txn.new_cluster()
    txn.new_proc(1)
    txn.set_attribute(1, 0, "Owner", '"alice"')
    txn.commit()
    txn = Transaction(queue, "alice@example.net")
    for i in range(50):
        txn.set_attribute(1, 0, f"A{i}", "1")
    txn.set_attribute(1, 0, "A0", "2")  # an edit of the same attribute is not a new one
    with pytest.raises(server.QueueError, match="too many"):
        txn.set_attribute(1, 0, "A50", "1")
    txn.clear()
    txn.set_attribute(1, 0, "A50", "1")
    assert server.MAX_TXN_EDITS * 10 <= MAX_JOBS * 20


def test_qmgmt_rpc_flood_closes_quietly(schedd: MockSchedd) -> None:
    calls = [MessageWriter().put_int(QmgmtCall.GetCapabilities).put_int(0)]
    calls += [MessageWriter().put_int(QmgmtCall.NewCluster) for _ in range(50)]
    calls += [MessageWriter().put_int(QmgmtCall.NewProc).put_int(-(1 << 63)) for _ in range(5)]
    calls += [MessageWriter().put_int(QmgmtCall.GetJobAd).put_int(1 << 62).put_int(-1)]
    with frozen():
        sent = replay_server(schedd, _qmgmt_wire(*calls))
    assert sent
    with frozen():
        _still_serves_schedd(schedd)


# --------------------------------------------------------------------------- over loopback


def _send_garbage(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.settimeout(5)
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:
            pass


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\xff" * 64,
        frame_plain(b"\x00" * 7),
        b"\x00\x7f\xff\xff\xff" + b"x" * 100,  # announces a 2 GiB packet
        frame_plain(MessageWriter().put_int(75).put_int(1 << 62).getvalue()),  # shared port
        frame_plain(MessageWriter().put_int(60010).put_int(1 << 40).getvalue()),  # huge ad count
        frame_plain(MessageWriter().put_int(5).put_int(3).put_string("A = ((").getvalue()),
        frame_plain(MessageWriter().put_int(1112).put_int(0).getvalue()),  # qmgmt, raw
        frame_plain(b"\x00" * 8) * 200,
    ],
)
def test_pool_over_loopback_survives_garbage(pool: MockPool, data: bytes) -> None:
    port = int(pool.host_port.rsplit(":", 1)[1])
    _send_garbage(port, data)
    from cedar.commands import Collector

    ads = Collector(pool.address).query(cc.AdType.SCHEDD)
    assert [ad["Name"] for ad in ads] == ["mock-schedd"]


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool(policy=plain_policy()).run_in_thread() as running:
        yield running
