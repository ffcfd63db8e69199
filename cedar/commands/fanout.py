"""The same query against many daemons at once (Trio), one result per daemon.

A pool-wide question ("every schedd's own ad", "the slots of these 50 startds") is a direct
query to each daemon (spec 05 §2.7).  :func:`query_all_async` runs them concurrently with a
bounded number in flight and never lets one daemon's failure end the batch: each
:class:`DaemonResult` carries either the ads or the :class:`~cedar.errors.CedarError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, SecurityConfig, client_security
from cedar.classad_wire import ClassAd
from cedar.commands._async.command import iterate_command_async
from cedar.commands.base import DEFAULT_TIMEOUT, MAX_RESULTS, AsyncHook
from cedar.commands.collector import DaemonLocation, build_query_ad, query_protocol
from cedar.errors import CedarError, InvalidArgument
from cedar.numbers import AdType
from cedar.stream.protocol import Protocol

if TYPE_CHECKING:
    import trio  # imported where used: the sync API never needs Trio (start-up time)

#: Connections open at once unless the caller says otherwise.
DEFAULT_CONCURRENCY = 32

Target = str | ClassAd | DaemonLocation


@dataclass
class DaemonResult:
    """The outcome for one daemon: its ads, or the error that stopped its query."""

    address: str
    ads: list[ClassAd] = field(default_factory=list)
    error: CedarError | None = None

    @property
    def ok(self) -> bool:
        """True when the daemon answered."""
        return self.error is None


def target_address(target: Target) -> str:
    """The address of a target: a sinful/``host:port``, a location, or an ad's ``MyAddress``."""
    if isinstance(target, DaemonLocation):
        return target.address
    if isinstance(target, ClassAd):
        address = target.get("MyAddress")
        if not isinstance(address, str):
            raise InvalidArgument(f"ad {target.get('Name')!r} has no MyAddress to query")
        return address
    return target


class _Leader:
    """The query that makes the session to one daemon, as the others see it."""

    def __init__(self) -> None:
        import trio

        #: Set once its connection is open (its first message leaves before anyone else runs).
        self.connected = trio.Event()
        #: Set once the session exists (or the leader failed).
        self.session = trio.Event()

    async def started(self) -> None:
        """The leader's ``connected`` hook."""
        self.connected.set()


async def query_all_async(
    targets: Iterable[Target],
    ad_type: AdType | str = AdType.SCHEDD,
    constraint: str | None = None,
    projection: Iterable[str] | None = None,
    limit: int | None = None,
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    concurrency: int = DEFAULT_CONCURRENCY,
    target_type: str | None = None,
    max_results: int = MAX_RESULTS,
) -> list[DaemonResult]:
    """Query every target concurrently; results come back in the order of ``targets``.

    Per-daemon errors (refused connections, timeouts, closed connections, bad addresses) are
    reported in the results.  Anything that is not a :class:`CedarError` is a bug and raises.
    ``timeout`` and ``max_results`` bound each daemon's call.
    """
    import trio

    if concurrency < 1:
        raise InvalidArgument("concurrency must be at least 1")
    security = client_security(security)
    kind = AdType.from_name(ad_type)
    query_ad = build_query_ad(kind, constraint, projection, limit, target_type=target_type)
    results: list[DaemonResult] = []
    for target in targets:
        try:
            results.append(DaemonResult(target_address(target)))
        except InvalidArgument as exc:
            results.append(DaemonResult(str(target), error=exc))
    limiter = trio.CapacityLimiter(concurrency)
    # Several queries to one daemon: the first one (the leader) makes the security session,
    # the others resume it as soon as it exists.  A daemon authenticates one connection at a
    # time, so parallel full handshakes to it queue up there (measured: 50 at once through a
    # 20 ms link took 13 s).  While they wait, the others already hold their connections open
    # (opened once the leader's first message is out, so they never delay it), leaving only
    # the resumption itself (one write) for when the session exists.
    leaders: dict[str, _Leader] = {}

    async def one(result: DaemonResult) -> None:
        leader = leaders.get(result.address)
        if leader is None:
            leader = leaders[result.address] = _Leader()
            try:
                async with limiter:
                    await _query(result, session_ready=leader.session, connected=leader.started)
            finally:  # also when it failed: the others then try on their own
                leader.connected.set()
                leader.session.set()
            return
        await leader.connected.wait()
        if not leader.session.is_set() and limiter.available_tokens > 1:
            # Connect now, holding a slot; one slot always stays for a leader to take.
            limiter.acquire_nowait()
            try:
                await _query(result, connected=leader.session.wait)
            finally:
                limiter.release()
        else:
            await leader.session.wait()
            async with limiter:
                await _query(result)

    async def _query(
        result: DaemonResult,
        *,
        session_ready: trio.Event | None = None,
        connected: AsyncHook | None = None,
    ) -> None:
        def body(session: CommandSession) -> Protocol[int]:
            if session_ready is not None:
                session_ready.set()  # the session exists: the others may resume it now
            return query_protocol(session, query_ad)

        try:
            async for ad in iterate_command_async(
                result.address,
                kind.command,
                body,
                security=security,
                timeout=timeout,
                max_results=max_results,
                pipeline_resume=True,
                connected=connected,
            ):
                result.ads.append(ad)
        except InvalidArgument as exc:  # an unparsable address
            result.error = InvalidArgument(f"bad address {result.address!r}: {exc}")
        except CedarError as exc:
            result.error = exc
            result.ads.clear()

    async with trio.open_nursery() as nursery:
        for result in results:
            if result.error is None:
                nursery.start_soon(one, result)
    return results


def query_all(
    targets: Sequence[Target],
    ad_type: AdType | str = AdType.SCHEDD,
    constraint: str | None = None,
    projection: Iterable[str] | None = None,
    limit: int | None = None,
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    concurrency: int = DEFAULT_CONCURRENCY,
    target_type: str | None = None,
    max_results: int = MAX_RESULTS,
) -> list[DaemonResult]:
    """:func:`query_all_async` from blocking code (runs its own Trio loop: the concurrency is
    the point, so there is no one-at-a-time twin)."""
    import trio

    return trio.run(
        lambda: query_all_async(
            targets,
            ad_type,
            constraint,
            projection,
            limit,
            security=security,
            timeout=timeout,
            concurrency=concurrency,
            target_type=target_type,
            max_results=max_results,
        )
    )


__all__ = ["DEFAULT_CONCURRENCY", "DaemonResult", "query_all", "query_all_async", "target_address"]
