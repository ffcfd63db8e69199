"""The startd client: its history (GET_HISTORY, spec 08 §2.1, §5.3).

Records come from the startd itself (one per run on one of its slots), not from the schedd.
"""

from __future__ import annotations

from collections.abc import Iterable

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.commands._async.collector import AsyncCollector
from cedar.commands._async.command import AsyncDaemonClient
from cedar.commands._async.history import AsyncHistoryQuery
from cedar.commands.base import MAX_RESULTS, run_blocking_async
from cedar.commands.constraint import Constraint
from cedar.commands.history import history_request
from cedar.commands.startd import StartdLocation, local_startd, startd_address, unique_startd
from cedar.numbers import Command, DaemonType


class AsyncStartd(AsyncDaemonClient):
    """Client of one startd.

    ``AsyncStartd(location)`` takes an address, a
    :class:`~cedar.commands.collector.DaemonLocation` or the startd's (or one of its slots')
    ad; ``AsyncStartd(name=..., pool=...)`` asks the pool's collector (``name`` is a slot name
    or a machine); ``AsyncStartd()`` is the local startd (address files, then the only startd
    the collector knows).
    """

    def __init__(
        self,
        location: StartdLocation = None,
        *,
        name: str | None = None,
        pool: str | None = None,
        security: ClientSecurity | SecurityConfig | None = None,
        timeout: float | None = None,
        max_results: int = MAX_RESULTS,
    ) -> None:
        super().__init__(
            startd_address(location),
            name=name,
            pool=pool,
            security=security,
            timeout=timeout,
            max_results=max_results,
        )

    async def locate(self) -> str:
        """The startd's address, looking it up (once) when it was not given."""
        if self._address is None:
            address = None
            if self._name is None and self._pool is None:
                address = await run_blocking_async(local_startd)
            if address is None:
                collector = AsyncCollector(self._pool, security=self.security, timeout=self.timeout)
                if self._name is None:
                    found = await collector.locate_all(DaemonType.STARTD)
                else:
                    found = [await collector.locate(DaemonType.STARTD, self._name)]
                address = unique_startd(found, self._name)
            self._address = address
        return self._address

    def history(
        self,
        constraint: Constraint = None,
        projection: str | Iterable[str] = (),
        match: int = -1,
        since: int | str | None = None,
        *,
        completed_since: int | str | None = None,
        forwards: bool = False,
        scan_limit: int | None = None,
        record_types: str | Iterable[str] | None = None,
    ) -> AsyncHistoryQuery:
        """Stream the startd's own history (one record per run on a slot), newest first.

        Options as :meth:`AsyncSchedd.history`; the request carries
        ``HistoryRecordSource = "STARTD"`` (without it a startd reads its ``HISTORY`` knob,
        which on a shared configuration is the schedd's file; spec 08 §2.2).
        """
        request = history_request(
            constraint,
            projection,
            match,
            since,
            completed_since=completed_since,
            forwards=forwards,
            scan_limit=scan_limit,
            source="startd",
            record_types=record_types,
        )
        return AsyncHistoryQuery(self._iterate, Command.GET_HISTORY, request, "startd")
