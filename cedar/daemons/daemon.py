"""A CEDAR daemon framework on Trio: listen, authenticate, authorize, dispatch.

Handlers are protocol coroutines (``handler(request) -> Protocol[None]``), so the same code runs
under any driver.  Nothing a peer sends may crash, hang or exhaust the daemon: every connection
has per-read timeouts, a handshake deadline and a total lifetime; messages are size-bounded and
the bytes all connections buffer are capped; handshake ads are attribute-bounded; connections
are capped in total and per peer; each request's evaluations share one :class:`Budget`; and any
failure only ends that connection.  CPU-heavy steps of a handler (evaluating a constraint over
every ad) go through :func:`offload`, which the Trio daemon runs in a worker thread so that the
event loop keeps serving everyone else.  The knobs live on :class:`ServerPolicy`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

import trio

from cedar.auth.methods import UNAUTHENTICATED_USER, MethodResult
from cedar.auth.permissions import (
    DC_AUTHENTICATE,
    DC_NOP_COMMANDS,
    SHARED_PORT_CONNECT,
    implied_levels,
    normalize_level,
)
from cedar.auth.policy import Requirement
from cedar.auth.server import (
    CommandInfo,
    HandshakeEnv,
    ServerOutcome,
    authenticate_peer,
    serve_authenticate,
    server_context,
    server_methods,
    user_is_mapped,
)
from cedar.auth.server_policy import ResolvedPolicy, ServerPolicy
from cedar.auth.session import ServerSessionCache, Session
from cedar.auth.sharedport import parse_preamble
from cedar.auth.sinful import Sinful, make_sinful
from cedar.classad_wire import ClassAd, get_classad
from cedar.classad_wire.evaluate import Budget
from cedar.errors import CedarError, ProtocolError
from cedar.numbers import FORCE_AUTHENTICATION
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import TrioChannel
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Emit, Protocol, Receive

log = logging.getLogger("cedar.daemons")

Handler = Callable[["CommandRequest"], Protocol[None]]
T = TypeVar("T")


class Offload(Generic[T]):
    """A CPU-heavy step of a handler, to run off the event loop (see :func:`offload`)."""

    def __init__(self, work: Callable[[], T], *, decode: bool = False) -> None:
        self._work = work
        #: A message's decoding (:func:`decode`): limited to a few at once per daemon.
        self.decode = decode
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        """Do the work once (in whatever thread calls this), keeping its result or error."""
        if self._done:
            return
        try:
            self._value = self._work()
        except BaseException as exc:  # handed back to the handler by result()
            self._error = exc
        finally:
            self._done = True

    def result(self) -> T:
        """The work's result (done inline if no driver ran it), or its exception re-raised."""
        self.run()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<Offload done={self._done}>"


def offload(work: Callable[[], T]) -> Protocol[T]:
    """``result = yield from offload(work)``: run ``work`` where it cannot block other peers.

    The Trio daemon runs it in a worker thread (the handler waits; the event loop does not);
    other drivers run it inline.  ``work`` must be thread-safe against the daemon's state
    (the stores take their locks) and bounded (give it the request's :class:`Budget`).
    """
    job = Offload(work)
    yield Emit(job)
    return job.result()


class Takeover:
    """A handler hands its connection to a long-lived coroutine (``yield Emit(Takeover(...))``).

    A CCB registration stays open for as long as the target lives, and other connections write
    to it (spec 09 §6): the handler's protocol cannot wait on another connection, so the Trio
    daemon runs ``work(channel)`` in the connection's own task, with the connection's lifetime
    set to ``lifetime`` seconds from now (None: unchanged), then goes on with the handler.
    Other drivers (replays, in-memory pairs) have no task to give: they ignore it, and the
    handler, seeing :attr:`taken` still false, may go on as a protocol.
    """

    def __init__(
        self, work: Callable[[TrioChannel], Awaitable[None]], *, lifetime: float | None = None
    ) -> None:
        self.work = work
        self.lifetime = lifetime
        #: Set by the daemon that ran ``work``; still false after another driver ignored it.
        self.taken = False

    def __repr__(self) -> str:
        return f"<Takeover lifetime={self.lifetime} taken={self.taken}>"


#: A received message longer than this is decoded in a worker thread (:func:`decode`); a
#: shorter one on the event loop, where it costs less than the trip to a thread.
LOOP_DECODE_BYTES = 64 * 1024
#: Large decodes running at once per daemon: each holds the interpreter's lock in turns with
#: the event loop, so a flood of them may not crowd the loop out (the rest wait their turn).
PARALLEL_DECODES = 2


def decode(reader: MessageReader, work: Callable[[MessageReader], T]) -> Protocol[T]:
    """``value = yield from decode(reader, work)``: ``work(reader)`` where a large message
    cannot hold up other peers.

    Unauthenticated peers may send queries as large as every cap allows; decoded on the event
    loop, a 0.6 MiB constraint delayed an honest ping by 1.4 s, a 14 MiB query ad by 3 s, and
    eight such queries at once stalled a pool for about 25 s.  A message over
    :data:`LOOP_DECODE_BYTES` is therefore decoded in a worker thread (at most
    :data:`PARALLEL_DECODES` at once per daemon); other drivers decode inline.
    """
    if reader.remaining <= LOOP_DECODE_BYTES:
        return work(reader)
    job = Offload(partial(work, reader), decode=True)
    yield Emit(job)
    return job.result()


def strict_ad(reader: MessageReader) -> ClassAd:
    """One ad, every value parsed (a malformed one fails the whole ad, as the reference's
    daemons do): what a handler gives :func:`decode` for a request ad."""
    return get_classad(reader, strict=True)


@dataclass(repr=False)
class CommandRequest:
    """One authorized command as a handler sees it."""

    command: int
    conn: CedarConnection
    peer: tuple[str, int] | None
    user: str | None
    method: str | None
    permission: str
    resumed: bool = False
    raw: bool = False
    daemon: Daemon | None = None
    _first: MessageReader | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: The security session the command runs in (a handler may tell claim sessions apart).
    session: Session | None = None
    #: The evaluation budget every constraint of this request is charged to.
    budget: Budget = field(default_factory=Budget)

    @property
    def encrypted(self) -> bool:
        """Whether the connection is AES-GCM protected."""
        return self.conn.encrypted

    @property
    def identity(self) -> str:
        """The identity authorization lists match: ``user@domain`` or unauthenticated@unmapped."""
        return self.user or UNAUTHENTICATED_USER

    @property
    def authenticated(self) -> bool:
        """Whether the peer proved an identity."""
        return self.user is not None and user_is_mapped(self.user)

    @property
    def payload_in_hand(self) -> bool:
        """Whether a raw start left the payload in the first message, so that
        :meth:`read_payload` returns it without waiting for the peer."""
        return self._first is not None

    def read_payload(self) -> Protocol[MessageReader]:
        """The payload: the rest of a raw first message, else the next message."""
        if self._first is not None:
            first, self._first = self._first, None
            return first
        message = yield Receive()
        return message  # type: ignore[no-any-return]

    def writer(self) -> MessageWriter:
        """A writer in the connection's current string mode."""
        return self.conn.writer()

    def __repr__(self) -> str:
        return (
            f"<CommandRequest command={self.command} user={self.user!r} method={self.method} "
            f"permission={self.permission} resumed={self.resumed}>"
        )


@dataclass(frozen=True)
class Registration:
    """A registered command."""

    command: int
    handler: Handler
    permission: str
    force_authentication: bool
    name: str
    payload: bool = True


def _nop_handler(request: CommandRequest) -> Protocol[None]:
    """``DC_NOP*``: no payload, no reply."""
    return None
    yield  # pragma: no cover


class Daemon:
    """A mock-able CEDAR daemon: a command table, a :class:`ServerPolicy` and a listener."""

    def __init__(
        self,
        name: str,
        daemon_type: str,
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.name = name
        self.daemon_type = daemon_type
        #: False: bind, never listen (a daemon reachable only through CCB, see :meth:`serve`).
        self.listen = True
        self.policy = policy or ServerPolicy()
        self.host = host
        self.port = port
        self.sessions = ServerSessionCache(self.policy.max_sessions)
        self.stats: dict[str, int] = {
            "connections": 0,
            "rejected_connections": 0,
            "new_sessions": 0,
            "resumed_sessions": 0,
            "raw_commands": 0,
            "denied": 0,
            "errors": 0,
        }
        self._commands: dict[int, Registration] = {}
        self._active = 0
        self._per_peer: dict[str, int] = {}
        self._buffered: dict[int, int] = {}  # id(conn) -> bytes it held at its last read
        self._lock = threading.Lock()
        self._address: str | None = None
        self._shared_port_id: str | None = None
        self._cancel: trio.CancelScope | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._decodes: trio.CapacityLimiter | None = None
        for command, level in DC_NOP_COMMANDS.items():
            self.register(command, _nop_handler, permission=level, name="DC_NOP", payload=False)

    # -- configuration --------------------------------------------------------------------------

    def register(
        self,
        command: int,
        handler: Handler,
        *,
        permission: str = "READ",
        force_authentication: bool | None = None,
        name: str | None = None,
        payload: bool = True,
    ) -> None:
        """Serve ``command`` with ``handler`` at permission level ``permission``.

        ``force_authentication=None`` registers it as the reference does (``FORCE_AUTHENTICATION``).
        ``payload=False`` for commands whose client sends nothing after the handshake (on a
        resumed session the daemon otherwise reads that message first, as proof of the key).
        """
        level = normalize_level(permission)
        if force_authentication is None:
            force_authentication = command in FORCE_AUTHENTICATION
        self._commands[command] = Registration(
            command,
            handler,
            level,
            force_authentication,
            name or str(getattr(handler, "__name__", "")),
            payload,
        )

    def lookup(self, command: int) -> CommandInfo | None:
        """How ``command`` is registered, or ``None``."""
        registration = self._commands.get(command)
        if registration is None:
            return None
        return CommandInfo(
            registration.permission, registration.force_authentication, registration.payload
        )

    def valid_commands(self, level: str, mapped: bool) -> list[int]:
        """Commands a session for ``level`` may run (spec 03 §6.1 ``ValidCommands``)."""
        result = []
        for granted in implied_levels(level):
            for registration in self._commands.values():
                if registration.permission != granted:
                    continue
                if registration.force_authentication and not mapped:
                    continue
                result.append(registration.command)
        return result

    @property
    def address(self) -> str:
        """The daemon's sinful string (``<host:port?addrs=...&noUDP[&sock=id]>``)."""
        if self._address is None:
            raise RuntimeError(f"daemon {self.name} is not listening yet")
        return self._address

    @property
    def shared_port_id(self) -> str | None:
        """The id this daemon answers to behind a :class:`SharedPortRouter`."""
        return self._shared_port_id

    def set_shared_port(self, router_host: str, router_port: int, sock_id: str) -> None:
        """Answer behind a :class:`SharedPortRouter` at ``router_host:router_port`` as
        ``sock_id`` (the router calls it when the daemon is added)."""
        self._shared_port_id = sock_id
        self._address = make_sinful(router_host, router_port, sock=sock_id)

    def set_ccb_contact(self, contact: str, private_network: str | None = None) -> None:
        """Publish ``contact`` (``<broker>#<id>``) in the daemon's sinful (``CCBID``, spec 09
        §2.2): requesters then reach it only through that broker."""
        sinful = Sinful.parse(self.address)
        sinful.params["CCBID"] = contact
        if private_network:
            sinful.params["PrivNet"] = private_network
        self._address = str(sinful)

    # -- serving --------------------------------------------------------------------------------

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen and serve until cancelled; ``task_status.started`` gets the daemon.

        A daemon with ``listen`` false (reachable only through a CCB broker, like one behind
        NAT) binds its address but never listens: a direct connection is refused, and it
        serves only the reversed connections its :class:`~cedar.daemons.ccb_target.CcbTarget`
        makes.
        """
        if not self.listen:
            with trio.socket.socket() as bound:
                await bound.bind((self.host, self.port))
                self.port = bound.getsockname()[1]
                self._address = make_sinful(self.host, self.port)
                with trio.CancelScope() as scope:
                    self._cancel = scope
                    self._token = trio.lowlevel.current_trio_token()
                    task_status.started(self)
                    await trio.sleep_forever()
            return
        listeners = await open_listeners(self.host, self.port)
        sockname = listeners[0].socket.getsockname()
        self.port = sockname[1]
        if self._shared_port_id is None:
            self._address = make_sinful(sockname[0], sockname[1])
        log.info("%s %s listening on %s", self.daemon_type, self.name, self._address)
        with trio.CancelScope() as scope:
            self._cancel = scope
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                await nursery.start(trio.serve_listeners, self.handle_stream, listeners)
                task_status.started(self)

    def stop(self) -> None:
        """Stop serving (callable from any thread)."""
        scope, token = self._cancel, self._token
        if scope is None or token is None:
            return
        try:
            trio.from_thread.run_sync(scope.cancel, trio_token=token)
        except RuntimeError:  # already inside the Trio thread
            scope.cancel()
        except trio.RunFinishedError:
            pass

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[Daemon]:
        """Serve in a background thread for the duration of a ``with`` block (sync tests)."""
        with serve_in_thread(self.serve, self.stop):
            yield self

    def _connection_slot(self, peer_host: str) -> str | None:
        """Take a slot for a new connection; the reason it was refused, if it was."""
        with self._lock:
            if self._active >= self.policy.max_connections:
                self.stats["rejected_connections"] += 1
                return f"connection cap reached ({self.policy.max_connections} at once)"
            if self._per_peer.get(peer_host, 0) >= self.policy.max_connections_per_peer:
                self.stats["rejected_connections"] += 1
                return (
                    f"per-peer connection cap reached ({self.policy.max_connections_per_peer} "
                    f"at once from {peer_host})"
                )
            self._active += 1
            self._per_peer[peer_host] = self._per_peer.get(peer_host, 0) + 1
            self.stats["connections"] += 1
            return None

    def _release_slot(self, peer_host: str) -> None:
        with self._lock:
            self._active -= 1
            left = self._per_peer.get(peer_host, 1) - 1
            if left > 0:
                self._per_peer[peer_host] = left
            else:
                self._per_peer.pop(peer_host, None)

    @property
    def buffered_bytes(self) -> int:
        """Bytes held in unfinished messages over all connections (as of their last reads)."""
        with self._lock:
            return sum(self._buffered.values())

    def _account(self, conn: CedarConnection, incoming: int) -> None:
        """Charge a read to the daemon-wide buffer cap (:attr:`ServerPolicy.max_buffered_bytes`)."""
        key = id(conn)
        with self._lock:
            held = conn.buffered_bytes + incoming
            others = sum(self._buffered.values()) - self._buffered.get(key, 0)
            if held > 0 and others + held > self.policy.max_buffered_bytes:
                raise ProtocolError(
                    f"daemon buffer cap reached ({self.policy.max_buffered_bytes} bytes held "
                    "in unfinished messages over all connections); closing this one"
                )
            self._buffered[key] = held

    async def handle_stream(
        self, stream: trio.SocketStream, conn: CedarConnection | None = None
    ) -> None:
        """Serve one connection (``conn`` may already hold bytes a router read)."""
        try:
            peer_host = str(stream.socket.getpeername()[0])
        except (OSError, AttributeError, IndexError):
            peer_host = "?"
        refused = self._connection_slot(peer_host)
        if refused is not None:
            log.warning("%s: %s; closing a new connection from %s", self.name, refused, peer_host)
            with contextlib.suppress(Exception):
                await stream.aclose()
            return
        conn = conn or CedarConnection(max_message_size=self.policy.max_message_size)
        try:
            with trio.move_on_after(self.policy.connection_lifetime) as lifetime:
                await self._serve_connection(_MeteredStream(stream, self, conn), conn, lifetime)
            if lifetime.cancelled_caught:
                log.info(
                    "%s: connection from %s held its slot for connection_lifetime (%g s); closed",
                    self.name,
                    peer_host,
                    self.policy.connection_lifetime,
                )
        finally:
            self._release_slot(peer_host)
            with self._lock:
                self._buffered.pop(id(conn), None)
            with contextlib.suppress(Exception):
                await stream.aclose()

    async def _serve_connection(
        self, stream: _MeteredStream, conn: CedarConnection, lifetime: trio.CancelScope
    ) -> None:
        local = peer = None
        try:
            local = _endpoint(stream.socket.getsockname())
            peer = _endpoint(stream.socket.getpeername())
        except (OSError, AttributeError):
            pass
        channel = TrioChannel(
            stream,  # type: ignore[arg-type]
            conn=conn,
            timeout=self.policy.connection_timeout,
            peer=f"{peer[0]}:{peer[1]}" if peer else "peer",
        )
        env = self._env(local, peer)
        try:
            with trio.fail_after(self.policy.session_deadline):
                request = await channel.run(self._accept(channel.conn, env))
            if request is None:
                return
            registration = self._commands[request.command]
            async for value in channel.iterate(registration.handler(request)):
                if isinstance(value, Offload):
                    # A worker thread: the loop keeps serving; the request's Budget bounds it.
                    limiter = self._decode_limiter() if value.decode else None
                    await trio.to_thread.run_sync(
                        value.run, abandon_on_cancel=True, limiter=limiter
                    )
                elif isinstance(value, Takeover):
                    if value.lifetime is not None:
                        lifetime.deadline = trio.current_time() + value.lifetime
                    value.taken = True
                    await value.work(channel)
        except trio.TooSlowError:
            log.info("%s: security negotiation exceeded its deadline; closing", self.name)
        except CedarError as exc:
            self.stats["errors"] += 1
            log.info("%s: connection from %s ended: %s", self.name, channel.peer, exc)
        except Exception:  # a handler bug must not take the daemon down
            self.stats["errors"] += 1
            log.exception("%s: unexpected error serving %s", self.name, channel.peer)

    def _decode_limiter(self) -> trio.CapacityLimiter:
        """The daemon's limit on large decodes at once (made in the Trio run that serves)."""
        if self._decodes is None:
            self._decodes = trio.CapacityLimiter(PARALLEL_DECODES)
        return self._decodes

    def _env(self, local: tuple[str, int] | None, peer: tuple[str, int] | None) -> HandshakeEnv:
        return HandshakeEnv(
            policy=self.policy,
            sessions=self.sessions,
            lookup=self.lookup,
            valid_commands=self.valid_commands,
            local_address=local,
            peer_address=peer,
            shared_port_id=self._shared_port_id,
        )

    def connection_protocol(
        self,
        conn: CedarConnection,
        *,
        local_address: tuple[str, int] | None = None,
        peer_address: tuple[str, int] | None = None,
    ) -> Protocol[CommandRequest | None]:
        """Everything the daemon does on one connection, as a protocol (for in-memory tests).

        Returns the served request, or ``None`` when the connection was refused.
        """
        request = yield from self._accept(conn, self._env(local_address, peer_address))
        if request is not None:
            yield from self._commands[request.command].handler(request)
        return request

    def _accept(self, conn: CedarConnection, env: HandshakeEnv) -> Protocol[CommandRequest | None]:
        """Read the first message and turn it into an authorized request (or ``None``)."""
        message = yield Receive()
        command = message.get_int()
        if command == SHARED_PORT_CONNECT:
            preamble = parse_preamble(message)
            if preamble.sock_id != self._shared_port_id:
                log.info("%s: shared-port request for another daemon; closing", self.name)
                return None
            conn.reset_transcript()
            message = yield Receive()
            command = message.get_int()
        if command == DC_AUTHENTICATE:
            outcome = yield from serve_authenticate(conn, message, env)
            if outcome is None:
                self.stats["denied"] += 1
                return None
            self.stats["resumed_sessions" if outcome.resumed else "new_sessions"] += 1
            if outcome.finished:
                return None
            return self._request(conn, env, outcome, first=outcome.first)
        return (yield from self._accept_raw(conn, env, command, message))

    def _request(
        self,
        conn: CedarConnection,
        env: HandshakeEnv,
        outcome: ServerOutcome,
        first: MessageReader | None = None,
        raw: bool = False,
    ) -> CommandRequest:
        policy = self.policy
        return CommandRequest(
            budget=Budget(
                policy.request_eval_steps,
                policy.request_eval_seconds,
                slice_seconds=policy.eval_slice_seconds,
            ),
            command=outcome.command,
            conn=conn,
            peer=env.peer_address,
            user=None if outcome.user == UNAUTHENTICATED_USER else outcome.user,
            method=outcome.method,
            permission=outcome.permission,
            resumed=outcome.resumed,
            raw=raw,
            daemon=self,
            _first=first,
            session=outcome.session,
        )

    def _accept_raw(
        self, conn: CedarConnection, env: HandshakeEnv, command: int, message: MessageReader
    ) -> Protocol[CommandRequest | None]:
        """A raw command is served only if its level allows it unauthenticated (spec 03 §2)."""
        info = self.lookup(command)
        if info is None:
            log.info("%s: raw command %d is not registered; closing", self.name, command)
            self.stats["denied"] += 1
            return None
        user = UNAUTHENTICATED_USER
        method = None
        if info.permission != "ALLOW":
            resolved = self.policy.resolve(info.permission)
            if info.force_authentication:
                result = yield from self._inband_authentication(conn, env, command, message, info)
                if result is None:
                    self.stats["denied"] += 1
                    return None
                user = result.fqu or UNAUTHENTICATED_USER
                method = result.extra.get("method")
                message = None  # type: ignore[assignment]
            elif required := _raw_refusals(resolved):
                log.info(
                    "PERMISSION DENIED for raw command %d: level %s requires %s; closing",
                    command,
                    info.permission,
                    " and ".join(required),
                )
                self.stats["denied"] += 1
                return None
            peer = env.peer_address[0] if env.peer_address else None
            if not self.policy.is_authorized(user, peer, info.permission):
                log.info(
                    "PERMISSION DENIED for raw command %d (%s) to %s; closing",
                    command,
                    info.permission,
                    user,
                )
                self.stats["denied"] += 1
                return None
        self.stats["raw_commands"] += 1
        outcome = ServerOutcome(
            command=command,
            permission=info.permission,
            user=user,
            method=method,
            authenticated=method is not None,
            resumed=False,
        )
        return self._request(conn, env, outcome, first=message, raw=True)

    def _inband_authentication(
        self,
        conn: CedarConnection,
        env: HandshakeEnv,
        command: int,
        message: MessageReader,
        info: CommandInfo,
    ) -> Protocol[MethodResult | None]:
        """Raw force-authentication command: the method mask shares the first message (§2)."""
        ctx = server_context(env, command, info.permission)
        methods = server_methods(env, self.policy.resolve(info.permission).methods, ctx)
        result = yield from authenticate_peer(conn, ctx, methods, command, first=message)
        if result is None or not result.success or not user_is_mapped(result.fqu or ""):
            log.info("PERMISSION DENIED for raw command %d: in-band authentication failed", command)
            return None
        return result


async def open_listeners(host: str | None, port: int) -> list[trio.SocketListener]:
    """Trio's listeners on ``host:port``, or one clear error naming the address (a port in use is
    a user's mistake, not a crash of the daemon)."""
    try:
        return await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        where = f"{host or '*'}:{port}"
        raise CedarError(f"cannot listen on {where}: {exc.strerror or exc}") from None


def _raw_refusals(resolved: ResolvedPolicy) -> list[str]:
    """What a level REQUIRES that a raw (unnegotiated) command cannot give; any one refuses it.

    A real 25.x daemon closes a raw command unanswered when its level has any one of
    negotiation, authentication, encryption or integrity REQUIRED (each checked alone).
    """
    return [
        name
        for name in ("negotiation", "authentication", "encryption", "integrity")
        if getattr(resolved, name) is Requirement.REQUIRED
    ]


class _MeteredStream:
    """A daemon connection's stream that charges each read to the daemon-wide buffer cap."""

    def __init__(self, stream: trio.SocketStream, daemon: Daemon, conn: CedarConnection) -> None:
        self._stream = stream
        self._daemon = daemon
        self._conn = conn
        self.socket = stream.socket

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self._stream.receive_some(max_bytes)
        self._daemon._account(self._conn, len(data))
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def send_eof(self) -> None:
        """Half-close (a CCB relay passes one side's end on to the other, spec 09 §7.3)."""
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()


def _endpoint(name: Any) -> tuple[str, int]:
    return str(name[0]), int(name[1])


@contextlib.contextmanager
def serve_in_thread(serve: Callable[..., Any], stop: Callable[[], None]) -> Iterator[None]:
    """Run ``serve`` (a Trio ``serve(task_status=...)``) in a thread until the block ends."""
    started = threading.Event()
    failure: list[BaseException] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(serve)
            started.set()

    def target() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=target, name="cedar-daemon", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        raise RuntimeError(f"the daemon failed to start: {failure[0]}") from failure[0]
    try:
        yield
    finally:
        stop()
        thread.join(timeout=30)


__all__ = [
    "CommandRequest",
    "Daemon",
    "Handler",
    "Offload",
    "Registration",
    "Takeover",
    "offload",
    "serve_in_thread",
]
