"""The collector client: queries, locating daemons, advertising and invalidating ads.

What it sends and how it fails over are in :mod:`cedar.commands.collector`; this class only
runs those protocols, one command per call, each bounded by ``timeout`` (the whole call) and
``max_results``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, SecurityConfig, client_security
from cedar.classad_wire import ClassAd
from cedar.commands._async.command import iterate_command_async, run_command_async
from cedar.commands.base import MAX_RESULTS
from cedar.commands.collector import (
    Attempts,
    DaemonLocation,
    PoolState,
    advertise_protocol,
    collector_query,
    default_timeout,
    direct_request,
    direct_result,
    first_location,
    invalidate_protocol,
    invalidate_request,
    locate_request,
    only_location,
    query_body,
    resolve_pool,
    update_command,
)
from cedar.commands.constraint import Constraint
from cedar.numbers import AdType, Command, DaemonType
from cedar.stream.protocol import Protocol


class AsyncCollector:
    """Client of a pool's collector(s).

    ``AsyncCollector()`` uses ``COLLECTOR_HOST`` from the configuration;
    ``AsyncCollector("host:port")`` or ``AsyncCollector(["a", "b"])`` name the collectors.
    ``timeout`` bounds each call as a whole (default: ``QUERY_TIMEOUT`` of the configuration,
    else :data:`~cedar.commands.base.DEFAULT_TIMEOUT`); ``max_results`` bounds the ads one
    query accepts.
    """

    def __init__(
        self,
        pool: str | Sequence[str] | None = None,
        *,
        security: ClientSecurity | SecurityConfig | None = None,
        timeout: float | None = None,
        use_primary: bool = False,
        max_results: int = MAX_RESULTS,
    ) -> None:
        self._pool = PoolState(pool, use_primary=use_primary)
        self.security = client_security(security)
        self.timeout = default_timeout() if timeout is None else timeout
        self.max_results = max_results

    @property
    def addresses(self) -> list[str]:
        """The collectors of the pool."""
        return list(self._pool.addresses)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {', '.join(self._pool.addresses)}>"

    async def _iterate(self, command: int, query_ad: ClassAd) -> AsyncIterator[ClassAd]:
        """One query, failing over to the next collector while nothing was handed out."""
        attempts = Attempts(self._pool, failover=True)
        for attempt in attempts:
            with attempt:
                async for ad in iterate_command_async(
                    attempt.address,
                    command,
                    query_body(query_ad),
                    security=self.security,
                    timeout=self.timeout,
                    max_results=self.max_results,
                    pipeline_resume=True,
                ):
                    attempt.emitted = True
                    yield ad
                return
        raise attempts.error()

    async def _run_everywhere(
        self, command: int, body: Callable[[CommandSession], Protocol[object]]
    ) -> None:
        """One update command to every collector; raises if any of them failed."""
        attempts = Attempts(self._pool, failover=False)
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
        constraint: Constraint = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> AsyncIterator[ClassAd]:
        """Stream the matching ads one at a time, each decoded as its packets arrive (the
        collector sends all results in one message, spec 05 §2.4)."""
        return self._iterate(
            *collector_query(ad_type, constraint, projection, limit, statistics, target_type)
        )

    async def query(
        self,
        ad_type: AdType | str = AdType.ANY,
        constraint: Constraint = None,
        projection: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        statistics: str | None = None,
        target_type: str | None = None,
    ) -> list[ClassAd]:
        """The matching ads as a list (see :meth:`query_iter`)."""
        stream = self.query_iter(
            ad_type, constraint, projection, limit, statistics=statistics, target_type=target_type
        )
        return [ad async for ad in stream]

    async def locate_all(self, daemon_type: DaemonType | str) -> list[DaemonLocation]:
        """Every daemon of a type, as locations."""
        daemon_type = DaemonType.from_name(daemon_type)
        ads = [ad async for ad in self._iterate(*locate_request(daemon_type, None))]
        return [DaemonLocation.from_ad(ad, daemon_type) for ad in ads]

    async def locate(
        self, daemon_type: DaemonType | str, name: str | None = None
    ) -> DaemonLocation:
        """Find one daemon by name; without a name, the only daemon of that type in the pool."""
        daemon_type = DaemonType.from_name(daemon_type)
        if name is None:
            return only_location(daemon_type, await self.locate_all(daemon_type))
        ads = [ad async for ad in self._iterate(*locate_request(daemon_type, name))]
        return first_location(daemon_type, name, ads)

    async def direct_query(
        self,
        daemon_type: DaemonType | str,
        name: str | None = None,
        projection: Iterable[str] | None = None,
        *,
        ad_type: AdType | str | None = None,
        constraint: Constraint = None,
        statistics: str | None = None,
    ) -> ClassAd:
        """Locate a daemon, then ask it for its own ad directly (spec 05 §2.7); ``statistics``
        asks it to add its runtime statistics (``"All:2"``, as condor_top does)."""
        daemon_type = DaemonType.from_name(daemon_type)
        location = await self.locate(daemon_type, name)
        command, query_ad = direct_request(daemon_type, ad_type, constraint, projection, statistics)
        stream = iterate_command_async(
            location.address,
            command,
            query_body(query_ad),
            security=self.security,
            timeout=self.timeout,
            max_results=self.max_results,
            pipeline_resume=True,
        )
        return direct_result(daemon_type, location, [ad async for ad in stream])

    async def advertise(
        self,
        ads: Iterable[ClassAd],
        command: Command | str | int = Command.UPDATE_AD_GENERIC,
    ) -> None:
        """Send ads with an UPDATE_* command over TCP to every collector of the pool.

        Raises if any collector could not be reached (after trying all of them).
        """
        ad_list = list(ads)
        cmd = update_command(command)
        await self._run_everywhere(cmd, lambda s: advertise_protocol(s, ad_list, cmd))

    async def invalidate(
        self,
        ad_type: AdType | str,
        *,
        name: str | None = None,
        constraint: Constraint = None,
        address: str | None = None,
        target_type: str | None = None,
    ) -> None:
        """Remove ads of a type from every collector, by name or by constraint."""
        command, ad = invalidate_request(ad_type, constraint, name, address, target_type)
        await self._run_everywhere(command, lambda s: invalidate_protocol(s, ad))


async def locate_address_async(
    pool: str | Sequence[str] | None,
    daemon_type: DaemonType | str,
    name: str | None = None,
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float | None = None,
) -> str:
    """The sinful of a daemon located through the pool's collector (used by ``cedar-ping``).

    The collector itself needs no lookup: without a name it is the pool's first collector.
    """
    kind = DaemonType.from_name(daemon_type)
    if kind is DaemonType.COLLECTOR and name is None:
        return resolve_pool(pool)[0]
    collector = AsyncCollector(pool, security=security, timeout=timeout)
    location = await collector.locate(kind, name)
    return location.address
