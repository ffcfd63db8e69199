"""The mock collector's model: tables of ads by type, their keys and expiry, and the answer to a
query (constraint, projection, limits; spec 05 §2.3, §2.4 and §2.8).

No I/O and no daemon: :class:`cedar.daemons.collector.MockCollector` puts an :class:`AdStore`
behind its command handlers, the mock schedd answers its own queries with :class:`QueryAnswer`
and :func:`write_answer`, and replay fills a store from a capture.  The schedd's model is
:mod:`cedar.daemons.job_queue`, the same split.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import Budget, evaluate
from cedar.classad_wire.expr import Expr, Literal, fold
from cedar.classad_wire.wire import put_classad, references
from cedar.errors import CedarError, EvaluationBudgetExceeded
from cedar.numbers import Command
from cedar.stream.primitives import MessageWriter

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

#: Queries registered above READ: they return private attributes (spec 05 §2.1).
PRIVATE_QUERIES = frozenset((Command.QUERY_STARTD_PVT_ADS, Command.QUERY_MULTIPLE_PVT_ADS))
#: Tables whose key includes the daemon's address (spec 05 §2.8).
_ADDRESS_KEYED = frozenset((MACHINE, STARTD, SCHEDULER, SUBMITTER))


def str_attribute(ad: ClassAd, name: str) -> str | None:
    """``ad[name]`` if it evaluates to a string, else ``None`` (never raises)."""
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
    name = str_attribute(ad, "Name")
    if name is None and table in (MACHINE, STARTD, SCHEDULER, SUBMITTER, MASTER, COLLECTOR):
        machine = str_attribute(ad, "Machine")
        if machine is not None:
            slot = _int(ad, "SlotID") if table == MACHINE else None
            name = machine if slot is None else f"slot{slot}@{machine}"
    if name is None:
        return None
    if table in _ADDRESS_KEYED:
        address = str_attribute(ad, "MyAddress") or str_attribute(ad, "ScheddIpAddr")
        if address is None:
            return None
        if table == SUBMITTER:
            return (fold(name), fold(str_attribute(ad, "ScheddName") or ""), address)
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


def evaluate_or_none(
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
        my_type = str_attribute(ad, "MyType")
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
        target = str_attribute(request, "TargetType")
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
            name = str_attribute(request, "Name")
            if requirements is None and name is None:
                return 0
            for k, stored in list(ads.items()):
                if requirements is not None:
                    hit = is_match(evaluate_or_none(requirements, stored.ad, None, budget))
                else:
                    hit = fold(str_attribute(stored.ad, "Name") or "") == fold(name or "")
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
        target = (str_attribute(query, "TargetType") or "").strip()
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
                        evaluate_or_none(selection.requirements, ad, None, budget)
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
        value = (
            expr.value() if isinstance(expr, Literal) else evaluate_or_none(expr, query, ad, budget)
        )
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


__all__ = [
    "COLLECTOR",
    "DEFAULT_LIFETIME",
    "FIXED_TABLES",
    "MACHINE",
    "PRIVATE_QUERIES",
    "QUERY_TABLES",
    "STARTD",
    "SUBMITTER",
    "AdStore",
    "QueryAnswer",
    "StoredAd",
    "ad_key",
    "evaluate_or_none",
    "is_match",
    "str_attribute",
    "write_answer",
]
