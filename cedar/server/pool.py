"""A whole mock pool on one port: a mock collector and a mock schedd behind the shared-port
router, with FS + AES-GCM security by default (for tests, ``cedar demo`` and ``cedar pool``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import trio

from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.server.collector import MockCollector
from cedar.server.daemon import _serve_in_thread
from cedar.server.router import SharedPortRouter
from cedar.server.schedd import JobQueue, MockSchedd


def pool_policy(
    methods: list[str] | None = None, *, encryption: str = "REQUIRED", **kwargs: Any
) -> ServerPolicy:
    """A real pool's defaults (:func:`real_pool_policy`): authentication required except for
    READ, writes for authenticated identities, DAEMON/ADVERTISE_*/ADMINISTRATOR for the admins;
    FS (then CLAIMTOBE, for multi-user tests) with AES-GCM required at every level."""
    return real_pool_policy(methods or ["FS", "CLAIMTOBE"], encryption=encryption, **kwargs)


class MockPool:
    """Collector (the port's default target) + schedd (``sock=schedd``) on one port.

    The schedd's ad is put into the collector, so ``Collector.locate("schedd")`` and
    ``htcondor2.Collector().locate(DaemonTypes.Schedd)`` find it.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        policy: ServerPolicy | None = None,
        schedd_name: str = "mock-schedd",
        simulate: bool = False,
        tick: float = 1.0,
        run_time: float = 2.0,
        superusers: tuple[str, ...] = (),
    ) -> None:
        self.policy = policy or pool_policy()
        self.router = SharedPortRouter(host=host, port=port)
        self.collector = MockCollector("collector", policy=self.policy, host=host)
        self.schedd = MockSchedd(
            schedd_name,
            policy=self.policy,
            host=host,
            queue=JobQueue(name=schedd_name, run_time=run_time, superusers=superusers),
            simulate=simulate,
            tick=tick,
        )
        self.router.attach(self.collector, "collector", default=True)
        self.router.attach(self.schedd, "schedd")

    @property
    def address(self) -> str:
        """The collector's sinful (``COLLECTOR_HOST`` for clients)."""
        return self.collector.address

    @property
    def host_port(self) -> str:
        """``host:port`` of the shared port."""
        return f"{self.router.host}:{self.router.port}"

    @property
    def schedd_address(self) -> str:
        """The schedd's sinful (with ``sock=schedd``)."""
        return self.schedd.address

    def advertise(self) -> None:
        """Put (or refresh) the schedd's ad in the collector."""
        self.collector.store.add(self.schedd.schedd_ad(), "Scheduler")

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve everything until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.router.serve)
            # The daemons serve only connections the router hands them; their own
            # listeners are not needed, but the schedd's ticker is.
            if self.schedd.simulate:
                nursery.start_soon(self._tick)
            self.advertise()
            nursery.start_soon(self._advertise_loop)
            task_status.started(self)

    async def _tick(self) -> None:
        while True:
            await trio.sleep(self.schedd.tick)
            self.schedd.queue.step()

    async def _advertise_loop(self) -> None:
        while True:
            await trio.sleep(5)
            self.advertise()

    def stop(self) -> None:
        """Stop serving (callable from any thread)."""
        self.router.stop()

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[MockPool]:
        """Serve in a background thread for the duration of a ``with`` block."""
        scope: list[trio.CancelScope] = []
        token: list[trio.lowlevel.TrioToken] = []

        async def serve(*, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            with trio.CancelScope() as cancel:
                scope.append(cancel)
                token.append(trio.lowlevel.current_trio_token())
                await self.serve(task_status=task_status)

        def stop() -> None:
            if scope and token:
                with contextlib.suppress(RuntimeError, trio.RunFinishedError):
                    trio.from_thread.run_sync(scope[0].cancel, trio_token=token[0])

        with _serve_in_thread(serve, stop):
            yield self
