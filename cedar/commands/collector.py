"""Collector client: queries, locating daemons, advertising and invalidating ads (spec 05 §2).

The wire work is in protocol coroutines (:func:`query_protocol`, :func:`advertise_protocol`,
:func:`invalidate_protocol`) that run after :func:`cedar.auth.start_command`, so the same code
serves :class:`Collector` (blocking) and :class:`AsyncCollector` (Trio) and is tested against
recorded bytes.  A pool can list several collectors: queries try them in random order and fail
over on any communication error, as the reference client does (spec 06 §3.1); updates go to
every collector.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cedar.auth.client import ClientSecurity, CommandSession
from cedar.auth.version import parse_version
from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad
from cedar.errors import CedarConnectionError, CedarError, CommandError, ConfigError
from cedar.numbers import AdType, Command, DaemonType
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Emit, Protocol, Receive, Send, StreamedMessage

T = TypeVar("T")

DEFAULT_COLLECTOR_PORT = 9618
#: Collector query timeout when no configuration says otherwise (``QUERY_TIMEOUT``, spec 06 §3.4).
DEFAULT_QUERY_TIMEOUT = 60.0
#: What both reference clients ask for when locating a daemon (spec 05 §2.6).
LOCATE_PROJECTION = ("MyAddress", "AddressV1", "CondorVersion", "CondorPlatform", "Name", "Machine")


@dataclass(frozen=True)
class DaemonLocation:
    """Where a daemon is: its sinful address and version, as read from its location ad."""

    address: str
    version: str | None
    name: str | None
    machine: str | None
    platform: str | None
    ad: ClassAd = field(repr=False, compare=False)

    @classmethod
    def from_ad(cls, ad: ClassAd, daemon_type: DaemonType | None = None) -> DaemonLocation:
        """Read a location ad; ``<Subsys>IpAddr`` wins over ``MyAddress`` (spec 05 §2.6)."""
        address = None
        if daemon_type is not None:
            address = _string(ad, f"{daemon_type.name.capitalize()}IpAddr")
        address = address or _string(ad, "MyAddress")
        if not address:
            raise CommandError(
                f"the location ad of {_string(ad, 'Name') or 'the daemon'} has no MyAddress"
            )
        return cls(
            address=address,
            version=_string(ad, "CondorVersion"),
            name=_string(ad, "Name"),
            machine=_string(ad, "Machine"),
            platform=_string(ad, "CondorPlatform"),
            ad=ad,
        )


def _string(ad: ClassAd, name: str) -> str | None:
    try:
        value = ad.get(name)
    except CedarError:
        return None
    return value if isinstance(value, str) else None


# -- building requests --------------------------------------------------------------------------


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def constraint_requirements(constraint: str | None) -> str:
    """The ``Requirements`` text for a user constraint: ``((X))``, or ``true`` without one.

    The constraint is parsed first so a typo fails here with a message instead of making the
    collector drop the connection (spec 05 §2.5).
    """
    if constraint is None or not str(constraint).strip():
        return "true"
    text = f"(({constraint}))"
    parse_expr(text, old=True)
    return text


def build_query_ad(
    ad_type: AdType,
    constraint: str | None = None,
    projection: Iterable[str] | None = None,
    limit: int | None = None,
    *,
    location: str | None = None,
    statistics: str | None = None,
    target_type: str | None = None,
    extra: dict[str, Any] | None = None,
) -> ClassAd:
    """The query ad the reference tools send for ``ad_type`` (spec 05 §2.2).

    ``target_type`` overrides the type's TargetType, e.g. to name a generic table (``"Foo"``).
    """
    ad = ClassAd()
    ad["MyType"] = "Query"
    names = _projection_list(projection)
    if names:
        ad["Projection"] = " ".join(names)
    ad["TargetType"] = target_type or ad_type.target_type
    if limit is not None and limit > 0:
        ad["LimitResults"] = int(limit)
    if ad_type.value.requirements or constraint:
        ad.set_expr("Requirements", parse_expr(constraint_requirements(constraint), old=True))
    if location is not None:
        ad["LocationQuery"] = location
    if statistics:
        ad["STATISTICS_TO_PUBLISH"] = statistics
    for name, value in (extra or {}).items():
        ad[name] = value
    return ad


def _projection_list(projection: Iterable[str] | str | None) -> list[str]:
    if projection is None:
        return []
    if isinstance(projection, str):
        projection = projection.replace(",", " ").split()
    names: list[str] = []
    for name in projection:
        name = name.strip()
        if not name:
            continue
        if any(c.isspace() or c in ',"' for c in name):
            raise ValueError(f"projection entry {name!r} is not an attribute name")
        names.append(name)
    return names


def locate_query_ad(daemon_type: DaemonType, name: str | None) -> ClassAd:
    """The query that locates one daemon: by Name (by Machine for a startd without ``@``)."""
    if name is None:
        return build_query_ad(daemon_type.ad_type, "true", LOCATE_PROJECTION)
    attr = "Machine" if daemon_type is DaemonType.STARTD and "@" not in name else "Name"
    return build_query_ad(
        daemon_type.ad_type,
        f"{attr} == {_quote(name)}",
        LOCATE_PROJECTION,
        limit=1,
        location=name,
    )


def invalidation_ad(
    ad_type: AdType,
    *,
    constraint: str | None = None,
    name: str | None = None,
    address: str | None = None,
    target_type: str | None = None,
) -> ClassAd:
    """An INVALIDATE_* request: by key (``Name`` [+ ``MyAddress``]) or by constraint (§2.8)."""
    if constraint is None and name is None:
        raise ValueError("an invalidation needs a name or a constraint")
    ad = ClassAd()
    ad["MyType"] = "Query"
    ad["TargetType"] = target_type or ad_type.target_type
    if name is not None:
        ad["Name"] = name
        if address is not None:
            ad["MyAddress"] = address
    if constraint is not None:
        ad.set_expr("Requirements", parse_expr(constraint_requirements(constraint), old=True))
    return ad


# -- protocols ----------------------------------------------------------------------------------


def _next_query_result(reader: MessageReader) -> ClassAd | None:
    """One ``I(more) AD`` item of a query reply; ``None`` for the final ``I(0)``."""
    if not reader.get_int():
        return None
    return get_classad(reader)


def read_query_results(stream: StreamedMessage) -> Protocol[int]:
    """Emit each ad of a result message ``I(1) AD ... I(0)`` (spec 05 §2.4); return the count.

    The message holds the whole answer (any size); ads are decoded and emitted as its packets
    arrive, so memory holds one ad at a time.
    """
    count = 0
    while True:
        ad = yield from stream.read(_next_query_result)
        if ad is None:
            break
        yield Emit(ad)
        count += 1
    yield from stream.end_of_message()
    return count


def query_protocol(session: CommandSession, query_ad: ClassAd) -> Protocol[int]:
    """Client payload of every QUERY_* command: the query ad, then the result stream."""
    writer = session.payload_writer()
    put_classad(writer, query_ad)
    yield Send(writer)
    stream = StreamedMessage()
    try:
        first = yield from stream.read(_next_query_result)
    except CedarConnectionError as exc:
        raise type(exc)(
            f"{exc}; the daemon dropped the query without answering (it does that for a "
            "malformed query, an unknown ad type or a refused authorization)"
        ) from exc
    if first is None:
        yield from stream.end_of_message()
        return 0
    yield Emit(first)
    return 1 + (yield from read_query_results(stream))


def _next_writer(session: CommandSession, command: int) -> MessageWriter:
    """A writer for a further command on a kept-open update connection: ``I(cmd)`` first."""
    return session.conn.writer().put_int(int(command))


def advertise_protocol(
    session: CommandSession, ads: Sequence[ClassAd], command: Command
) -> Protocol[int]:
    """Send each ad as ``[I(cmd)] AD EOM`` on one connection, then DC_NOP (spec 05 §2.8).

    The first ad shares the started command; later ones repeat the command number, as the
    reference bindings do.  UPDATE_STARTD_AD_WITH_ACK waits for ``I(1)`` after each ad.
    """
    for index, ad in enumerate(ads):
        writer = session.payload_writer() if index == 0 else _next_writer(session, command)
        put_classad(writer, ad, peer_version=parse_version(session.remote_version))
        yield Send(writer)
        if command == Command.UPDATE_STARTD_AD_WITH_ACK:
            reply = yield Receive()
            if reply.get_int() != 1:
                raise CommandError("the collector did not acknowledge the startd ad")
    yield Send(_next_writer(session, Command.DC_NOP))
    return len(ads)


def invalidate_protocol(session: CommandSession, ad: ClassAd) -> Protocol[None]:
    """Send an invalidation ad (no reply), then DC_NOP so the collector closes."""
    writer = session.payload_writer()
    put_classad(writer, ad)
    yield Send(writer)
    yield Send(_next_writer(session, Command.DC_NOP))


# -- pools --------------------------------------------------------------------------------------


def read_address_file(path: str) -> str | None:
    """The sinful in a daemon address file (spec 06 §3.2), ``None`` if missing or invalid.

    Either positional (first data line is the sinful) or the ClassAd long form, where a
    ``<Subsys>IpAddr`` attribute wins over ``MyAddress``.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return None
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines:
        return None
    if lines[0].startswith("<"):
        return lines[0]
    if "=" not in lines[0]:
        return None
    try:
        ad = ClassAd.parse_old("\n".join(lines))
    except CedarError:
        return None
    for name in ad:
        if name.lower().endswith("ipaddr") and _string(ad, name):
            return _string(ad, name)
    return _string(ad, "MyAddress")


_read_address_file = read_address_file  # the name cedar.commands.schedd imports


def split_pool(pool: str | Sequence[str]) -> list[str]:
    """``"a, b:9619 <c:1?x=y>"`` or a list into single collector entries."""
    entries = [pool] if isinstance(pool, str) else list(pool)
    out: list[str] = []
    for entry in entries:
        text = entry.strip()
        while text:
            if text.startswith("<"):
                end = text.find(">")
                end = len(text) if end < 0 else end + 1
                out.append(text[:end])
                text = text[end:].lstrip(" ,\t")
                continue
            cut = min(
                (i for i in (text.find(","), text.find(" "), text.find("\t")) if i >= 0),
                default=len(text),
            )
            out.append(text[:cut])
            text = text[cut:].lstrip(" ,\t")
    return [e for e in out if e]


def _config() -> Any:
    try:
        from cedar.config import default_config
    except ImportError:  # pragma: no cover - configuration is optional
        return None
    return default_config()


def resolve_pool(pool: str | Sequence[str] | None) -> list[str]:
    """Collector addresses of a pool: explicit, else ``COLLECTOR_HOST`` from the configuration.

    A missing port means ``COLLECTOR_PORT`` (9618); port 0 means "read
    ``COLLECTOR_ADDRESS_FILE``" (how a personal pool publishes its real port, spec 06 §3.1).
    """
    config = _config()
    if pool is None:
        if config is None:
            raise ConfigError("no collector given and no configuration to find one in")
        entries = config.collector_hosts()
        if not entries:
            raise ConfigError("COLLECTOR address or hostname not specified in config file")
    else:
        entries = split_pool(pool)
        if not entries:
            raise ValueError("empty pool: give at least one collector address")
    default_port = DEFAULT_COLLECTOR_PORT
    if config is not None:
        default_port = config.get_int("COLLECTOR_PORT", DEFAULT_COLLECTOR_PORT) or default_port
    addresses: list[str] = []
    for entry in entries:
        if entry.startswith("<"):
            addresses.append(entry)
            continue
        host, port = _host_port(entry)
        if port is None:
            port = default_port
        if port == 0:
            address_file = config.get("COLLECTOR_ADDRESS_FILE") if config is not None else None
            found = read_address_file(address_file) if address_file else None
            if found is None:
                raise ConfigError(
                    f"collector {entry} has port 0 but COLLECTOR_ADDRESS_FILE "
                    f"({address_file or 'unset'}) names no address; is the pool running?"
                )
            addresses.append(found)
            continue
        addresses.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    return addresses


def _host_port(entry: str) -> tuple[str, int | None]:
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, _, port_text = entry.partition(":")
    else:
        host, port_text = entry, ""
    if not port_text:
        return host, None
    try:
        return host, int(port_text)
    except ValueError:
        raise ValueError(f"bad port in collector address {entry!r}") from None


def _default_timeout() -> float:
    config = _config()
    if config is not None and hasattr(config, "query_timeout"):
        try:
            return float(config.query_timeout())
        except (CedarError, ValueError, TypeError):
            pass
    return DEFAULT_QUERY_TIMEOUT


class _PoolState:
    """The collectors of a pool and the ones that failed recently ("blacklisted")."""

    def __init__(self, pool: str | Sequence[str] | None, *, use_primary: bool) -> None:
        self.addresses = resolve_pool(pool)
        self.use_primary = use_primary
        self.failed: set[str] = set()

    def order(self) -> list[str]:
        """Try order: random (first if ``use_primary``), recently failed ones last."""
        order = list(self.addresses)
        if not self.use_primary:
            random.shuffle(order)
        return [a for a in order if a not in self.failed] + [a for a in order if a in self.failed]

    def record(self, address: str, ok: bool) -> None:
        if ok:
            self.failed.discard(address)
        else:
            self.failed.add(address)


def _all_failed(errors: list[tuple[str, CedarError]]) -> CedarError:
    if len(errors) == 1:
        return errors[0][1]
    detail = "; ".join(f"{addr}: {exc}" for addr, exc in errors)
    first = errors[0][1]
    error = type(first)(f"no collector of the pool answered ({detail})")
    error.__cause__ = first
    return error


def _needs_failover(exc: CedarError) -> bool:
    """Communication failures move on to the next collector; refusals and bad input do not."""
    from cedar.errors import ProtocolError, SecurityError

    return isinstance(exc, (CedarConnectionError, ProtocolError, SecurityError))


class _Attempts:
    """The collectors one call tries, in order; ``with attempt:`` records how each one did.

    The policy lives here once so that the blocking and the Trio client only differ by their
    ``await``.  A query (``failover=True``) tries the pool's order: a communication failure is
    recorded and swallowed, so the caller's loop moves on to the next collector, unless results
    were already handed out (``attempt.emitted``); any other error propagates.  An update
    (``failover=False``) goes to every collector and swallows every :class:`CedarError`;
    :meth:`error` then describes them all.
    """

    def __init__(self, pool: _PoolState, *, failover: bool) -> None:
        self._pool = pool
        self._failover = failover
        self.errors: list[tuple[str, CedarError]] = []

    def __iter__(self) -> Iterator[_Attempt]:
        addresses = self._pool.order() if self._failover else self._pool.addresses
        return (_Attempt(self, address) for address in addresses)

    def _finished(self, attempt: _Attempt, exc: BaseException | None) -> bool:
        """Record how ``attempt`` ended; True swallows ``exc`` (the loop moves on)."""
        if exc is None:
            if self._failover:
                self._pool.record(attempt.address, True)
            return False
        if not isinstance(exc, CedarError):
            return False
        if self._failover:
            if attempt.emitted or not _needs_failover(exc):
                return False
            self._pool.record(attempt.address, False)
        self.errors.append((attempt.address, exc))
        return True

    def error(self) -> CedarError:
        """The error to raise when no collector answered (or, for updates, some did not)."""
        return _all_failed(self.errors)


class _Attempt:
    """One collector of :class:`_Attempts`; a context manager that may swallow its error."""

    def __init__(self, attempts: _Attempts, address: str) -> None:
        self.address = address
        #: Set once a result reached the caller: failing over then would repeat results.
        self.emitted = False
        self._attempts = attempts

    def __enter__(self) -> _Attempt:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> bool:
        return self._attempts._finished(self, exc)


# -- clients ------------------------------------------------------------------------------------


class _CollectorBase:
    """What both clients share: the pool and its try policy (:class:`_Attempts`)."""

    def __init__(
        self,
        pool: str | Sequence[str] | None = None,
        *,
        security: ClientSecurity | None = None,
        timeout: float | None = None,
        use_primary: bool = False,
    ) -> None:
        self._pool = _PoolState(pool, use_primary=use_primary)
        self.security = security
        self.timeout = _default_timeout() if timeout is None else timeout

    @property
    def addresses(self) -> list[str]:
        """The collectors of the pool."""
        return list(self._pool.addresses)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {', '.join(self._pool.addresses)}>"

    def _failover(self) -> _Attempts:
        return _Attempts(self._pool, failover=True)

    def _every_collector(self) -> _Attempts:
        return _Attempts(self._pool, failover=False)


def _query_body(query_ad: ClassAd) -> Callable[[CommandSession], Protocol[int]]:
    return lambda session: query_protocol(session, query_ad)


def _query_request(
    ad_type: AdType | str,
    constraint: str | None,
    projection: Iterable[str] | None,
    limit: int | None,
    statistics: str | None,
    target_type: str | None,
) -> tuple[Command, ClassAd]:
    """The command and query ad of ``query``/``query_iter``."""
    kind = AdType.from_name(ad_type)
    query_ad = build_query_ad(
        kind, constraint, projection, limit, statistics=statistics, target_type=target_type
    )
    return kind.command, query_ad


def _locate_request(daemon_type: DaemonType, name: str | None) -> tuple[Command, ClassAd]:
    return daemon_type.ad_type.command, locate_query_ad(daemon_type, name)


def _direct_request(
    daemon_type: DaemonType,
    ad_type: AdType | str | None,
    constraint: str | None,
    projection: Iterable[str] | None,
) -> tuple[Command, ClassAd]:
    """What ``direct_query`` asks the located daemon: its own ad type unless told otherwise."""
    kind = AdType.from_name(ad_type) if ad_type is not None else daemon_type.ad_type
    return kind.command, build_query_ad(kind, constraint, projection)


def _direct_result(
    daemon_type: DaemonType, location: DaemonLocation, ads: list[ClassAd]
) -> ClassAd:
    if not ads:
        raise CommandError(f"{daemon_type.name.lower()} at {location.address} sent no ad")
    return ads[0]


def _invalidate_request(
    ad_type: AdType | str,
    constraint: str | None,
    name: str | None,
    address: str | None,
    target_type: str | None,
) -> tuple[Command, ClassAd]:
    kind = AdType.from_name(ad_type)
    command = _invalidate_command(kind)
    ad = invalidation_ad(
        kind, constraint=constraint, name=name, address=address, target_type=target_type
    )
    return command, ad


class Collector(_CollectorBase):
    """Blocking client of a pool's collector(s).

    ``Collector()`` uses ``COLLECTOR_HOST`` from the configuration; ``Collector("host:port")`` or
    ``Collector(["a", "b"])`` name the collectors explicitly.
    """

    def _iterate(self, command: int, query_ad: ClassAd) -> Iterator[ClassAd]:
        from cedar.commands.base import iterate_command

        attempts = self._failover()
        for attempt in attempts:
            with attempt:
                for ad in iterate_command(
                    attempt.address,
                    command,
                    _query_body(query_ad),
                    security=self.security,
                    timeout=self.timeout,
                ):
                    attempt.emitted = True
                    yield ad
                return
        raise attempts.error()

    def _run_everywhere(
        self, command: int, body: Callable[[CommandSession], Protocol[Any]]
    ) -> None:
        from cedar.commands.base import run_command

        attempts = self._every_collector()
        for attempt in attempts:
            with attempt:
                run_command(
                    attempt.address, command, body, security=self.security, timeout=self.timeout
                )
        if attempts.errors:
            raise attempts.error()

    def query_iter(
        self,
        ad_type: AdType | str = AdType.ANY,
        constraint: str | None = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> Iterator[ClassAd]:
        """Stream the matching ads one at a time.

        The collector sends all results in one message (spec 05 §2.4), so its bytes are
        buffered -- bounded by the connection's message-size limit -- but each ad is decoded
        only when it is consumed, and its values only when they are read.
        """
        return self._iterate(
            *_query_request(ad_type, constraint, projection, limit, statistics, target_type)
        )

    def query(
        self,
        ad_type: AdType | str = AdType.ANY,
        constraint: str | None = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> list[ClassAd]:
        """The matching ads as a list (see :meth:`query_iter`)."""
        return list(
            self.query_iter(
                ad_type,
                constraint,
                projection,
                limit,
                statistics=statistics,
                target_type=target_type,
            )
        )

    def locate_all(self, daemon_type: DaemonType | str) -> list[DaemonLocation]:
        """Every daemon of a type, as locations."""
        daemon_type = DaemonType.from_name(daemon_type)
        ads = list(self._iterate(*_locate_request(daemon_type, None)))
        return [DaemonLocation.from_ad(ad, daemon_type) for ad in ads]

    def locate(self, daemon_type: DaemonType | str, name: str | None = None) -> DaemonLocation:
        """Find one daemon by name; without a name, the only daemon of that type in the pool."""
        daemon_type = DaemonType.from_name(daemon_type)
        if name is None:
            return _only(daemon_type, self.locate_all(daemon_type))
        ads = list(self._iterate(*_locate_request(daemon_type, name)))
        return _first(daemon_type, name, ads)

    def direct_query(
        self,
        daemon_type: DaemonType | str,
        name: str | None = None,
        projection: Iterable[str] | None = None,
        *,
        ad_type: AdType | str | None = None,
        constraint: str | None = None,
    ) -> ClassAd:
        """Locate a daemon, then ask it for its own ad directly (spec 05 §2.7)."""
        from cedar.commands.base import iterate_command

        daemon_type = DaemonType.from_name(daemon_type)
        location = self.locate(daemon_type, name)
        command, query_ad = _direct_request(daemon_type, ad_type, constraint, projection)
        ads = list(
            iterate_command(
                location.address,
                command,
                _query_body(query_ad),
                security=self.security,
                timeout=self.timeout,
            )
        )
        return _direct_result(daemon_type, location, ads)

    def advertise(
        self,
        ads: Iterable[ClassAd],
        command: Command | str | int = Command.UPDATE_AD_GENERIC,
    ) -> None:
        """Send ads with an UPDATE_* command over TCP to every collector of the pool.

        Raises if any collector could not be reached (after trying all of them).
        """
        ads = list(ads)
        cmd = _command(command)
        self._run_everywhere(cmd, lambda s: advertise_protocol(s, ads, cmd))

    def invalidate(
        self,
        ad_type: AdType | str,
        *,
        name: str | None = None,
        constraint: str | None = None,
        address: str | None = None,
        target_type: str | None = None,
    ) -> None:
        """Remove ads of a type from every collector, by name or by constraint."""
        command, ad = _invalidate_request(ad_type, constraint, name, address, target_type)
        self._run_everywhere(command, lambda s: invalidate_protocol(s, ad))


class AsyncCollector(_CollectorBase):
    """The Trio twin of :class:`Collector`: same methods, awaited."""

    async def _iterate(self, command: int, query_ad: ClassAd) -> AsyncIterator[ClassAd]:
        from cedar.commands.base import iterate_command_async

        attempts = self._failover()
        for attempt in attempts:
            with attempt:
                async for ad in iterate_command_async(
                    attempt.address,
                    command,
                    _query_body(query_ad),
                    security=self.security,
                    timeout=self.timeout,
                ):
                    attempt.emitted = True
                    yield ad
                return
        raise attempts.error()

    async def _run_everywhere(
        self, command: int, body: Callable[[CommandSession], Protocol[Any]]
    ) -> None:
        from cedar.commands.base import run_command_async

        attempts = self._every_collector()
        for attempt in attempts:
            with attempt:
                await run_command_async(
                    attempt.address, command, body, security=self.security, timeout=self.timeout
                )
        if attempts.errors:
            raise attempts.error()

    def query_iter(
        self,
        ad_type: AdType | str = AdType.ANY,
        constraint: str | None = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> AsyncIterator[ClassAd]:
        """Stream the matching ads (``async for``)."""
        return self._iterate(
            *_query_request(ad_type, constraint, projection, limit, statistics, target_type)
        )

    async def query(
        self,
        ad_type: AdType | str = AdType.ANY,
        constraint: str | None = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> list[ClassAd]:
        """The matching ads as a list."""
        stream = self.query_iter(
            ad_type, constraint, projection, limit, statistics=statistics, target_type=target_type
        )
        return [ad async for ad in stream]

    async def locate_all(self, daemon_type: DaemonType | str) -> list[DaemonLocation]:
        """Every daemon of a type, as locations."""
        daemon_type = DaemonType.from_name(daemon_type)
        ads = [ad async for ad in self._iterate(*_locate_request(daemon_type, None))]
        return [DaemonLocation.from_ad(ad, daemon_type) for ad in ads]

    async def locate(
        self, daemon_type: DaemonType | str, name: str | None = None
    ) -> DaemonLocation:
        """Find one daemon by name; without a name, the only daemon of that type in the pool."""
        daemon_type = DaemonType.from_name(daemon_type)
        if name is None:
            return _only(daemon_type, await self.locate_all(daemon_type))
        ads = [ad async for ad in self._iterate(*_locate_request(daemon_type, name))]
        return _first(daemon_type, name, ads)

    async def direct_query(
        self,
        daemon_type: DaemonType | str,
        name: str | None = None,
        projection: Iterable[str] | None = None,
        *,
        ad_type: AdType | str | None = None,
        constraint: str | None = None,
    ) -> ClassAd:
        """Locate a daemon, then ask it for its own ad directly (spec 05 §2.7)."""
        from cedar.commands.base import iterate_command_async

        daemon_type = DaemonType.from_name(daemon_type)
        location = await self.locate(daemon_type, name)
        command, query_ad = _direct_request(daemon_type, ad_type, constraint, projection)
        ads = [
            ad
            async for ad in iterate_command_async(
                location.address,
                command,
                _query_body(query_ad),
                security=self.security,
                timeout=self.timeout,
            )
        ]
        return _direct_result(daemon_type, location, ads)

    async def advertise(
        self,
        ads: Iterable[ClassAd],
        command: Command | str | int = Command.UPDATE_AD_GENERIC,
    ) -> None:
        """Send ads with an UPDATE_* command over TCP to every collector of the pool."""
        ads = list(ads)
        cmd = _command(command)
        await self._run_everywhere(cmd, lambda s: advertise_protocol(s, ads, cmd))

    async def invalidate(
        self,
        ad_type: AdType | str,
        *,
        name: str | None = None,
        constraint: str | None = None,
        address: str | None = None,
        target_type: str | None = None,
    ) -> None:
        """Remove ads of a type from every collector, by name or by constraint."""
        command, ad = _invalidate_request(ad_type, constraint, name, address, target_type)
        await self._run_everywhere(command, lambda s: invalidate_protocol(s, ad))


def locate_address(
    pool: str | Sequence[str] | None,
    daemon_type: DaemonType | str,
    name: str | None = None,
    *,
    security: ClientSecurity | None = None,
    timeout: float | None = None,
) -> str:
    """The sinful of a daemon located through the pool's collector (used by ``cedar-ping``).

    The collector itself needs no lookup: without a name it is the pool's first collector.
    """
    kind = DaemonType.from_name(daemon_type)
    if kind is DaemonType.COLLECTOR and name is None:
        return resolve_pool(pool)[0]
    return Collector(pool, security=security, timeout=timeout).locate(kind, name).address


def _command(command: Command | str | int) -> Command:
    if isinstance(command, str):
        try:
            return Command[command.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown command {command!r}") from None
    return Command(int(command))


def _invalidate_command(ad_type: AdType) -> Command:
    command = ad_type.invalidate_command
    if command is None:
        raise ValueError(f"ads of type {ad_type.name.lower()} cannot be invalidated")
    return command


def _first(daemon_type: DaemonType, name: str, ads: list[ClassAd]) -> DaemonLocation:
    if not ads:
        raise CommandError(
            f"no {daemon_type.name.lower()} named {name!r} is known to the collector"
        )
    return DaemonLocation.from_ad(ads[0], daemon_type)


def _only(daemon_type: DaemonType, found: list[DaemonLocation]) -> DaemonLocation:
    kind = daemon_type.name.lower()
    if not found:
        raise CommandError(f"the collector knows no {kind}")
    if len(found) > 1:
        local = _local_name(daemon_type)
        for location in found:
            if local is not None and location.name == local:
                return location
        names = ", ".join(sorted(str(loc.name) for loc in found))
        raise CommandError(f"the pool has {len(found)} {kind}s ({names}); name the one you mean")
    return found[0]


def _local_name(daemon_type: DaemonType) -> str | None:
    """``<SUBSYS>_HOST`` / ``<SUBSYS>_NAME`` from the configuration, when set (spec 06 §3.2)."""
    config = _config()
    if config is None:
        return None
    for knob in (f"{daemon_type.name}_HOST", f"{daemon_type.name}_NAME"):
        value = config.get(knob)
        if value:
            return str(value)
    return None


__all__ = [
    "LOCATE_PROJECTION",
    "AdType",
    "AsyncCollector",
    "Collector",
    "DaemonLocation",
    "DaemonType",
    "advertise_protocol",
    "build_query_ad",
    "constraint_requirements",
    "invalidate_protocol",
    "invalidation_ad",
    "locate_address",
    "locate_query_ad",
    "query_protocol",
    "read_address_file",
    "read_query_results",
    "resolve_pool",
    "split_pool",
]
