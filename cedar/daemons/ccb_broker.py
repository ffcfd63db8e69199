"""CCB, the broker's side (spec 09 §6, §7), as the mock collector runs it.

A registration (``CCB_REGISTER``, 67) is answered with an id and a cookie, and its connection
is then handed (:class:`~cedar.daemons.daemon.Takeover`) to a task that holds it for as long
as the target lives: heartbeats answered, results read.  A request (``CCB_REQUEST``, 68) from
another connection is forwarded over it; the requester's connection waits, in its own task,
for the target's result (normal mode) or for the target's reverse connection to the broker
(``CCB_REVERSE_CONNECT``, 69: streaming mode, after which the broker relays the bytes).

Every wait is bounded (:class:`~cedar.daemons.ccb_model.BrokerLimits`): targets, pending
requests per target and in all, relays; a request whose target never answers is refused at
``request_timeout``; a target gone refuses its pending requests with a reason (the reference
closes them without a word; cedar's requester reports either as the broker's failure).  The
ads are :mod:`cedar.daemons.ccb_model`'s.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import trio

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands.ccb import read_ad, send_ad
from cedar.daemons.ccb_model import (
    STREAMING_DISABLED,
    UNKNOWN_ID,
    BrokerLimits,
    ReconnectTable,
    Request,
    bare_address,
    forwarded,
    hello,
    is_heartbeat,
    parse_registration,
    parse_request,
    parse_result,
    registration_reply,
    reply,
)
from cedar.daemons.daemon import CommandRequest, Daemon, Takeover, decode, strict_ad
from cedar.errors import CedarError
from cedar.numbers import Command
from cedar.stream.drivers import TrioChannel
from cedar.stream.protocol import Emit, Protocol, Receive, Send

log = logging.getLogger("cedar.daemons.ccb")

#: Seconds a write to a target or a requester may take before that peer is given up.
_WRITE_TIMEOUT = 20.0


@dataclass(eq=False)
class _Target:
    """A registered target: its held connection and the requests waiting for it."""

    ccbid: int
    name: str
    channel: TrioChannel
    peer: str
    lock: trio.Lock = field(default_factory=trio.Lock)
    pending: dict[str, _Pending] = field(default_factory=dict)
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    async def send(self, ad: ClassAd) -> None:
        """One ad on the held connection (writes from several requests take turns)."""
        async with self.lock:
            await _write(self.channel, ad)


@dataclass(eq=False)
class _Pending:
    """A request forwarded to a target, waiting for its result or reverse connection."""

    request: Request
    request_id: str
    target: _Target
    done: trio.Event = field(default_factory=trio.Event)
    answer: ClassAd | None = None
    reverse: TrioChannel | None = None
    hello: ClassAd | None = None
    relay_over: trio.Event = field(default_factory=trio.Event)

    def finish(self, answer: ClassAd) -> None:
        if not self.done.is_set():
            self.answer = answer
            self.done.set()


async def _write(channel: TrioChannel, ad: ClassAd, command: int | None = None) -> None:
    """One ad (after ``I(command)``) in the connection's current mode, bounded in time."""
    with trio.fail_after(_WRITE_TIMEOUT):
        await channel.run(send_ad(channel.conn, ad, command))


def _request_ad(request: CommandRequest, what: str) -> Protocol[ClassAd | None]:
    """The ad a CCB command starts with; None (the connection closes) when unreadable."""
    reader = yield from request.read_payload()
    try:
        ad: ClassAd = yield from decode(reader, strict_ad)
    except CedarError as exc:
        log.info("CCB: unreadable %s (%s); closing", what, exc)
        return None
    return ad


class CcbBroker:
    """The broker of ``daemon`` (a collector): :meth:`register_on` adds its commands."""

    def __init__(
        self,
        daemon: Daemon,
        *,
        limits: BrokerLimits | None = None,
        reconnect_file: str | None = None,
        address: str | None = None,
        reconnect_from_any_ip: bool = False,
    ) -> None:
        self.daemon = daemon
        self.limits = limits or BrokerLimits()
        self.table = ReconnectTable(reconnect_file)
        self._address = address
        self.any_ip = reconnect_from_any_ip
        self.targets: dict[int, _Target] = {}
        self.joining: set[int] = set()  # registered, connection not yet (or still) held
        self.requests = 0  # request ids handed out (from 1, spec 09 §6.2)
        self.waiting = 0
        self.streams: dict[str, _Pending] = {}  # by connect id
        self.relays = 0
        #: A replay's stand-in for the targets: the messages a recorded target made the broker
        #: send a requester (None: no target has that id).
        self.offline: Callable[[Request], list[tuple[int | None, ClassAd]] | None] | None = None
        self.stats = dict.fromkeys(
            ("Registered", "Reconnects", "Requests", "RequestsNotFound", "RequestsSucceeded",
             "RequestsFailed", "StreamingRequests", "StreamingSessions", "StreamingFailed",
             "StreamingBytes"),
            0,
        )  # fmt: skip

    def register_on(self, daemon: Daemon) -> None:
        """Serve 67 (DAEMON), 68 (READ) and, with streaming, 69 (ALLOW) on ``daemon``."""
        daemon.register(Command.CCB_REGISTER, self.handle_register, permission="DAEMON")
        daemon.register(Command.CCB_REQUEST, self.handle_request, permission="READ")
        if self.limits.streaming:
            daemon.register(Command.CCB_REVERSE_CONNECT, self.handle_reverse, permission="ALLOW")

    @property
    def address(self) -> str:
        """The broker's bare address (spec 09 §2.1), the part before ``#`` of every contact."""
        return bare_address(self._address or self.daemon.address)

    def ad_attributes(self) -> dict[str, int]:
        """The collector ad's CCB statistics (spec 09 §6.4)."""
        numbers = {f"CCB{name}": value for name, value in self.stats.items()}
        numbers["CCBEndpointsConnected"] = len(self.targets)
        numbers["CCBEndpointsRegistered"] = len(self.table.entries)
        numbers["CCBStreamingActive"] = self.relays
        return numbers

    # -- registration ---------------------------------------------------------------------------

    def handle_register(self, request: CommandRequest) -> Protocol[None]:
        """``CCB_REGISTER``: an id (the old one for a known cookie and peer), then the held
        connection (spec 09 §6.3)."""
        ad = yield from _request_ad(request, "registration")
        if ad is None:
            return
        peer = request.peer[0] if request.peer else "?"
        registration = parse_registration(ad)
        if self.table.reclaim(registration, peer, any_ip=self.any_ip):
            assert registration.ccbid is not None
            ccbid, cookie = registration.ccbid, self.table.cookie(registration.ccbid)
            self.stats["Reconnects"] += 1
        elif len(self.targets.keys() | self.joining) >= self.limits.max_targets:
            log.warning("CCB: %d targets registered already; refusing %s",
                        self.limits.max_targets, registration.name)  # fmt: skip
            return
        else:
            ccbid, cookie = self.table.allocate(peer, self.targets.keys() | self.joining)
        self.stats["Registered"] += 1
        self.joining.add(ccbid)  # counted from the reply on, until its connection ends
        try:
            writer = request.writer()
            put_classad(writer, registration_reply(f"{self.address}#{ccbid}", cookie))
            yield Send(writer)
            work = partial(self._hold_target, ccbid, registration.name, peer)
            takeover = Takeover(work, lifetime=math.inf)
            yield Emit(takeover)
            if not takeover.taken:  # a replay: the held connection served as a protocol
                yield from self._held_inline(request)
        finally:
            self.joining.discard(ccbid)

    def _held_inline(self, request: CommandRequest) -> Protocol[None]:
        """The held connection without a task of its own (a replay, spec 09 §4.2): heartbeats
        answered, anything else read, until the peer ends."""
        while True:
            try:
                ad = get_classad((yield Receive()))
            except CedarError:
                return
            if is_heartbeat(ad):
                writer = request.writer()
                put_classad(writer, ad)
                yield Send(writer)

    async def _hold_target(self, ccbid: int, name: str, peer: str, channel: TrioChannel) -> None:
        target = _Target(ccbid, name, channel, peer)
        previous = self.targets.get(ccbid)
        if previous is not None:  # a reconnection: the old connection is dropped (§6.3)
            previous.scope.cancel()
            self._forget(previous, "the target registered again")
        self.targets[ccbid] = target
        log.info("CCB: %s registered as ccbid %d", name, ccbid)
        channel.timeout = self.limits.target_idle
        try:
            with target.scope:
                await self._read_target(target)
        except (CedarError, trio.TooSlowError, trio.BrokenResourceError, OSError) as exc:
            log.info("CCB: connection of ccbid %d ended: %s", ccbid, exc)
        finally:
            self._forget(target, f"the daemon registered as ccbid {ccbid} disconnected")

    async def _read_target(self, target: _Target) -> None:
        """Heartbeats answered, results matched to their requests; anything else ends it."""
        while True:
            ad = await target.channel.run(read_ad())
            if is_heartbeat(ad):
                await target.send(ad)
                continue
            result = parse_result(ad)
            if result.request_id is None or result.connect_id is None:
                log.info("CCB: ccbid %d sent a result without its ids; dropping it",
                         target.ccbid)  # fmt: skip
                return
            pending = target.pending.get(result.request_id)
            if pending is None:
                continue  # the requester is gone already
            if pending.request.connect_id != result.connect_id:
                log.info("CCB: ccbid %d answered request %s with another connect id; dropping it",
                         target.ccbid, result.request_id)  # fmt: skip
                return
            self.stats["RequestsSucceeded" if result.success else "RequestsFailed"] += 1
            if not result.success:
                pending.finish(reply(False, result.error or "the target failed to connect"))
            elif not pending.request.streaming:
                pending.finish(reply(True))

    def _forget(self, target: _Target, why: str) -> None:
        if self.targets.get(target.ccbid) is target:
            del self.targets[target.ccbid]
        for pending in list(target.pending.values()):
            pending.finish(reply(False, why))

    # -- requests -------------------------------------------------------------------------------

    def handle_request(self, request: CommandRequest) -> Protocol[None]:
        """``CCB_REQUEST`` (spec 09 §6.4): malformed → closed; unknown id or streaming off →
        refused at once; else the connection waits in its own task."""
        ad = yield from _request_ad(request, "request")
        if ad is None:
            return
        parsed = parse_request(ad)
        if parsed is None:
            log.info("CCB: request without CCBID, MyAddress or ClaimId; closing")
            return
        self.stats["Requests"] += 1
        if self.offline is not None:  # a replay: what the recorded target made the broker say
            answer = self.offline(parsed)
            for command, ad in answer or [
                (None, reply(False, UNKNOWN_ID.format(ccbid=parsed.ccbid)))
            ]:
                yield from send_ad(request.conn, ad, command)
            return
        refusal = None
        if parsed.ccbid not in self.targets:
            self.stats["RequestsNotFound"] += 1
            refusal = UNKNOWN_ID.format(ccbid=parsed.ccbid)
        elif parsed.streaming and not self.limits.streaming:
            refusal = STREAMING_DISABLED
        if refusal is not None:
            writer = request.writer()
            put_classad(writer, reply(False, refusal))
            yield Send(writer)
            return
        peer = "<{}:{}>".format(*request.peer) if request.peer else "<unknown>"
        work = partial(self._serve_request, parsed, f"{parsed.name} on {peer}")
        yield Emit(Takeover(work, lifetime=self.limits.request_timeout + _WRITE_TIMEOUT))

    def _refusal(self, request: Request, target: _Target) -> str | None:
        """Why a request is refused before it is forwarded (the caps, spec 09 §7.4)."""
        limits = self.limits
        if len(target.pending) >= limits.max_pending_per_target:
            return (f"CCB server has too many requests pending for ccbid {target.ccbid} "
                    f"(at most {limits.max_pending_per_target})")  # fmt: skip
        if self.waiting >= limits.max_pending:
            return f"CCB server has too many requests pending (at most {limits.max_pending})"
        if request.streaming:
            if self.relays + len(self.streams) >= limits.max_streaming:
                return "CCB streaming session limit reached on the broker"
            if request.connect_id in self.streams:
                return "duplicate connect id"
        return None

    async def _serve_request(
        self, request: Request, description: str, channel: TrioChannel
    ) -> None:
        target = self.targets.get(request.ccbid)
        if target is None:
            await _write(channel, reply(False, UNKNOWN_ID.format(ccbid=request.ccbid)))
            return
        refusal = self._refusal(request, target)
        if refusal is not None:
            self.stats["RequestsFailed"] += 1
            await _write(channel, reply(False, refusal))
            return
        self.requests += 1
        pending = _Pending(request, str(self.requests), target)
        target.pending[pending.request_id] = pending
        self.waiting += 1
        if request.streaming:
            self.streams[request.connect_id] = pending
            self.stats["StreamingRequests"] += 1
        try:
            await self._forward_and_wait(pending, description, channel)
        finally:
            self.waiting -= 1
            target.pending.pop(pending.request_id, None)
            if self.streams.get(request.connect_id) is pending:
                del self.streams[request.connect_id]
            pending.relay_over.set()

    async def _forward_and_wait(
        self, pending: _Pending, description: str, channel: TrioChannel
    ) -> None:
        request = pending.request
        where = f"<{self.address}>" if request.streaming else request.my_address
        try:
            await pending.target.send(forwarded(request, description, pending.request_id, where))
        except (CedarError, trio.TooSlowError, trio.BrokenResourceError, OSError):
            pending.finish(reply(False, "failed to forward request to target"))
        if not await self._wait(pending, channel):
            return  # the requester left (or wrote): dropped without a word (§6.4 step 5)
        if pending.reverse is not None and pending.hello is not None:
            self.stats["StreamingSessions"] += 1
            self.relays += 1
            try:
                await _write(channel, reply(True, proxy=True))
                await _write(channel, pending.hello, Command.CCB_REVERSE_CONNECT)
                await self._relay(channel, pending.reverse)
            finally:
                self.relays -= 1
            return
        answer = pending.answer
        if answer is None:
            self.stats["RequestsFailed"] += 1
            answer = reply(False, self._timed_out(request))
        if request.streaming and answer.get("Result") is not True:
            self.stats["StreamingFailed"] += 1
        await _write(channel, answer)

    def _timed_out(self, request: Request) -> str:
        if request.streaming:
            return (
                "CCB streaming handshake timed out: the target did not connect back to the broker"
            )
        return (f"CCB server timed out waiting for the daemon registered as ccbid {request.ccbid} "
                f"to connect back (after {self.limits.request_timeout:g} s)")  # fmt: skip

    async def _wait(self, pending: _Pending, channel: TrioChannel) -> bool:
        """Until the target answers or ``request_timeout``: True; False if the requester
        closed or wrote first."""
        gone = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal gone
                with contextlib.suppress(
                    trio.BrokenResourceError, trio.ClosedResourceError, OSError
                ):
                    await channel.stream.receive_some(1)
                gone = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            with trio.move_on_after(self.limits.request_timeout):
                await pending.done.wait()
            nursery.cancel_scope.cancel()
        return not gone

    # -- streaming ------------------------------------------------------------------------------

    def handle_reverse(self, request: CommandRequest) -> Protocol[None]:
        """``CCB_REVERSE_CONNECT`` to the broker (spec 09 §7.3): a hello whose connect id
        matches a waiting streaming request joins it; any other is closed without a reply."""
        ad = yield from _request_ad(request, "reverse connection")
        if ad is None:
            return
        connect_id = ad.get_string("ClaimId") if "ClaimId" in ad else None
        pending = self.streams.get(connect_id or "")
        if pending is None or pending.reverse is not None or pending.done.is_set():
            log.info("CCB: a reverse connection for no waiting request; closing")
            return
        lifetime = self.limits.relay_lifetime + self.limits.request_timeout
        yield Emit(Takeover(partial(self._join, pending, ad), lifetime=lifetime))

    async def _join(self, pending: _Pending, ad: ClassAd, channel: TrioChannel) -> None:
        if pending.reverse is not None or pending.done.is_set():
            return
        pending.reverse = channel
        pending.hello = hello(
            str(ad.get_string("ClaimId")),
            ad.get_string("MyAddress") or f"<{self.address}>",
            ad.get_string("RequestID") or pending.request_id,
        )
        pending.done.set()
        await pending.relay_over.wait()  # the requester's task relays; this connection waits

    async def _relay(self, requester: TrioChannel, target: TrioChannel) -> None:
        """Bytes both ways until both sides have ended (spec 09 §7.3); what either side sent
        ahead is passed on first.  The session's crypto stops here for both."""
        chunk = self.limits.relay_chunk
        with trio.move_on_after(self.limits.relay_lifetime):
            async with trio.open_nursery() as nursery:

                async def pump(source: TrioChannel, sink: TrioChannel) -> None:
                    try:
                        source.conn = source.conn.detached()
                        if source.conn.buffered_bytes:
                            await sink.stream.send_all(
                                await source.read_raw(source.conn.buffered_bytes)
                            )
                        while data := await source.stream.receive_some(chunk):
                            self.stats["StreamingBytes"] += len(data)
                            await sink.stream.send_all(data)
                        await sink.stream.send_eof()  # type: ignore[attr-defined]
                    except (CedarError, trio.BrokenResourceError, trio.ClosedResourceError,
                            OSError):  # fmt: skip
                        nursery.cancel_scope.cancel()  # a hard error ends both directions

                nursery.start_soon(pump, requester, target)
                nursery.start_soon(pump, target, requester)


__all__ = ["BrokerLimits", "CcbBroker"]
