"""A mock collector: stores advertised ads and answers queries the way a 25.x collector does.

The model, :class:`AdStore` (tables, keys, expiry, constraint/projection/limit, spec 05 §2.3
and §2.8, and ``QUERY_TABLES``), is :mod:`cedar.daemons.ad_store`; here :class:`MockCollector`
puts it behind the command handlers of a :class:`cedar.daemons.daemon.Daemon`, registering every
query, update and invalidate command (``QUERY_TABLES``, ``UPDATES``, ``INVALIDATES``) at the
permission level the reference registers it at (spec 05 §2.1).  Like the real collector it
never answers a bad query with an error: it closes the connection (spec 05 §2.5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import partial

from cedar.auth.methods import UNAUTHENTICATED_USER
from cedar.auth.policy import Requirement
from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.expr import fold
from cedar.classad_wire.wire import get_classad
from cedar.daemons.ad_store import (
    ACCOUNTING,
    COLLECTOR,
    DEFAULT_LIFETIME,
    GRID,
    HAD,
    LICENSE,
    MACHINE,
    MASTER,
    NEGOTIATOR,
    PRIVATE_QUERIES,
    QUERY_TABLES,
    SCHEDULER,
    STORAGE,
    SUBMITTER,
    AdStore,
    QueryAnswer,
    StoredAd,
    ad_key,
    evaluate_or_none,
    is_match,
    str_attribute,
    write_answer,
)
from cedar.daemons.ccb_broker import BrokerLimits, CcbBroker
from cedar.daemons.daemon import CommandRequest, Daemon, decode, offload, strict_ad
from cedar.errors import CedarError, EvaluationBudgetExceeded
from cedar.numbers import Command
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger(__name__)

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
    Like the real one it is a CCB broker (spec 09 §6, :class:`CcbBroker`, ``self.ccb``) unless
    ``ccb`` is false (``ENABLE_CCB_SERVER = false``).
    """

    def __init__(
        self,
        name: str = "mock-collector",
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        store: AdStore | None = None,
        ccb: bool = True,
        ccb_limits: BrokerLimits | None = None,
        ccb_reconnect_file: str | None = None,
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
        self.ccb: CcbBroker | None = None
        if ccb:
            self.ccb = CcbBroker(self, limits=ccb_limits, reconnect_file=ccb_reconnect_file)
            self.ccb.register_on(self)

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
        if self.ccb is not None:
            for name, value in self.ccb.ad_attributes().items():
                ad[name] = value
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
            query = yield from decode(reader, strict_ad)
        except CedarError as exc:
            log.info("%s: unreadable query (%s); closing", self.name, exc)
            return
        private = False
        if (
            query.get_expr("SendPrivateAttributes") is not None
            and evaluate_or_none(query.lookup("SendPrivateAttributes"), query, None) is True
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
                applied = yield from self._apply(request, command, reader)
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
            ad = yield from decode(reader, strict_ad)
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

    def _apply(
        self, request: CommandRequest, command: int, reader: MessageReader
    ) -> Protocol[bool]:
        """Store what one update carries; ``False`` closes the connection."""
        try:
            ad, private = yield from decode(reader, partial(read_update, command))
        except CedarError as exc:
            log.info("%s: unreadable update (%s); closing", self.name, exc)
            return False
        if command == Command.UPDATE_OWN_SUBMITTOR_AD and not self._may(request, "DAEMON"):
            owner = fold(str_attribute(ad, "Name") or "")
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
