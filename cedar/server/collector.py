"""A mock collector: stores advertised ads and answers queries the way a 25.x collector does.

One module because it is one daemon: :class:`AdStore` and the :class:`MockCollector` handlers are
both driven by the command tables at its top (``QUERY_TABLES``, ``UPDATES``, ``INVALIDATES``).

:class:`AdStore` is the pure part (tables, keys, expiry, constraint/projection/limit, spec 05
§2.3 and §2.8); :class:`MockCollector` puts it behind the command handlers of a
:class:`cedar.server.daemon.Daemon`, registering every query, update and invalidate command at
the permission level the reference registers it at (spec 05 §2.1).  Like the real collector it
never answers a bad query with an error: it closes the connection (spec 05 §2.5).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cedar.auth.methods import UNAUTHENTICATED_USER
from cedar.auth.policy import Requirement
from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import Budget, evaluate
from cedar.classad_wire.expr import Expr, Literal, fold
from cedar.classad_wire.wire import get_classad, put_classad, references
from cedar.errors import CedarError, EvaluationBudgetExceeded
from cedar.numbers import Command
from cedar.server.daemon import CommandRequest, Daemon, offload
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger(__name__)

#: ``CLASSAD_LIFETIME`` default: seconds an ad lives without a new update.
DEFAULT_LIFETIME = 900

# Fixed tables, named by the TargetType that selects them.  The order is QUERY_ANY_ADS's (§2.4).
ACCOUNTING = "Accounting"
COLLECTOR = "Collector"
STARTD = "StartD"
MACHINE = "Machine"
SCHEDULER = "Scheduler"
MASTER = "DaemonMaster"
SUBMITTER = "Submitter"
NEGOTIATOR = "Negotiator"
LICENSE = "License"
STORAGE = "Storage"
HAD = "HAD"
GRID = "Grid"
FIXED_TABLES = (
    ACCOUNTING, COLLECTOR, STARTD, MACHINE, SCHEDULER, MASTER, SUBMITTER, NEGOTIATOR,
    LICENSE, STORAGE, HAD, GRID,
)  # fmt: skip
_FIXED_BY_FOLD = {fold(name): name for name in FIXED_TABLES}

#: Query command -> table (None: chosen from the query's TargetType).
QUERY_TABLES: dict[Command, str | None] = {
    Command.QUERY_STARTD_ADS: MACHINE,
    Command.QUERY_STARTD_PVT_ADS: MACHINE,
    Command.QUERY_SCHEDD_ADS: SCHEDULER,
    Command.QUERY_MASTER_ADS: MASTER,
    Command.QUERY_SUBMITTOR_ADS: SUBMITTER,
    Command.QUERY_COLLECTOR_ADS: COLLECTOR,
    Command.QUERY_LICENSE_ADS: LICENSE,
    Command.QUERY_STORAGE_ADS: STORAGE,
    Command.QUERY_ANY_ADS: None,
    Command.QUERY_NEGOTIATOR_ADS: NEGOTIATOR,
    Command.QUERY_MULTIPLE_ADS: None,
    Command.QUERY_MULTIPLE_PVT_ADS: None,
    Command.QUERY_HAD_ADS: HAD,
    Command.QUERY_GRID_ADS: GRID,
    Command.QUERY_GENERIC_ADS: None,
    Command.QUERY_ACCOUNTING_ADS: ACCOUNTING,
}

#: Update command -> (table, permission level) (spec 05 §2.1); None = table from ``MyType``.
UPDATES: dict[Command, tuple[str | None, str]] = {
    Command.UPDATE_STARTD_AD: (MACHINE, "ADVERTISE_STARTD"),
    Command.UPDATE_STARTD_AD_WITH_ACK: (MACHINE, "ADVERTISE_STARTD"),
    Command.UPDATE_SCHEDD_AD: (SCHEDULER, "ADVERTISE_SCHEDD"),
    Command.UPDATE_MASTER_AD: (MASTER, "ADVERTISE_MASTER"),
    Command.UPDATE_SUBMITTOR_AD: (SUBMITTER, "ADVERTISE_SCHEDD"),
    Command.UPDATE_OWN_SUBMITTOR_AD: (SUBMITTER, "DAEMON"),
    Command.UPDATE_COLLECTOR_AD: (COLLECTOR, "DAEMON"),
    Command.UPDATE_LICENSE_AD: (LICENSE, "DAEMON"),
    Command.UPDATE_STORAGE_AD: (STORAGE, "DAEMON"),
    Command.UPDATE_NEGOTIATOR_AD: (NEGOTIATOR, "NEGOTIATOR"),
    Command.UPDATE_HAD_AD: (HAD, "DAEMON"),
    Command.UPDATE_AD_GENERIC: (None, "DAEMON"),
    Command.UPDATE_GRID_AD: (GRID, "DAEMON"),
    Command.MERGE_STARTD_AD: (MACHINE, "NEGOTIATOR"),
    Command.UPDATE_ACCOUNTING_AD: (ACCOUNTING, "NEGOTIATOR"),
}

INVALIDATES: dict[Command, tuple[str | None, str]] = {
    Command.INVALIDATE_STARTD_ADS: (MACHINE, "ADVERTISE_STARTD"),
    Command.INVALIDATE_SCHEDD_ADS: (SCHEDULER, "ADVERTISE_SCHEDD"),
    Command.INVALIDATE_MASTER_ADS: (MASTER, "ADVERTISE_MASTER"),
    Command.INVALIDATE_SUBMITTOR_ADS: (SUBMITTER, "ADVERTISE_SCHEDD"),
    Command.INVALIDATE_COLLECTOR_ADS: (COLLECTOR, "DAEMON"),
    Command.INVALIDATE_LICENSE_ADS: (LICENSE, "DAEMON"),
    Command.INVALIDATE_STORAGE_ADS: (STORAGE, "DAEMON"),
    Command.INVALIDATE_NEGOTIATOR_ADS: (NEGOTIATOR, "NEGOTIATOR"),
    Command.INVALIDATE_HAD_ADS: (HAD, "DAEMON"),
    Command.INVALIDATE_ADS_GENERIC: (None, "DAEMON"),
    Command.INVALIDATE_GRID_ADS: (GRID, "DAEMON"),
    Command.INVALIDATE_ACCOUNTING_ADS: (ACCOUNTING, "NEGOTIATOR"),
}

#: Queries registered above READ: they return private attributes (spec 05 §2.1).
PRIVATE_QUERIES = frozenset((Command.QUERY_STARTD_PVT_ADS, Command.QUERY_MULTIPLE_PVT_ADS))
#: Tables whose key includes the daemon's address (spec 05 §2.8).
_ADDRESS_KEYED = frozenset((MACHINE, STARTD, SCHEDULER, SUBMITTER))


def _str(ad: ClassAd, name: str) -> str | None:
    try:
        value = ad.get(name)
    except CedarError:
        return None
    return value if isinstance(value, str) else None


def _int(ad: ClassAd, name: str) -> int | None:
    try:
        value = ad.get(name)
    except CedarError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def ad_key(table: str, ad: ClassAd) -> tuple[str, ...] | None:
    """The hash key of an ad in a table, ``None`` if the ad lacks the key attributes (§2.8)."""
    name = _str(ad, "Name")
    if name is None and table in (MACHINE, STARTD, SCHEDULER, SUBMITTER, MASTER, COLLECTOR):
        machine = _str(ad, "Machine")
        if machine is not None:
            slot = _int(ad, "SlotID") if table == MACHINE else None
            name = machine if slot is None else f"slot{slot}@{machine}"
    if name is None:
        return None
    if table in _ADDRESS_KEYED:
        address = _str(ad, "MyAddress") or _str(ad, "ScheddIpAddr")
        if address is None:
            return None
        if table == SUBMITTER:
            return (fold(name), fold(_str(ad, "ScheddName") or ""), address)
        return (fold(name), address)
    return (fold(name),)


def _is_absent(ad: ClassAd) -> bool:
    try:
        return ad.get("Absent") is True
    except CedarError:
        return False


@dataclass
class StoredAd:
    """One ad in a table, with the private ad that came with it (startd updates)."""

    ad: ClassAd
    private: ClassAd | None = None
    advertiser: str | None = None


def is_match(value: Any) -> bool:
    """A constraint matches on true or a non-zero number only (``"yes"`` does not, §2.3)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    return False


def _evaluate(
    expr: Expr, my: ClassAd | None, target: ClassAd | None, budget: Budget | None = None
) -> Any:
    """The value, or ``None`` on error; a spent ``budget`` raises EvaluationBudgetExceeded."""
    try:
        return evaluate(expr, my, target, budget=budget)
    except EvaluationBudgetExceeded:
        raise
    except CedarError:
        return None


@dataclass
class _Selection:
    """How one table is searched for a query."""

    table: str | None  # None: every generic table
    requirements: Expr | None
    projection: Expr | None
    limit: int | None


@dataclass
class QueryAnswer:
    """What to send for one query: each result ad with its projection."""

    results: list[tuple[ClassAd, list[str] | None]] = field(default_factory=list)
    private: bool = False


#: Longest a query waits for earlier writes still running in worker threads (seconds).
WRITE_WAIT = 30.0


class AdStore:
    """Tables of ads by type with expiry; answers queries as the collector does.

    Thread-safe (a lock), so a test thread may add ads while the daemon thread serves queries.
    ``clock`` supplies "now" (Unix seconds) and can be replaced to test expiry.  Bounded:
    ``max_ads`` in total, ``max_ads_per_advertiser`` per authenticated identity (or peer host),
    ``max_generic_types`` distinct generic MyTypes; an update past a bound is refused (queries
    never create tables).
    """

    def __init__(
        self,
        *,
        lifetime: int = DEFAULT_LIFETIME,
        clock: Callable[[], float] = time.time,
        absent_requirements: bool = False,
        max_ads: int = 100_000,
        max_ads_per_advertiser: int = 10_000,
        max_generic_types: int = 1_000,
    ) -> None:
        self.lifetime = lifetime
        self.clock = clock
        self.absent_requirements = absent_requirements
        self.max_ads = max_ads
        self.max_ads_per_advertiser = max_ads_per_advertiser
        self.max_generic_types = max_generic_types
        self._count = 0
        self._by_advertiser: dict[str, int] = {}
        self._tables: dict[str, dict[tuple[str, ...], StoredAd]] = {}
        self._generic_names: dict[str, str] = {}
        self._lock = threading.RLock()
        # Writes that run in worker threads (see :meth:`write_in_order`): queries wait for
        # the ones that arrived before them, as a single-threaded collector would.
        self._pending_writes = 0
        self._writes_done = threading.Condition()
        self._serial = itertools.count()
        self.own_ad: ClassAd | None = None

    # -- tables ----------------------------------------------------------------------------
    def table_name(self, name: str) -> str:
        """The canonical table for a TargetType/MyType (fixed names, else a generic table).

        Looking up never creates a table: only :meth:`_register_table` (an update) does.
        """
        key = fold(name)
        fixed = _FIXED_BY_FOLD.get(key)
        if fixed is not None:
            return fixed
        with self._lock:
            return self._generic_names.get(key, name)

    def _register_table(self, name: str) -> str | None:
        """The table an update of MyType ``name`` goes to; ``None`` past max_generic_types."""
        key = fold(name)
        fixed = _FIXED_BY_FOLD.get(key)
        if fixed is not None:
            return fixed
        with self._lock:
            if key not in self._generic_names:
                if len(self._generic_names) >= self.max_generic_types:
                    return None
                self._generic_names[key] = name
            return self._generic_names[key]

    def _forget(self, ads: dict[tuple[str, ...], StoredAd], key: tuple[str, ...]) -> None:
        """Remove one stored ad and its counts (caller holds the lock)."""
        stored = ads.pop(key)
        self._count -= 1
        if stored.advertiser is not None:
            left = self._by_advertiser.get(stored.advertiser, 1) - 1
            if left > 0:
                self._by_advertiser[stored.advertiser] = left
            else:
                self._by_advertiser.pop(stored.advertiser, None)

    def _room_for(self, advertiser: str | None) -> str | None:
        """Why one more ad may not be stored (caller holds the lock), or ``None``."""
        if self._count >= self.max_ads:
            return f"the collector holds max_ads ({self.max_ads}) ads"
        if (
            advertiser is not None
            and self._by_advertiser.get(advertiser, 0) >= self.max_ads_per_advertiser
        ):
            return f"{advertiser} advertises max_ads_per_advertiser ({self.max_ads_per_advertiser})"
        return None

    def generic_tables(self) -> list[str]:
        """Names of the generic (MyType-named) tables that hold ads."""
        with self._lock:
            return [t for t in self._tables if t not in FIXED_TABLES]

    def _table_for_update(self, table: str | None, ad: ClassAd) -> str | None:
        my_type = _str(ad, "MyType")
        if table is None:
            return self._register_table(my_type) if my_type else None
        if table == MACHINE and my_type is not None and fold(my_type) == "startd":
            return STARTD
        return table

    # -- updates ---------------------------------------------------------------------------
    def update(
        self,
        table: str | None,
        ad: ClassAd,
        private: ClassAd | None = None,
        *,
        identity: tuple[str, str] | None = None,
        merge: bool = False,
        advertiser: str | None = None,
    ) -> bool:
        """Store (or replace) an ad; ``False`` when it lacks its key attributes or a bound
        (``max_ads``, ``max_ads_per_advertiser``, ``max_generic_types``) refuses it.

        ``table`` None means "the table named by ``MyType``" (UPDATE_AD_GENERIC).  The store
        sets ``LastHeardFrom`` unless the ad has it, and ``AuthenticatedIdentity`` /
        ``AuthenticationMethod`` from ``identity`` as the collector does.
        """
        name = self._table_for_update(table, ad)
        if name is None:
            return False
        key = ad_key(name, ad)
        if key is None:
            return False
        ad = ad.copy()
        if "LastHeardFrom" not in ad:
            ad["LastHeardFrom"] = int(self.clock())
        if identity is not None:
            ad["AuthenticatedIdentity"], ad["AuthenticationMethod"] = identity
        with self._lock:
            table_ads = self._tables.setdefault(name, {})
            if merge:
                existing = table_ads.get(key)
                if existing is None:
                    return False
                for attr in ad:
                    existing.ad.set_expr(ad.spelling(attr), ad.lookup(attr))
                return True
            if key in table_ads:
                self._forget(table_ads, key)
            refused = self._room_for(advertiser)
            if refused is not None:
                log.info("update refused: %s", refused)
                return False
            table_ads[key] = StoredAd(ad, private, advertiser)
            self._count += 1
            if advertiser is not None:
                self._by_advertiser[advertiser] = self._by_advertiser.get(advertiser, 0) + 1
        return True

    def add(self, ad: ClassAd | dict[str, Any], table: str | None = None) -> None:
        """Convenience for tests: store an ad in ``table`` (default: from its ``MyType``).

        An ad without its table's key attributes (e.g. a projected query result replayed from a
        capture) is kept as given under a key of its own: only updates need real keys.
        """
        if not isinstance(ad, ClassAd):
            ad = ClassAd(ad)
        name = self._table_for_update(table and self.table_name(table), ad)
        if name is None:
            raise ValueError(f"ad has no MyType and no table was given: {ad}")
        if ad_key(name, ad) is not None:
            self.update(name, ad)
            return
        with self._lock:
            self._count += 1
            self._tables.setdefault(name, {})[("#unkeyed", str(next(self._serial)))] = StoredAd(
                ad.copy()
            )

    def begin_write(self) -> Callable[[], None]:
        """Register a write now, in arrival order; call the returned ``done`` (idempotent)
        when it finished or will never run.

        Queries answered meanwhile first wait (up to :data:`WRITE_WAIT` seconds) for every
        write registered before them, so moving a costly write to a worker thread does not
        reorder it against a client's next query.
        """
        with self._writes_done:
            self._pending_writes += 1
        finished = threading.Event()

        def done() -> None:
            with self._writes_done:
                if not finished.is_set():
                    finished.set()
                    self._pending_writes -= 1
                    self._writes_done.notify_all()

        return done

    def _wait_for_writes(self) -> None:
        with self._writes_done:
            self._writes_done.wait_for(lambda: self._pending_writes == 0, timeout=WRITE_WAIT)

    def invalidate(self, table: str | None, request: ClassAd, budget: Budget | None = None) -> int:
        """Remove ads by key or by ``Requirements`` (spec 05 §2.8); return how many went."""
        target = _str(request, "TargetType")
        if table is None:
            if not target:
                return 0
            table = self.table_name(target)
        elif table == MACHINE and target and fold(target) == "startd":
            table = STARTD
        removed = 0
        with self._lock:
            ads = self._tables.get(table, {})
            key = ad_key(table, request)
            if key is not None and key in ads:
                self._forget(ads, key)
                return 1
            requirements = request.get_expr("Requirements")
            name = _str(request, "Name")
            if requirements is None and name is None:
                return 0
            for k, stored in list(ads.items()):
                if requirements is not None:
                    hit = is_match(_evaluate(requirements, stored.ad, None, budget))
                else:
                    hit = fold(_str(stored.ad, "Name") or "") == fold(name or "")
                if hit:
                    self._forget(ads, k)
                    removed += 1
        return removed

    # -- queries ---------------------------------------------------------------------------
    def _expired(self, stored: StoredAd, now: float) -> bool:
        heard = _int(stored.ad, "LastHeardFrom")
        lifetime = _int(stored.ad, "ClassAdLifetime") or self.lifetime
        return heard is not None and now - heard > lifetime

    def ads(self, table: str) -> list[StoredAd]:
        """The live ads of a table (expired ones are dropped on the way)."""
        now = self.clock()
        with self._lock:
            ads = self._tables.get(table, {})
            for key in [k for k, s in ads.items() if self._expired(s, now)]:
                self._forget(ads, key)
            result = list(ads.values())
        if table == COLLECTOR and self.own_ad is not None:
            result.insert(0, StoredAd(self.own_ad))
        return result

    def _selections(self, command: int, query: ClassAd) -> list[_Selection] | None:
        """Which tables a query searches, with what; ``None`` = refuse (close, §2.5)."""
        requirements = query.get_expr("Requirements")
        projection = query.get_expr("Projection")
        target = (_str(query, "TargetType") or "").strip()
        if command in (Command.QUERY_MULTIPLE_ADS, Command.QUERY_MULTIPLE_PVT_ADS):
            names = [n.strip() for n in target.split(",") if n.strip()]
            if not names or fold(names[0]) not in _FIXED_BY_FOLD and not self._known(names[0]):
                return None
            selections = []
            for name in names:
                table = self.table_name(name)
                if table == MACHINE and fold(name) == "startd":
                    table = STARTD
                selections.append(
                    _Selection(
                        table,
                        query.get_expr(f"{name}Requirements") or requirements,
                        query.get_expr(f"{name}Projection") or projection,
                        _int(query, f"{name}LimitResults"),
                    )
                )
            return selections
        if command == Command.QUERY_GENERIC_ADS:
            if not target:
                return None
            generic = None if fold(target) == "generic" else self.table_name(target)
            return [_Selection(generic, requirements, projection, None)]
        if command == Command.QUERY_ANY_ADS:
            tables: list[str | None] = [*FIXED_TABLES, None]
            return [_Selection(t, requirements, projection, None) for t in tables]
        if command not in QUERY_TABLES:
            return None
        fixed = QUERY_TABLES[Command(command)]
        if command == Command.QUERY_STARTD_ADS and fold(target) == "startd":
            fixed = STARTD
        return [_Selection(fixed, requirements, projection, None)]

    def _known(self, name: str) -> bool:
        with self._lock:
            return fold(name) in self._generic_names

    def answer(
        self,
        command: int,
        query: ClassAd,
        *,
        private: bool = False,
        budget: Budget | None = None,
    ) -> QueryAnswer | None:
        """The ads a query returns, in order, with the projection of each (``None`` = close).

        ``private`` says the client may see private attributes (NEGOTIATOR/ADMINISTRATOR and
        ``SendPrivateAttributes``, or a private query command).  Every evaluation is charged
        to ``budget``; :class:`EvaluationBudgetExceeded` when it runs out.
        """
        self._wait_for_writes()
        selections = self._selections(command, query)
        if selections is None:
            return None
        limit = _int(query, "LimitResults")
        limit = limit if limit is not None and limit > 0 else None
        answer = QueryAnswer(private=private or command in PRIVATE_QUERIES)
        for selection in selections:
            tables = [selection.table] if selection.table else self.generic_tables()
            wants_absent = selection.requirements is not None and "absent" in references(
                selection.requirements
            )
            found = 0
            for table in tables:
                for stored in self.ads(table):
                    if limit is not None and len(answer.results) >= limit:
                        return answer
                    if selection.limit is not None and 0 < selection.limit <= found:
                        break
                    ad = stored.ad
                    if command in PRIVATE_QUERIES and stored.private is not None:
                        ad = ad.copy()
                        for attr in stored.private:
                            ad.set_expr(stored.private.spelling(attr), stored.private.lookup(attr))
                    if self.absent_requirements and not wants_absent and _is_absent(ad):
                        continue
                    if selection.requirements is not None and not is_match(
                        _evaluate(selection.requirements, ad, None, budget)
                    ):
                        continue
                    names = self._projection(selection.projection, query, ad, budget)
                    answer.results.append((ad, names))
                    found += 1
        return answer

    @staticmethod
    def _projection(
        expr: Expr | None, query: ClassAd, ad: ClassAd, budget: Budget | None = None
    ) -> list[str] | None:
        """Projection names; a non-literal is evaluated per candidate as a string (§2.2)."""
        if expr is None:
            return None
        value = expr.value() if isinstance(expr, Literal) else _evaluate(expr, query, ad, budget)
        if not isinstance(value, str):
            return None
        names = value.replace(",", " ").split()
        return names or None


def write_answer(writer: MessageWriter, answer: QueryAnswer) -> MessageWriter:
    """The result stream ``I(1) AD ... I(0)`` (spec 05 §2.4)."""
    for ad, projection in answer.results:
        writer.put_int(1)
        put_classad(writer, ad, projection=projection, exclude_private=not answer.private)
    writer.put_int(0)
    return writer


def read_update(command: int, reader: MessageReader) -> tuple[ClassAd, ClassAd | None]:
    """The ad(s) of an UPDATE_*: startd updates may carry the private ad after the public one."""
    ad = get_classad(reader, strict=True)
    private = None
    if command in (Command.UPDATE_STARTD_AD, Command.UPDATE_STARTD_AD_WITH_ACK) and (
        not reader.at_end()
    ):
        private = get_classad(reader, strict=True)
    return ad, private


def iter_commands() -> Iterator[tuple[Command, str]]:
    """Every command the mock collector serves, with its permission level."""
    for command in QUERY_TABLES:
        yield command, "NEGOTIATOR" if command in PRIVATE_QUERIES else "READ"
    for table in (UPDATES, INVALIDATES):
        for command, (_t, level) in table.items():
            yield command, level


class MockCollector(Daemon):
    """A collector for tests and local pools: stores ads, answers queries, takes updates.

    Every query/update/invalidate command is registered at the reference's level (spec 05 §2.1),
    so the :class:`ServerPolicy` decides who may advertise.  Several updates and
    invalidations may follow each other on one connection until DC_NOP or close (§2.8).
    ``store`` is the :class:`AdStore`; tests fill it directly with :meth:`AdStore.add`.
    """

    def __init__(
        self,
        name: str = "mock-collector",
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        store: AdStore | None = None,
    ) -> None:
        super().__init__(
            name, "COLLECTOR", policy=policy or real_pool_policy(), host=host, port=port
        )
        self.store = store or AdStore()
        #: ``Machine`` of the collector's own ad (a host name in a pool; default ``host``).
        self.machine: str | None = None
        for command, level in iter_commands():
            if command in UPDATES or command in INVALIDATES:
                if command == Command.UPDATE_OWN_SUBMITTOR_AD:
                    level = "ALLOW"  # the handler checks DAEMON or "own ad" itself
                self.register(command, self._handle_updates, permission=level)
            else:
                self.register(command, self._handle_query, permission=level)

    def own_ad(self) -> ClassAd | None:
        """The collector's own ad, returned by collector and "any" queries.

        ``None`` while the collector has no address (driven in memory, e.g. replaying a
        capture): an ad without ``MyAddress`` would advertise nothing reachable.
        """
        try:
            address = self.address
        except RuntimeError:
            return None
        ad = ClassAd()
        ad["MyType"] = "Collector"
        ad["Name"] = self.name
        ad["Machine"] = self.machine or self.host
        ad["MyAddress"] = address
        ad["CondorVersion"] = CEDAR_VERSION_STRING
        ad["CondorPlatform"] = CEDAR_PLATFORM_STRING
        ad["LastHeardFrom"] = int(self.store.clock())
        ad["MyCurrentTime"] = int(self.store.clock())
        return ad

    def _may(self, request: CommandRequest, level: str) -> bool:
        """Whether the peer of ``request`` holds ``level`` (for later commands on a connection)."""
        if level == "ALLOW":
            return True
        if not request.authenticated:
            resolved = self.policy.resolve(level)
            if Requirement.REQUIRED in (resolved.authentication, resolved.negotiation):
                return False
        peer = request.peer[0] if request.peer else None
        return self.policy.is_authorized(request.user or UNAUTHENTICATED_USER, peer, level)

    def _handle_query(self, request: CommandRequest) -> Protocol[None]:
        """Any QUERY_*: answer ``I(1) AD ... I(0)``; on bad input close without reply (§2.5)."""
        reader = yield from request.read_payload()
        try:
            query = get_classad(reader, strict=True)
        except CedarError as exc:
            log.info("%s: unreadable query (%s); closing", self.name, exc)
            return
        private = False
        if (
            query.get_expr("SendPrivateAttributes") is not None
            and _evaluate(query.lookup("SendPrivateAttributes"), query, None) is True
        ):
            private = self._may(request, "NEGOTIATOR") or self._may(request, "ADMINISTRATOR")
        self.store.own_ad = self.own_ad()
        try:
            answer = yield from offload(
                lambda: self.store.answer(
                    request.command, query, private=private, budget=request.budget
                )
            )
        except EvaluationBudgetExceeded as exc:
            # The query protocol has no error reply (§2.4): close without the terminator.
            log.info("%s: query %d refused: %s; closing", self.name, request.command, exc)
            return
        if answer is None:
            log.info(
                "%s: query %d refused (no usable TargetType); closing", self.name, request.command
            )
            return
        yield Send(write_answer(request.writer(), answer))

    def _handle_updates(self, request: CommandRequest) -> Protocol[None]:
        """UPDATE_*/INVALIDATE_*, then further ones on the same connection until DC_NOP/EOF."""
        command = request.command
        reader = yield from request.read_payload()
        while True:
            if command in INVALIDATES:
                applied = yield from self._invalidate(request, command, reader)
            else:
                applied = self._apply(request, command, reader)
            if not applied:
                return
            if command == Command.UPDATE_STARTD_AD_WITH_ACK:
                yield Send(request.writer().put_int(1))
            try:
                reader = yield Receive()
                command = reader.get_int()
            except CedarError:
                return  # the peer closed (or went quiet): that ends the conversation
            if command == Command.DC_NOP:
                return
            level = self._level(command)
            if level is None or not self._may(request, level):
                log.info(
                    "%s: command %d on an update connection refused; closing", self.name, command
                )
                return

    def _level(self, command: int) -> str | None:
        for table in (UPDATES, INVALIDATES):
            if command in table:
                return table[Command(command)][1]
        return None

    def _invalidate(
        self, request: CommandRequest, command: int, reader: MessageReader
    ) -> Protocol[bool]:
        """Remove ads; one by key at once, by ``Requirements`` off the event loop (it may cost).

        ``False`` closes the connection (unreadable, or over the request's budget).
        """
        try:
            ad = get_classad(reader, strict=True)
        except CedarError as exc:
            log.info("%s: unreadable invalidation (%s); closing", self.name, exc)
            return False
        remove = partial(self.store.invalidate, INVALIDATES[Command(command)][0], ad)
        try:
            if "Requirements" in ad:
                done = self.store.begin_write()

                def scan() -> int:
                    try:
                        return remove(request.budget)
                    finally:
                        done()

                try:
                    removed = yield from offload(scan)
                finally:
                    done()  # also when the connection ended before the scan ran
            else:
                removed = remove()
        except EvaluationBudgetExceeded as exc:
            log.info("%s: invalidation refused: %s; closing", self.name, exc)
            return False
        log.debug("%s: invalidation removed %d ad(s)", self.name, removed)
        return True

    def _apply(self, request: CommandRequest, command: int, reader: MessageReader) -> bool:
        """Store what one update carries; ``False`` closes the connection."""
        try:
            ad, private = read_update(command, reader)
        except CedarError as exc:
            log.info("%s: unreadable update (%s); closing", self.name, exc)
            return False
        if command == Command.UPDATE_OWN_SUBMITTOR_AD and not self._may(request, "DAEMON"):
            owner = fold(_str(ad, "Name") or "")
            if not request.authenticated or owner != fold(request.user or ""):
                log.info("%s: %s may not advertise submitter %r", self.name, request.user, owner)
                return False
        identity = None
        if request.authenticated and request.user:
            identity = (request.user, request.method or "")
        table = UPDATES[Command(command)][0]
        advertiser = request.user if request.authenticated else None
        if advertiser is None:
            advertiser = request.peer[0] if request.peer else "unknown"
        stored = self.store.update(
            table,
            ad,
            private,
            identity=identity,
            merge=command == Command.MERGE_STARTD_AD,
            advertiser=advertiser,
        )
        if not stored:
            log.info(
                "%s: update %d without its key attributes dropped; closing", self.name, command
            )
        return stored


__all__ = [
    "DEFAULT_LIFETIME",
    "AdStore",
    "MockCollector",
    "QueryAnswer",
    "StoredAd",
    "ad_key",
    "is_match",
    "read_update",
    "write_answer",
]
