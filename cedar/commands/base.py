"""Running one client command end to end: connect, shared-port preamble, security, body.

``body(session)`` is a protocol coroutine that writes the payload (``session.payload_writer()``)
and reads the reply; it is the only part a specific command supplies.  A cached session the
server has forgotten (``SID_NOT_FOUND``) is retried once on a new connection with a full
handshake -- the reference library fails that command instead (spec 03 §6.3).

This module holds what does no I/O (the sequence as a protocol, the retry and limits policy);
the drivers that run it are ``run_command``/``iterate_command`` and their ``*_async`` twins,
written once in :mod:`cedar.commands._async.command` (see ``docs/ARCHITECTURE.md``).

Limits, one of each for every client:

* :data:`DEFAULT_TIMEOUT` -- a **per-call** deadline: connecting, the security handshake and the
  whole reply must be over within it, however the peer paces its bytes (for an iterator, the
  time the caller spends between items counts too);
* :data:`MAX_RESULTS` -- the most results one call accepts before it fails with
  :class:`~cedar.errors.ResultLimitExceeded` (a peer that never stops sending).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from cedar.auth.client import CommandDenied, CommandSession, SessionRejected, start_command
from cedar.auth.client_config import ClientSecurity, default_security
from cedar.auth.errors import RawStartRefused
from cedar.auth.policy import Requirement
from cedar.auth.sharedport import send_preamble
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd, get_classad
from cedar.classad_wire.wire import read_shaped_values
from cedar.errors import CedarConnectionError, ClassAdError, ConnectionClosed, ResultLimitExceeded
from cedar.lazy import LazyLogger
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import Deadline, SyncChannel, TrioChannel
from cedar.stream.primitives import MessageReader, MessageTruncated
from cedar.stream.protocol import Emit, Protocol, StreamedMessage

T = TypeVar("T")
Body = Callable[[CommandSession], Protocol[T]]
#: Called with no arguments at a point of a driver's sequence (``connected=`` hooks).
AsyncHook = Callable[[], Awaitable[None]]
Hook = Callable[[], None]

log = LazyLogger("cedar.commands")

#: Seconds one client call may take in all (connect + handshake + whole reply), unless the
#: caller or the configuration (``QUERY_TIMEOUT`` for collector queries) says otherwise.
DEFAULT_TIMEOUT = 60.0
#: Results (ads, records) one call accepts at most, unless the caller says otherwise.
MAX_RESULTS = 1_000_000
#: ``condor_tail``'s default byte budget of one peek (``-maxbytes``); here, not in
#: :mod:`cedar.commands.peek`, because ``Schedd.peek``'s signature needs it at import.
DEFAULT_MAX_BYTES = 1024
#: Seconds between two peeks while following, and between two tries while the job is not
#: running (``condor_tail``'s pace); here for the same reason.
FOLLOW_INTERVAL = 2.0
#: Seconds a connection opened ahead (while another query makes the session) may be held
#: before it is used; a longer wait opens a new one instead (the daemon may have dropped it).
HELD_CONNECTION_MAX = 2.0


@functools.lru_cache(maxsize=256)
def _resolved_text(address: str) -> tuple[Sinful, str]:
    target = resolve_address(address)
    return target, str(target)


def _resolved(address: str | Sinful) -> tuple[Sinful, str]:
    """:func:`resolve_address` and its text; cached per address string (a client calls the
    same daemon over and over; the sinful is never changed once parsed)."""
    if isinstance(address, Sinful):
        target = resolve_address(address)
        return target, str(target)
    return _resolved_text(address)


def resolve_address(address: str | Sinful) -> Sinful:
    """The sinful to connect to (``addrs`` choice applied; a ``CCBID`` kept: the connection
    then goes through CCB, :func:`cedar.commands._async.ccb.open_channel_async`)."""
    sinful = address if isinstance(address, Sinful) else Sinful.parse(address)
    target = sinful.connect_target()
    if target.port is None:
        raise CedarConnectionError(f"address {sinful} has no port")
    return target


def command_protocol(
    conn: CedarConnection,
    target: Sinful,
    command: int,
    body: Body[T],
    *,
    security: ClientSecurity | None = None,
    raw: bool | None = None,
    deadline: int = int(DEFAULT_TIMEOUT),
    local_address: tuple[str, int] | None = None,
    peer_address: tuple[str, int] | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
    pipeline_resume: bool = False,
    target_text: str | None = None,
) -> Protocol[T]:
    """One whole client command on a fresh connection: preamble, ``start_command``, ``body``.

    Public so that every driver (sockets here, recorded traffic in :mod:`cedar.capture.replay`)
    runs the same sequence.  ``deadline`` is the seconds the shared-port preamble announces.
    ``pipeline_resume`` (for commands safe to send twice, e.g. queries): a cached session is
    resumed without waiting for the server's resume response, the payload going out in the
    same write; a close before any answer then means the session was forgotten (or the command
    refused) and raises :class:`SessionRejected`, which the drivers retry with a new session.
    ``target_text`` is ``str(target)`` when the caller has it already.
    """
    sock_id = target.shared_port_id
    if sock_id:
        subsystem = security.config.subsystem if security is not None else "TOOL"
        yield from send_preamble(conn, sock_id, client_name=subsystem, deadline=deadline)
    try:
        session = yield from start_command(
            conn,
            command,
            security=security,
            target=target_text if target_text is not None else str(target),
            raw=raw,
            local_address=local_address,
            peer_address=peer_address,
            auth_command=auth_command,
            permission_hint=permission_hint,
            pipeline_resume=pipeline_resume,
        )
    except CommandDenied as exc:
        if sock_id and "Connection closed" in str(exc):
            raise CommandDenied(
                f"{exc} (Or the shared-port id {sock_id!r} is unknown at {target.host}:"
                f"{target.port}.)",
                command=exc.command,
                user=exc.user,
                method=exc.method,
            ) from None
        raise
    if not (session.resumed or session.raw):
        return (yield from body(session))
    try:
        return (yield from body(session))
    except ConnectionClosed as exc:
        if exc.mid_message:  # cut inside a message: a broken reply, not a refusal
            raise
        if session.pipelined and conn.received_bytes == 0 and session.raw:
            # An unnegotiated read refused (or a daemon that never answers raw): negotiate there.
            target_key = target_text if target_text is not None else str(target)
            (security or default_security()).raw_refused(target_key, command)
            raise RawStartRefused(
                f"the server closed the connection after the unnegotiated start of command "
                f"{command} without answering; negotiating with it from now on"
            ) from None
        if session.pipelined and conn.received_bytes == 0:
            # No resume response was asked for: a forgotten session and a refused command
            # look alike (a silent close).  Drop the session; a new handshake tells them apart.
            if session.session_id is not None:
                (security or default_security()).sessions.invalidate(session.session_id)
            raise SessionRejected(
                "the server closed the connection without answering the resumed session "
                f"(it forgot the session or refused command {command}); the session was dropped"
            ) from None
        # Refusals after a raw start or a resumption are silent closes (spec 03 §6.3, §7.3).
        how = "resuming our session" if session.resumed else "the raw (unauthenticated) start"
        who = session.authenticated_user or "an unauthenticated user"
        raise CommandDenied(
            f"the server closed the connection after {how} of command {command}: the command "
            f"is unknown or was denied for {who}",
            command=command,
            user=session.authenticated_user,
            method=session.method,
        ) from None


#: What hears of each command a client ran: its number, the error that ended it (None: it
#: succeeded) and its seconds.  Process-wide (``cedar serve``'s ``/metrics`` counts daemon round
#: trips with one); an observer must be quick and must not raise.
CommandObserver = Callable[[int, "BaseException | None", float], None]
COMMAND_OBSERVERS: list[CommandObserver] = []


def observe_commands(observer: CommandObserver) -> None:
    """Add ``observer`` to :data:`COMMAND_OBSERVERS` (once)."""
    if observer not in COMMAND_OBSERVERS:
        COMMAND_OBSERVERS.append(observer)


class CommandAttempts:
    """What every driver of one command shares: the target, the protocol, the one retry, the
    call's deadline and its result count.

    A cached session the server has forgotten (:class:`SessionRejected`) is retried once on a
    new connection with a full handshake, unless results were already handed out; the retry
    runs within the same deadline.
    """

    def __init__(
        self,
        address: str | Sinful,
        command: int,
        body: Body[Any],
        *,
        security: ClientSecurity | None,
        timeout: float,
        raw: bool | None,
        auth_command: int | None,
        permission_hint: str | None,
        max_results: int = MAX_RESULTS,
        pipeline_resume: bool = False,
    ) -> None:
        self.target, self._target_text = _resolved(address)
        self.host, self.port = self.target.endpoint
        self.timeout = timeout
        self.deadline = Deadline(timeout)
        self.max_results = max_results
        self.results = 0
        self._command = command
        self._body = body
        self.security = security
        self._raw = raw
        self._auth_command = auth_command
        self._permission_hint = permission_hint
        self._pipeline_resume = pipeline_resume
        self._attempt = 0
        #: An unnegotiated start was refused (that earns a negotiated try of its own).
        self._raw_refused = False
        self._started = time.monotonic()

    @contextlib.contextmanager
    def observed(self) -> Iterator[None]:
        """Around a driver's whole run of the command: :data:`COMMAND_OBSERVERS` hear how it
        ended, once (an early stop or a cancellation is told as its ``BaseException``)."""
        error: BaseException | None = None
        try:
            yield
        except BaseException as exc:
            error = exc
            raise
        finally:
            if COMMAND_OBSERVERS:
                seconds = time.monotonic() - self._started
                for observer in COMMAND_OBSERVERS:
                    observer(self._command, error, seconds)

    def protocol(self, channel: SyncChannel | TrioChannel) -> Protocol[Any]:
        """:func:`command_protocol` on a new connection (its socket gives the endpoints)."""
        self._attempt += 1
        local_address, peer_address = endpoints(channel)
        return command_protocol(
            channel.conn,
            self.target,
            self._command,
            self._body,
            security=self.security,
            raw=self._raw,
            deadline=int(self.timeout),
            local_address=local_address,
            peer_address=peer_address,
            auth_command=self._auth_command,
            permission_hint=self._permission_hint,
            pipeline_resume=self._pipeline_resume,
            target_text=self._target_text,
        )

    def too_many_results(self) -> ResultLimitExceeded:
        """The error once :attr:`results` (counted by the driver) passes :attr:`max_results`."""
        return result_limit_exceeded(self.target, self.max_results)

    def retry(self, error: SessionRejected | None = None) -> bool:
        """After :class:`SessionRejected` (``error``): whether to try again on a new connection
        (an unnegotiated start refused earns a negotiated try of its own)."""
        if isinstance(error, RawStartRefused):
            config = (self.security or default_security()).config
            if config.negotiation is Requirement.NEVER:
                return False  # this client never negotiates: the refusal stands
            self._raw_refused, self._raw = True, False  # negotiate from now on, memo or not
        if self._attempt >= 2 + self._raw_refused or self.results:
            return False
        log.info("%s; retrying with a new start", error or "the server forgot our session")
        return True


def result_limit_exceeded(sender: object, limit: int, what: str = "results") -> ResultLimitExceeded:
    """The error of a reply that holds more than ``limit`` results (``max_results``)."""
    return ResultLimitExceeded(
        f"{sender} sent more than {limit} {what}; raise max_results if that many are expected"
    )


def int_value(ad: ClassAd, name: str) -> int | None:
    """An integer attribute of a reply ad (a summary's ``Owner``, ``ErrorCode``, ...); None when
    it is missing, not an integer (a boolean is not one) or cannot be evaluated."""
    try:
        value = ad.get(name)
    except ClassAdError:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


#: What a chunked reply's ``parse`` makes of one item (see :class:`Batcher`): a result's bytes,
#: the ad that ends the reply, or None for an item that is neither (history's header).
Item = bytes | ClassAd | None
#: A transcoder of a reply's ads for the chunk protocols: from an ad's shape names and received
#: values (``read_shaped_values``: no ad made), and from any other ad.
ShapedWriter = Callable[[tuple[str, ...], Sequence[bytes]], bytes]
AdWriter = Callable[[ClassAd], bytes]


def item_parser(
    shaped: ShapedWriter,
    other: AdWriter,
    ends: Callable[[ClassAd], bool | None],
    markers: tuple[bytes, ...],
    *,
    one_per_message: bool = False,
) -> Callable[[MessageReader], Item]:
    """How a chunk protocol reads one item of its reply (the ``parse`` of :class:`Batcher`).

    An ad of a recurring shape goes from its received values to ``shaped``, no ad made, unless
    its ``Owner`` is received as one of ``markers`` (the value of the command's own ads: a
    summary, a header).  Any other item is read as an ad and ``ends(ad)`` says what it is: the
    reply's end (True: returned), a result (False: written by ``other``) or neither (None:
    skipped).  ``one_per_message``: a message holds exactly one ad (the job query)."""

    def parse(reader: MessageReader) -> Item:
        start = reader.offset
        found = read_shaped_values(reader)
        if found is not None:
            shape, values = found
            owner = shape.index.get("owner")
            if owner is None or values[owner] not in markers:
                if one_per_message:
                    reader.end_of_message()
                return shaped(shape.names, values)
            reader.seek(start)  # (an ad of the command's own, or a result with that Owner)
        ad = get_classad(reader)
        if one_per_message:
            reader.end_of_message()
        end = ends(ad)
        if end is False:
            return other(ad)
        return ad if end else None

    return parse


class Batcher:
    """The results of one reply as bytes, handed out in lists of about ``chunk_size`` bytes.

    What the chunk protocols of the job query and of history share (their ``parse`` says what
    an item is): counting the results against ``max_results`` -- the driver counts emitted
    lists, not results -- cutting the lists, and emitting the last one before the reply's end.
    One ``Emit`` per list spares each result the trip through the driver and the consumer's
    iteration.  ``sender`` and ``what`` word :func:`result_limit_exceeded`.
    """

    __slots__ = ("chunk_size", "count", "max_results", "sender", "what")

    def __init__(
        self, chunk_size: int, max_results: int, sender: str, what: str = "results"
    ) -> None:
        self.chunk_size = chunk_size
        self.max_results = max_results
        self.sender = sender
        self.what = what
        #: Results read so far (kept when the reply breaks off).
        self.count = 0

    def protocol(
        self, stream: StreamedMessage, parse: Callable[[MessageReader], Item]
    ) -> Protocol[ClassAd]:
        """Read items with ``parse`` until it gives an ad, which ends the reply: emit the results
        in lists, the rest before returning that ad (unchecked: the caller's rule).

        An item whose bytes are at hand (:meth:`StreamedMessage.held`) is parsed in a plain
        call; only a wait, or the rest of an item cut at a piece's end, goes through
        :meth:`StreamedMessage.read` (and a wait out to the driver)."""
        items: list[bytes] = []
        size = count = 0
        chunk_size, limit = self.chunk_size, self.max_results
        held, read = stream.held, stream.read
        try:
            while True:
                reader = held()
                if reader is None:
                    found = yield from read(parse)  # a wait
                elif reader.complete:
                    found = parse(reader)  # a whole message at hand: no generator, no driver
                else:  # a piece of a longer message (history's every ad in one)
                    start = reader.offset
                    try:
                        found = parse(reader)
                    except MessageTruncated:  # the item goes on in the next piece
                        reader.seek(start)
                        found = yield from read(parse)
                if found.__class__ is not bytes:  # (the common case first: a result)
                    if found is None:
                        continue
                    if isinstance(found, ClassAd):
                        if items:
                            yield Emit(items)
                        return found
                count += 1
                if count > limit:
                    raise result_limit_exceeded(self.sender, limit, self.what)
                items.append(found)
                size += len(found)
                if size >= chunk_size:
                    yield Emit(items)
                    items = []
                    size = 0
        finally:
            self.count = count


def endpoints(
    channel: SyncChannel | TrioChannel,
) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    """A channel's local and peer ``(host, port)`` (None when it has no socket)."""
    if isinstance(channel, SyncChannel):
        sock: object = channel.sock
    else:
        sock = getattr(channel.stream, "socket", None)
    try:
        local = sock.getsockname()  # type: ignore[attr-defined]
        peer = sock.getpeername()  # type: ignore[attr-defined]
        return (str(local[0]), int(local[1])), (str(peer[0]), int(peer[1]))
    except (OSError, AttributeError):
        return None, None


def run_blocking(function: Callable[[], T]) -> T:
    """Call a function that may block on files (configuration, address files)."""
    return function()


async def run_blocking_async(function: Callable[[], T]) -> T:
    """:func:`run_blocking` in a worker thread, so the Trio loop keeps running."""
    import trio

    return await trio.to_thread.run_sync(function)


def pause(seconds: float) -> None:
    """Wait between two polls of a daemon (the blocking twin of :func:`pause_async`)."""
    import time

    time.sleep(seconds)


async def pause_async(seconds: float) -> None:
    """Wait between two polls of a daemon without blocking the Trio loop."""
    import trio

    await trio.sleep(seconds)


__all__ = [
    "AdWriter",
    "DEFAULT_TIMEOUT",
    "HELD_CONNECTION_MAX",
    "AsyncHook",
    "Hook",
    "MAX_RESULTS",
    "pause",
    "pause_async",
    "Batcher",
    "Body",
    "CommandAttempts",
    "Item",
    "command_protocol",
    "endpoints",
    "int_value",
    "item_parser",
    "resolve_address",
    "result_limit_exceeded",
    "run_blocking",
    "run_blocking_async",
    "ShapedWriter",
]
