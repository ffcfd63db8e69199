"""Collector client: queries, locating daemons, advertising and invalidating ads (spec 05 §2).

The wire work is in protocol coroutines (:func:`query_protocol`, :func:`advertise_protocol`,
:func:`invalidate_protocol`) that run after :func:`cedar.auth.start_command`, so the same code
serves :class:`Collector` (blocking) and :class:`AsyncCollector` (Trio) and is tested against
recorded bytes.  A pool can list several collectors: queries try them in random order and fail
over on any communication error, as the reference client does (spec 06 §3.1); updates go to
every collector.

This module does no I/O.  The clients are written once in :mod:`cedar.commands._async.collector`
(``AsyncCollector``; ``Collector`` is generated from it) and exported by :mod:`cedar.commands`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from cedar.auth.client import CommandSession
from cedar.auth.version import parse_version
from cedar.classad_wire import ClassAd, put_classad
from cedar.classad_wire.constraints import parse_constraint
from cedar.classad_wire.expr import Expr, Literal, Paren
from cedar.classad_wire.wire import get_flagged_classads
from cedar.commands.base import DEFAULT_TIMEOUT
from cedar.commands.constraint import Constraint
from cedar.config import Config, default_config
from cedar.errors import (
    CedarConnectionError,
    CedarError,
    CommandError,
    ConfigError,
    InvalidArgument,
    ProtocolError,
    SecurityError,
)
from cedar.numbers import AdType, Command, DaemonType
from cedar.record import Record
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Emit, Protocol, Receive, Send, StreamedMessage

T = TypeVar("T")

DEFAULT_COLLECTOR_PORT = 9618
#: What both reference clients ask for when locating a daemon (spec 05 §2.6).
LOCATE_PROJECTION = ("MyAddress", "AddressV1", "CondorVersion", "CondorPlatform", "Name", "Machine")


class DaemonLocation(Record, frozen=True, hidden=("ad",), uncompared=("ad",)):
    """Where a daemon is: its sinful address and version, as read from its location ad (the
    ad itself is neither shown nor compared)."""

    __slots__ = ("address", "version", "name", "machine", "platform", "ad")
    address: str
    version: str | None
    name: str | None
    machine: str | None
    platform: str | None
    ad: ClassAd

    def __init__(
        self,
        address: str,
        version: str | None,
        name: str | None,
        machine: str | None,
        platform: str | None,
        ad: ClassAd,
    ) -> None:
        self._set(address, version, name, machine, platform, ad)

    @classmethod
    def from_ad(cls, ad: ClassAd, daemon_type: DaemonType | None = None) -> DaemonLocation:
        """Read a location ad; ``<Subsys>IpAddr`` wins over ``MyAddress`` (spec 05 §2.6)."""
        address = None
        if daemon_type is not None:
            address = ad.get_string(f"{daemon_type.name.capitalize()}IpAddr")
        address = address or ad.get_string("MyAddress")
        if not address:
            raise CommandError(
                f"the location ad of {ad.get_string('Name') or 'the daemon'} has no MyAddress"
            )
        return cls(
            address=address,
            version=ad.get_string("CondorVersion"),
            name=ad.get_string("Name"),
            machine=ad.get_string("Machine"),
            platform=ad.get_string("CondorPlatform"),
            ad=ad,
        )


def daemon_address(location: str | DaemonLocation | ClassAd | None, kind: DaemonType) -> str | None:
    """The address in what a user passed as a daemon's location: an address (sinful or
    ``host:port``), a :class:`DaemonLocation`, or the daemon's ad (None: look it up)."""
    if location is None:
        return None
    if isinstance(location, DaemonLocation):
        return location.address
    name = kind.name.lower()
    if isinstance(location, ClassAd):
        try:
            return DaemonLocation.from_ad(location, kind).address
        except CommandError:
            raise InvalidArgument(
                f"the ad of {location.get_string('Name') or 'the ' + name} has no "
                f"{name.capitalize()}IpAddr/MyAddress"
            ) from None
    if isinstance(location, str) and location.strip():
        return location.strip()
    raise InvalidArgument(
        f"a {name} location is an address, a DaemonLocation or an ad, not {location!r}"
    )


# -- building requests --------------------------------------------------------------------------


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def constraint_requirements(constraint: Constraint) -> Expr:
    """The ``Requirements`` for a user constraint: ``((X))``, or ``true`` without one.

    Text is parsed here, once, by the one constraint rule (a tree passes unchanged), so a typo
    fails (:class:`~cedar.errors.ClassAdParseError` naming it) instead of making the collector
    drop the connection (spec 05 §2.5).
    """
    if constraint is not None and not isinstance(constraint, (str, Expr)):
        constraint = str(constraint)  # a foreign expression type is read as its text
    tree = parse_constraint(constraint)
    if tree is None:
        return Literal(True)
    return Paren(Paren(tree))


def build_query_ad(
    ad_type: AdType,
    constraint: Constraint = None,
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
    requirements = constraint_requirements(constraint)
    if ad_type.value.requirements or not isinstance(requirements, Literal):
        ad.set_expr("Requirements", requirements)
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
            raise InvalidArgument(f"projection entry {name!r} is not an attribute name")
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
    constraint: Constraint = None,
    name: str | None = None,
    address: str | None = None,
    target_type: str | None = None,
) -> ClassAd:
    """An INVALIDATE_* request: by key (``Name`` [+ ``MyAddress``]) or by constraint (§2.8)."""
    if constraint is None and name is None:
        raise InvalidArgument("an invalidation needs a name or a constraint")
    ad = ClassAd()
    ad["MyType"] = "Query"
    ad["TargetType"] = target_type or ad_type.target_type
    if name is not None:
        ad["Name"] = name
        if address is not None:
            ad["MyAddress"] = address
    if constraint is not None:
        ad.set_expr("Requirements", constraint_requirements(constraint))
    return ad


# -- protocols ----------------------------------------------------------------------------------


def read_query_results(stream: StreamedMessage) -> Protocol[int]:
    """Emit the ads of a result message ``I(1) AD ... I(0)`` (spec 05 §2.4); return the count.

    The message holds the whole answer (any size); ads are decoded as its packets arrive and
    emitted a packet's worth at a time, so memory holds one piece of the reply at a time.
    """
    count = 0
    ended = False
    while not ended:
        ads, ended = yield from stream.read_batch(get_flagged_classads)
        if ads:
            yield Emit(ads, many=True)
            count += len(ads)
    yield from stream.end_of_message()
    return count


def query_protocol(session: CommandSession, query_ad: ClassAd) -> Protocol[int]:
    """Client payload of every QUERY_* command: the query ad, then the result stream."""
    writer = session.payload_writer()
    put_classad(writer, query_ad)
    yield Send(writer)
    stream = StreamedMessage()
    try:
        ads, ended = yield from stream.read_batch(get_flagged_classads)
    except CedarConnectionError as exc:
        raise type(exc)(
            f"{exc}; the daemon dropped the query without answering (it does that for a "
            "malformed query, an unknown ad type or a refused authorization)"
        ) from exc
    if ads:
        yield Emit(ads, many=True)
    if ended:
        yield from stream.end_of_message()
        return len(ads)
    return len(ads) + (yield from read_query_results(stream))


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
        if name.lower().endswith("ipaddr") and ad.get_string(name):
            return ad.get_string(name)
    return ad.get_string("MyAddress")


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


def _config() -> Config:
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
            raise InvalidArgument("empty pool: give at least one collector address")
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
        raise InvalidArgument(f"bad port in collector address {entry!r}") from None


def default_timeout() -> float:
    try:
        return float(_config().query_timeout())
    except (CedarError, ValueError, TypeError):
        return DEFAULT_TIMEOUT


class PoolState:
    """The collectors of a pool and the ones that failed recently ("blacklisted")."""

    def __init__(self, pool: str | Sequence[str] | None, *, use_primary: bool) -> None:
        self.addresses = resolve_pool(pool)
        self.use_primary = use_primary
        self.failed: set[str] = set()

    def order(self) -> list[str]:
        """Try order: random (first if ``use_primary``), recently failed ones last."""
        order = list(self.addresses)
        if not self.use_primary and len(order) > 1:
            import random  # several collectors only (a start-up import)

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
    return isinstance(exc, (CedarConnectionError, ProtocolError, SecurityError))


class Attempts:
    """The collectors one call tries, in order; ``with attempt:`` records how each one did.

    The policy lives here once so that the blocking and the Trio client only differ by their
    ``await``.  A query (``failover=True``) tries the pool's order: a communication failure is
    recorded and swallowed, so the caller's loop moves on to the next collector, unless results
    were already handed out (``attempt.emitted``); any other error propagates.  An update
    (``failover=False``) goes to every collector and swallows every :class:`CedarError`;
    :meth:`error` then describes them all.
    """

    def __init__(self, pool: PoolState, *, failover: bool) -> None:
        self._pool = pool
        self._failover = failover
        self.errors: list[tuple[str, CedarError]] = []

    def __iter__(self) -> Iterator[Attempt]:
        addresses = self._pool.order() if self._failover else self._pool.addresses
        return (Attempt(self, address) for address in addresses)

    def _finished(self, attempt: Attempt, exc: BaseException | None) -> bool:
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


class Attempt:
    """One collector of :class:`Attempts`; a context manager that may swallow its error."""

    def __init__(self, attempts: Attempts, address: str) -> None:
        self.address = address
        #: Set once a result reached the caller: failing over then would repeat results.
        self.emitted = False
        self._attempts = attempts

    def __enter__(self) -> Attempt:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> bool:
        return self._attempts._finished(self, exc)


# -- what the clients (cedar.commands._async.collector) send and make of the answers -------------


def query_body(query_ad: ClassAd) -> Callable[[CommandSession], Protocol[int]]:
    """The body of a query command (:func:`query_protocol` with ``query_ad``)."""
    return lambda session: query_protocol(session, query_ad)


def collector_query(
    ad_type: AdType | str,
    constraint: Constraint,
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


def locate_request(daemon_type: DaemonType, name: str | None) -> tuple[Command, ClassAd]:
    """The command and query ad that locate ``name`` (every daemon of the type for None)."""
    return daemon_type.ad_type.command, locate_query_ad(daemon_type, name)


def direct_request(
    daemon_type: DaemonType,
    ad_type: AdType | str | None,
    constraint: Constraint,
    projection: Iterable[str] | None,
    statistics: str | None = None,
) -> tuple[Command, ClassAd]:
    """What ``direct_query`` asks the located daemon: its own ad type unless told otherwise
    (``statistics``: the daemon adds its runtime statistics at that level, e.g. ``"All:2"``)."""
    kind = AdType.from_name(ad_type) if ad_type is not None else daemon_type.ad_type
    return kind.command, build_query_ad(kind, constraint, projection, statistics=statistics)


def direct_result(daemon_type: DaemonType, location: DaemonLocation, ads: list[ClassAd]) -> ClassAd:
    if not ads:
        raise CommandError(f"{daemon_type.name.lower()} at {location.address} sent no ad")
    return ads[0]


def invalidate_request(
    ad_type: AdType | str,
    constraint: Constraint,
    name: str | None,
    address: str | None,
    target_type: str | None,
) -> tuple[Command, ClassAd]:
    """The INVALIDATE_* command and ad of ``invalidate``."""
    kind = AdType.from_name(ad_type)
    command = _invalidate_command(kind)
    ad = invalidation_ad(
        kind, constraint=constraint, name=name, address=address, target_type=target_type
    )
    return command, ad


def update_command(command: Command | str | int) -> Command:
    """A command given by enum, name or number."""
    try:
        if isinstance(command, str):
            return Command[command.strip().upper()]
        return Command(int(command))
    except (KeyError, ValueError):
        raise InvalidArgument(f"unknown command {command!r}") from None


def _invalidate_command(ad_type: AdType) -> Command:
    command = ad_type.invalidate_command
    if command is None:
        raise InvalidArgument(f"ads of type {ad_type.name.lower()} cannot be invalidated")
    return command


def first_location(daemon_type: DaemonType, name: str, ads: list[ClassAd]) -> DaemonLocation:
    """The location of ``name`` from a locate answer."""
    if not ads:
        raise CommandError(
            f"no {daemon_type.name.lower()} named {name!r} is known to the collector"
        )
    return DaemonLocation.from_ad(ads[0], daemon_type)


def only_location(daemon_type: DaemonType, found: list[DaemonLocation]) -> DaemonLocation:
    """The one daemon of a type (or the local one, by ``<SUBSYS>_HOST``/``_NAME``)."""
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
    "DaemonLocation",
    "DaemonType",
    "advertise_protocol",
    "build_query_ad",
    "constraint_requirements",
    "daemon_address",
    "invalidate_protocol",
    "invalidation_ad",
    "locate_query_ad",
    "query_protocol",
    "read_address_file",
    "read_query_results",
    "resolve_pool",
    "split_pool",
]
