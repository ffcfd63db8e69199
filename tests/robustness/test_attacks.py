"""Issue 13's attacks, each against the fixed code (hostile client and daemon in one process).

Every test is bounded in time by its own timeouts, and no clock decides a pass: the issue's
"Done when" (while a hostile request is being served, an honest ping answers) is shown by
parking the hostile request in the middle of its evaluation and pinging meanwhile (a 1 s bound
on the ping failed on loaded machines; a stalled daemon answers no ping at all).
Memory bounds are measured with ``tracemalloc`` (docs/security-findings.md lists them).
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from functools import partial
from typing import Any
from unittest import mock

import pytest

from cedar.auth import ClientSecurity, LevelPolicy, SecurityConfig, ServerPolicy
from cedar.auth.server_policy import open_policy, real_pool_policy
from cedar.auth.session import new_session_id
from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.token import FoundToken, IdToken, b64url_encode, sign
from cedar.classad_wire import ClassAd, put_classad
from cedar.classad_wire.evaluate import Budget
from cedar.commands import Collector, Schedd, ping
from cedar.config import Config
from cedar.daemons.collector import AdStore, MockCollector
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.daemons.job_queue import (
    MAX_ATTRIBUTE_SIZE,
    MAX_JOB_AD_SIZE,
    JobQueue,
    QueueError,
    Transaction,
)
from cedar.daemons.pool import MockPool
from cedar.errors import CedarError
from cedar.numbers import AdType, Command
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol

MiB = 1 << 20

#: Peak traced Python memory of an attack made of request-sized messages (a query, an update,
#: a handshake, a token) against a daemon: what a few requests may cost it, hostile or not.
REQUEST_MEMORY = 64 * MiB

#: ``max_buffered_bytes`` of the buffered-bytes attack, and its memory bound: the cap held in
#: unfinished messages, copies made while reassembling them, and the hostile sends (traced too).
BUFFERED_CAP = 1 * MiB
BUFFERED_MEMORY = 16 * BUFFERED_CAP

#: Peak traced memory of an oversized value or edit: the refused value and the job ad it would
#: join (``MAX_JOB_AD_SIZE``), each held a few times over while decoded, parsed and checked.
VALUE_MEMORY = 8 * MAX_JOB_AD_SIZE

#: Peak traced memory of a pure-model attack (an evaluator, a store, a queue: no daemon).
MODEL_MEMORY = 16 * MiB


@contextmanager
def bounded_memory(bound: int) -> Iterator[None]:
    """Fail if the peak of Python allocations during the block exceeds ``bound`` bytes.

    ``tracemalloc`` traces every thread, so a daemon run in a thread of this process counts.
    """
    tracemalloc.start()
    try:
        yield
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < bound, f"peak traced memory {peak / MiB:.1f} MiB over {bound / MiB:.0f} MiB"


def doubling(depth: int) -> str:
    """``[a0 = 1; a1 = a0 + a0; ...].aN > 0``: 2^depth steps from a few hundred bytes."""
    chain = "; ".join(["a0 = 1"] + [f"a{i} = a{i - 1} + a{i - 1}" for i in range(1, depth + 1)])
    return f"[{chain}].a{depth} > 0"


def raw_message(command: int | None, ad: dict[str, object]) -> bytes:
    writer = MessageWriter()
    if command is not None:
        writer.put_int(command)
    put_classad(writer, ClassAd(ad))
    return writer.getvalue()


def raw_exchange(
    port: int, *payloads: bytes, source: str = "127.0.0.1", timeout: float = 10
) -> bytes:
    """Send clear-text messages on one connection, then read until the server closes."""
    conn = CedarConnection()
    data = b""
    with socket.create_connection(
        ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
    ) as s:
        try:
            for payload in payloads:
                s.sendall(conn.send_message(payload))
            s.shutdown(socket.SHUT_WR)
            while chunk := s.recv(65536):
                data += chunk
        except OSError:
            pass
    return data


def answers(address: str) -> bool:
    """Whether an honest READ ping is answered (within its generous deadline) and authorized."""
    return ping(address, "READ", timeout=30).authorized


@contextmanager
def in_background(work: Callable[[], Any]) -> Iterator[dict[str, Any]]:
    """Run ``work`` in a thread; the dict gets its ``result`` or ``error`` when it ends."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # reported to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        yield outcome
    finally:
        thread.join(timeout=60)
        assert not thread.is_alive(), "the hostile request never ended"


def _fill_queue(queue: JobQueue, jobs: int) -> None:
    txn = Transaction(queue, "alice@example.net")
    cluster = txn.new_cluster()
    for _ in range(jobs):
        txn.new_proc(cluster)
    txn.set_attribute(cluster, -1, "Cmd", '"/bin/true"')
    txn.commit()


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        _fill_queue(running.schedd.queue, 200)
        for i in range(200):
            running.collector.store.add({"MyType": "Probe", "Name": f"p{i}"})
        yield running


# --------------------------------------------------------------------------- 1. request cost


def query_work(pool: MockPool, target: str, constraint: str) -> Callable[[], Any]:
    """A job query (schedd) or a generic-ads query (collector) with ``constraint``."""
    if target == "schedd":
        return lambda: Schedd(pool.schedd_address, timeout=60).query(constraint)
    return lambda: Collector(pool.address, timeout=60).query(
        AdType.GENERIC, constraint, target_type="Probe"
    )


class ParkingClock:
    """A request budget's clock that parks the evaluation calling it the ``park_at``-th time
    until :meth:`release`; the parked time never counts against the budget.

    The daemon gives each request a :class:`Budget`; every evaluation made for the request reads
    its clock when it starts, every 1024 steps and when it ends.  Parking there holds the hostile
    request in the middle of its work, wherever the daemon runs that work, for as long as the
    test needs: if the work ran on the event loop, nothing else would be served meanwhile.
    ``frozen``: the clock also stands still otherwise, so that the budget's time limits (0.25 s
    per ad, 10 s per request, tested on their own) cannot cut a query short on a loaded machine;
    the step budget still bounds it.
    """

    def __init__(self, park_at: int, *, frozen: bool) -> None:
        self.park_at = park_at
        self.frozen = frozen
        self.calls = 0
        self.parked = threading.Event()
        self._release = threading.Event()
        self._hidden = 0.0

    def __call__(self) -> float:
        self.calls += 1
        if self.calls == self.park_at:
            started = time.monotonic()
            self.parked.set()
            self._release.wait(60)
            self._hidden += time.monotonic() - started
        return 0.0 if self.frozen else time.monotonic() - self._hidden

    def release(self) -> None:
        self._release.set()


@contextmanager
def parked_requests(park_at: int, *, frozen: bool) -> Iterator[ParkingClock]:
    """Every request budget made in the block uses one :class:`ParkingClock`."""
    clock = ParkingClock(park_at, frozen=frozen)
    with mock.patch("cedar.daemons.daemon.Budget", partial(Budget, clock=clock)):
        try:
            yield clock
        finally:
            clock.release()


def pings_during(
    pool: MockPool, work: Callable[[], Any], park_at: int, *, frozen: bool
) -> dict[str, Any]:
    """Start the hostile ``work``, wait until its evaluation is parked mid-way, ping the pool
    three times, then let the work finish.  Returns the work's outcome (``result``/``error``)
    and ``pings``, the ping results, all taken while the work was provably unfinished."""
    with parked_requests(park_at, frozen=frozen) as clock, in_background(work) as outcome:
        assert clock.parked.wait(60), f"the hostile request never got to evaluating: {outcome!r}"
        pings = [ping(pool.address, "READ", timeout=30) for _ in range(3)]
        unfinished = not outcome
        clock.release()
    assert unfinished, f"the hostile request ended while parked: {outcome!r}"
    return {**outcome, "pings": pings}


@pytest.mark.parametrize("target", ["schedd", "collector"])
def test_costly_query_does_not_stall_the_pool(pool: MockPool, target: str) -> None:
    """While a costly query is in the middle of its evaluation, the pool answers pings; then the
    query completes with every ad.

    No clock decides the outcome (a loaded machine once failed a 1 s ping bound here): the
    query is parked inside its own evaluation, in whatever thread the daemon runs it, after
    100 clock reads (about 33 of the 200 ads, 128 steps each), and the pings must be answered
    before it is let go.  A daemon that evaluated on its event loop would answer no ping (they
    time out), and the budget's clock stands still so that load cannot make it refuse the query.
    """
    with bounded_memory(REQUEST_MEMORY):
        outcome = pings_during(
            pool, query_work(pool, target, doubling(7)), park_at=100, frozen=True
        )
    assert [answer.authorized for answer in outcome["pings"]] == [True] * 3
    assert "error" not in outcome, outcome
    assert len(outcome["result"]) == 200  # the whole query was answered after the pings


@pytest.mark.parametrize("target", ["schedd", "collector"])
def test_catastrophic_regexp_neither_stalls_nor_hangs(pool: MockPool, target: str) -> None:
    """The issue's ``regexp("(a+)+$", "aaa…a!")``: 30 ``a``s froze the pool for 120 s; each
    match is now bounded (classad_wire/regex.py), so pings answer while the query is in its
    regexp (parked there, as in the test above) and the query then ends."""
    constraint = 'regexp("(a+)+$", "' + "a" * 30 + '!") || true'
    with bounded_memory(REQUEST_MEMORY):
        outcome = pings_during(pool, query_work(pool, target, constraint), park_at=3, frozen=False)
    assert [answer.authorized for answer in outcome["pings"]] == [True] * 3
    # regexp() over budget is error, and `error || true` is error: the query matches nothing,
    # and ends (in_background fails the test if it never does).
    assert outcome.get("result") == [] or isinstance(outcome.get("error"), CedarError), outcome


def test_over_budget_job_query_gets_a_clear_error(pool: MockPool) -> None:
    with bounded_memory(REQUEST_MEMORY):
        with pytest.raises(CedarError, match="budget"):
            Schedd(pool.schedd_address, timeout=30).query(doubling(40))
        assert answers(pool.address)  # and the pool serves on


def test_over_budget_collector_query_is_refused(pool: MockPool) -> None:
    with bounded_memory(REQUEST_MEMORY):
        with pytest.raises(CedarError):
            Collector(pool.address, timeout=30).query(
                AdType.GENERIC, doubling(40), target_type="Probe"
            )
        assert answers(pool.address)


def test_budget_is_per_request_not_per_ad() -> None:
    from cedar.classad_wire.evaluate import Budget, EvaluationBudgetExceeded, evaluate

    with bounded_memory(MODEL_MEMORY):
        budget = Budget(steps=20_000, seconds=1e6, slice_seconds=1e6)
        ad = ClassAd({"X": 1})
        with pytest.raises(EvaluationBudgetExceeded, match="step budget"):
            for _ in range(100):  # each evaluation alone is well under the budget
                evaluate(doubling(6), ad, budget=budget)


# --------------------------------------------------------------------------- 2. sessions


def test_session_ids_are_unguessable() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000
    random_part = next(iter(ids)).rsplit(":", 1)[1]
    assert len(random_part) * 6 >= 128  # base64url: 6 bits per character


class _Recorder:
    """A WRITE command handler that records that it ran (it must not, when attacked)."""

    def __init__(self) -> None:
        self.calls: list[str | None] = []

    def __call__(self, request: CommandRequest) -> Protocol[None]:
        yield from request.read_payload()
        self.calls.append(request.user)


def _daemon(crypto: list[str]) -> tuple[Daemon, _Recorder]:
    level = LevelPolicy(methods=["CLAIMTOBE"], crypto_methods=crypto, authentication="REQUIRED")
    if not crypto:
        level.encryption = level.integrity = "OPTIONAL"  # type: ignore[assignment]
        level.__post_init__()
    daemon = Daemon("victim", "SCHEDD", policy=ServerPolicy(levels={"DEFAULT": level}))
    recorder = _Recorder()
    daemon.register(Command.QMGMT_WRITE_CMD, recorder, permission="WRITE")
    return daemon, recorder


def _send_command(address: str, security: ClientSecurity) -> None:
    """QMGMT_WRITE_CMD with one CloseSocket call, through ``security``'s session cache."""
    from cedar.auth import start_command
    from cedar.stream.drivers import SyncChannel
    from cedar.stream.protocol import Send

    def body() -> Protocol[None]:
        yield from start_command(channel.conn, Command.QMGMT_WRITE_CMD, security=security,
                                 target=address)  # fmt: skip
        yield Send(channel.conn.writer().put_int(10028))  # CloseSocket

    host, port = address.strip("<>").split("?")[0].split(":")
    with SyncChannel.connect(host, int(port), timeout=10) as channel:
        channel.run(body())
        with suppress(CedarError):  # wait for the daemon to finish with the connection
            channel.read_message()


def _security(crypto: list[str]) -> ClientSecurity:
    return ClientSecurity(
        SecurityConfig(
            methods=["CLAIMTOBE"],
            crypto_methods=crypto,
            encryption="OPTIONAL" if not crypto else "REQUIRED",
            integrity="OPTIONAL" if not crypto else "REQUIRED",
            options={"SEC_CLAIMTOBE_USER": "victim"},
        )
    )


def test_keyless_session_is_never_resumable() -> None:
    with bounded_memory(REQUEST_MEMORY):
        daemon, recorder = _daemon([])
        with daemon.run_in_thread():
            security = _security([])
            _send_command(daemon.address, security)
            assert len(recorder.calls) == 1
            assert len(daemon.sessions) == 0  # nothing to borrow
            assert len(security.sessions) == 0


def test_resuming_with_the_id_but_not_the_key_runs_nothing() -> None:
    with bounded_memory(REQUEST_MEMORY):
        daemon, recorder = _daemon(["AES"])
        with daemon.run_in_thread():
            security = _security(["AES"])
            _send_command(daemon.address, security)
            assert len(recorder.calls) == 1 and len(daemon.sessions) == 1
            # The attacker knows the session id (it travels in clear) but not the key.
            for session in security.sessions._sessions.values():
                session.key = bytes(32)
            errors, new = daemon.stats["errors"], daemon.stats["new_sessions"]
            _send_command(daemon.address, security)  # the daemon cannot decrypt it: it closes
            assert daemon.stats["new_sessions"] == new  # it was a resumption ...
            assert daemon.stats["errors"] == errors + 1  # ... whose payload failed to decrypt ...
            assert len(recorder.calls) == 1  # ... and the command never ran


# --------------------------------------------------------------------------- 3. secure defaults


def test_anonymous_updates_and_invalidations_are_refused(pool: MockPool) -> None:
    with bounded_memory(REQUEST_MEMORY):
        port = int(pool.address.strip("<>").split("?")[0].split(":")[1])
        forged = {"MyType": "Scheduler", "Name": "mock-schedd", "MyAddress": "<6.6.6.6:1>"}
        raw_exchange(port, raw_message(Command.UPDATE_SCHEDD_AD, forged))
        drop = {"MyType": "Query", "TargetType": "Scheduler", "Name": "mock-schedd"}
        raw_exchange(port, raw_message(Command.INVALIDATE_SCHEDD_ADS, drop))
        schedds = pool.collector.store.ads("Scheduler")
        assert [ad.ad["MyAddress"] for ad in schedds] == [pool.schedd.address]


def test_real_pool_policy_matches_the_real_defaults() -> None:
    policy = real_pool_policy(admins=["condor@*"])
    assert policy.resolve("READ").authentication.name == "OPTIONAL"
    for level in ("WRITE", "DAEMON", "ADVERTISE_SCHEDD", "ADMINISTRATOR"):
        assert policy.resolve(level).authentication.name == "REQUIRED"
    assert policy.is_authorized("unauthenticated@unmapped", "1.2.3.4", "READ")
    assert not policy.is_authorized("alice@x", "1.2.3.4", "ADVERTISE_SCHEDD")
    assert policy.is_authorized("condor@x", "1.2.3.4", "ADVERTISE_SCHEDD")
    assert open_policy().is_authorized("anyone@x", None, "DAEMON")


# --------------------------------------------------------------------------- 4. growth


def test_read_only_queries_create_no_tables(pool: MockPool) -> None:
    port = int(pool.address.strip("<>").split("?")[0].split(":")[1])
    store = pool.collector.store
    before = len(store._generic_names)
    with bounded_memory(REQUEST_MEMORY):
        start, _ = tracemalloc.get_traced_memory()
        for i in range(30):
            query = {"MyType": "Query", "TargetType": f"T{i}" + "x" * 100_000, "Requirements": True}
            raw_exchange(port, raw_message(Command.QUERY_GENERIC_ADS, query))
        end, _ = tracemalloc.get_traced_memory()
    assert len(store._generic_names) == before
    assert end - start < 2 << 20  # 3 MB of TargetTypes leave (almost) nothing behind


def test_ad_counts_are_bounded() -> None:
    with bounded_memory(MODEL_MEMORY):
        store = AdStore(max_ads=8, max_ads_per_advertiser=3, max_generic_types=2)
        for i in range(5):
            store.update(None, ClassAd({"MyType": "A", "Name": f"a{i}"}), advertiser="mallory")
        assert len(store.ads("A")) == 3
        assert store.update(None, ClassAd({"MyType": "B", "Name": "b"}), advertiser="bob")
        assert not store.update(None, ClassAd({"MyType": "C", "Name": "c"}), advertiser="bob")
        store.update(None, ClassAd({"MyType": "A", "Name": "a0"}), advertiser="mallory")  # replace
        assert len(store.ads("A")) == 3
        for i in range(10):
            store.update(None, ClassAd({"MyType": "B", "Name": f"b{i}"}), advertiser=f"u{i}")
        assert sum(len(store.ads(t)) for t in ("A", "B")) == 8


# --------------------------------------------------------------------------- 5. slots


def test_one_peer_cannot_take_every_slot() -> None:
    with bounded_memory(REQUEST_MEMORY):
        collector = MockCollector("c", policy=open_policy(max_connections_per_peer=3))
        with collector.run_in_thread():
            hostile = [
                socket.create_connection(
                    ("127.0.0.1", collector.port), source_address=("127.0.0.2", 0)
                )
                for _ in range(6)
            ]
            try:
                closed = 0
                for sock in hostile[3:]:
                    sock.settimeout(5)
                    closed += sock.recv(1) == b""
                assert closed == 3
                assert answers(collector.address)
            finally:
                for sock in hostile:
                    sock.close()


def test_a_busy_connection_loses_its_slot_after_its_lifetime() -> None:
    with bounded_memory(REQUEST_MEMORY):
        collector = MockCollector("c", policy=open_policy(connection_lifetime=1.0))
        update = raw_message(Command.UPDATE_AD_GENERIC, {"MyType": "Probe", "Name": "keep"})
        conn = CedarConnection()
        with collector.run_in_thread():
            with socket.create_connection(("127.0.0.1", collector.port), timeout=10) as sock:
                started = time.monotonic()
                sock.sendall(conn.send_message(update))
                try:
                    while time.monotonic() - started < 8:  # an update every 0.2 s keeps it busy
                        time.sleep(0.2)
                        sock.sendall(conn.send_message(update))
                except OSError:
                    pass
                held = time.monotonic() - started
            assert held < 8, "the connection kept its slot past connection_lifetime"


def test_buffered_bytes_are_bounded_across_connections() -> None:
    cap = BUFFERED_CAP
    with bounded_memory(BUFFERED_MEMORY):
        collector = MockCollector("c", policy=open_policy(max_buffered_bytes=cap))
        with collector.run_in_thread():
            socks = []
            chunk = b"\x00" + (cap // 2 + 1000).to_bytes(4, "big")  # a packet that never finishes
            for _ in range(3):
                sock = socket.create_connection(("127.0.0.1", collector.port), timeout=10)
                sock.sendall(chunk + b"x" * (cap // 2))
                socks.append(sock)
            try:
                time.sleep(0.5)
                assert collector.buffered_bytes <= cap
                closed = 0
                for sock in socks:
                    sock.settimeout(2)
                    with suppress(TimeoutError, OSError):
                        closed += sock.recv(1) == b""
                assert closed >= 1
            finally:
                for sock in socks:
                    sock.close()


# --------------------------------------------------------------------------- 6. identity, size


def test_submit_cannot_forge_identity() -> None:
    with bounded_memory(MODEL_MEMORY):
        queue = JobQueue(name="s")
        _fill_queue(queue, 1)
        txn = Transaction(queue, "bob@example.net")
        cluster = txn.new_cluster()
        proc = txn.new_proc(cluster)
        for name, value in (("ClusterId", "1"), ("ProcId", "7"), ("User", '"root@example.net"')):
            txn.set_attribute(cluster, proc, name, value)
            txn.set_attribute(cluster, -1, name, value)
        txn.commit()
        ad = queue.merged(cluster, proc)
        assert ad is not None
        assert (ad["ClusterId"], ad["ProcId"], ad["User"], ad["Owner"]) == (
            cluster,
            0,
            "bob@example.net",
            "bob",
        )


def test_oversized_values_are_refused_with_a_clear_error() -> None:
    with bounded_memory(VALUE_MEMORY):
        queue = JobQueue(name="s")
        txn = Transaction(queue, "bob@example.net")
        cluster = txn.new_cluster()
        txn.new_proc(cluster)
        with pytest.raises(QueueError, match="value too large") as caught:
            txn.set_attribute(cluster, 0, "Big", '"' + "x" * MAX_ATTRIBUTE_SIZE + '"')
        assert caught.value.errno == errno.E2BIG
        with pytest.raises(QueueError, match="MAX_JOB_AD_SIZE"):
            for i in range(10):
                txn.set_attribute(cluster, 0, f"A{i}", '"' + "x" * (MAX_ATTRIBUTE_SIZE - 10) + '"')


# --------------------------------------------------------------------------- 7. tokens

TRUST = "example.com"


def _forged(key: SigningKey, header: str, claims: str) -> IdToken:
    signing_input = b64url_encode(header.encode()) + "." + b64url_encode(claims.encode())
    return IdToken(
        {"alg": "HS256", "kid": key.name},
        {"iss": TRUST, "sub": "alice@example.com", "jti": "j"},
        signing_input,
        sign(key, signing_input),
    )


@pytest.mark.parametrize(
    ("header", "claims"),
    [
        ('{"alg":"HS256","kid":"POOL"}', '{"iss":"example.com","sub":"a@b","jti":"j","exp":1e400}'),
        ('{"alg":"HS256","kid":"POOL"}', '{"iss":"example.com","sub":"a@b","jti":"j","exp":NaN}'),
        (
            '{"alg":"HS256","kid":"POOL"}',
            '{"iss":"example.com","sub":"a@b","iat":' + "9" * 5000 + "}",
        ),
        ('{"n":' + "[" * 4000 + "]" * 4000 + ',"alg":"HS256","kid":"POOL"}', '{"sub":"a@b"}'),
    ],
    ids=["exp-inf", "exp-nan", "iat-5000-digits", "nested-header"],
)
def test_hostile_token_claims_are_denied_promptly_and_cleanly(
    header: str, claims: str, caplog: pytest.LogCaptureFixture
) -> None:
    with bounded_memory(REQUEST_MEMORY):
        import cedar.auth.methods.idtokens as idtokens

        key = SigningKey.generate("POOL")
        level = LevelPolicy(methods=["TOKEN"], authentication="REQUIRED")
        policy = ServerPolicy(
            levels={"DEFAULT": level},
            options={"config": Config(), "signing_keys": SigningKeyStore([key])},
            trust_domain=TRUST,
            uid_domain=TRUST,
        )
        daemon = Daemon("t", "SCHEDD", policy=policy)
        token = _forged(key, header, claims)
        security = ClientSecurity(
            SecurityConfig(
                methods=["TOKEN"],
                options={"config": Config(), "SEC_TOKEN_DIRECTORY": "/nonexistent"},
                trust_domain=TRUST,
                uid_domain=TRUST,
            )
        )
        caplog.set_level(logging.INFO)
        # the message is the denial's (a client timeout says "timed out"): no clock needed
        with (
            daemon.run_in_thread(),
            mock.patch.object(idtokens, "client_candidates", lambda ctx: [FoundToken(token, "t")]),
            pytest.raises(CedarError, match="refused the token"),
        ):
            ping(daemon.address, "WRITE", security=security, timeout=30)
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


def test_oversized_edit_over_the_wire_names_the_problem(pool: MockPool) -> None:
    with bounded_memory(VALUE_MEMORY):
        from cedar.submit_language import Submit

        schedd = Schedd(pool.schedd_address, timeout=30)
        cluster = schedd.submit(Submit("executable = /bin/echo\nqueue\n")).cluster
        with pytest.raises(CedarError, match="value too large"):
            schedd.edit(cluster, "Big", '"' + "x" * (MAX_ATTRIBUTE_SIZE + 1) + '"')


def test_costly_invalidation_is_refused() -> None:
    with bounded_memory(REQUEST_MEMORY):
        collector = MockCollector("c", policy=open_policy())
        for i in range(50):
            collector.store.add({"MyType": "Probe", "Name": f"p{i}"})
        drop = {"MyType": "Query", "TargetType": "Probe", "Requirements": doubling(40)}
        with collector.run_in_thread():
            raw_exchange(collector.port, raw_message(Command.INVALIDATE_ADS_GENERIC, drop))
            assert len(collector.store.ads("Probe")) == 50
            assert answers(collector.address)


# ------------------------------------------------------- large requests decoded off the loop


def _large_query_bytes() -> bytes:
    """A raw ``QUERY_GENERIC_ADS`` whose constraint is ~0.17 MiB of ``true || (AttrN == N || ...)``:
    inside every cap, unauthenticated, a third of a second of parsing, and cheap to
    evaluate (``true`` decides)."""
    constraint = "true || (" + " || ".join(f"Attr{i} == {i}" for i in range(8000)) + ")"
    writer = MessageWriter().put_int(Command.QUERY_GENERIC_ADS).put_int(3)
    for line in ('MyType = "Query"', 'TargetType = "Probe"', f"Requirements = {constraint}"):
        writer.put_string(line)
    return writer.put_string("").put_string("").getvalue()


def test_large_queries_are_decoded_off_the_event_loop(pool: MockPool) -> None:
    """Issue 36's attack: eight large unauthenticated queries at once from one address stalled
    the pool for ~25 s, decoded on the event loop.  Each is now decoded in a worker thread (at
    most two at a time): with every one of them parked inside its decoding, honest pings are
    answered (a decode on the loop would answer none), and then every query gets its answer.
    """
    import cedar.daemons.collector as collector_module

    real = collector_module.strict_ad
    arrived = threading.Semaphore(0)
    release = threading.Event()

    def parked(reader: Any) -> ClassAd:
        arrived.release()
        release.wait(60)
        return real(reader)

    payload = _large_query_bytes()
    assert len(payload) > 2 * 64 * 1024
    port = int(pool.address.split(":")[1].split("?")[0].rstrip(">"))
    outcomes: list[dict[str, Any]] = []
    # (the budgets' clock stands still: the time a query waits for its decoding, parked or
    # behind the limit, is not what is under test)
    frozen_budgets = parked_requests(10**9, frozen=True)
    with (
        frozen_budgets,
        mock.patch.object(collector_module, "strict_ad", parked),
        ExitStack() as stack,
    ):
        for _ in range(8):
            query = partial(raw_exchange, port, payload, timeout=120)
            outcomes.append(stack.enter_context(in_background(query)))
        for _ in range(2):  # the two decodes the limit lets run are both parked
            assert arrived.acquire(timeout=60), "a large query never got to its decoding"
        pings = [ping(pool.address, "READ", timeout=20) for _ in range(3)]
        unfinished = not any(outcomes)
        release.set()
    assert [answer.authorized for answer in pings] == [True] * 3
    assert unfinished, "a large query ended while its decoding was parked"
    # Then every query was answered with every Probe ad.
    assert [o.get("result", b"").count(b'MyType = "Probe"') for o in outcomes] == [200] * 8
