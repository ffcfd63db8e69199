"""The broker/target set-up the CCB server tests share: a broker, a target daemon registered
with it through :class:`CcbTarget`, served in one Trio run in a background thread."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import trio

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.daemons.ccb_target import CcbTarget
from cedar.daemons.collector import MockCollector
from cedar.daemons.daemon import Daemon
from cedar.daemons.testing import RecordingQueryHandler, slot_ad
from cedar.numbers import Command
from tests.robustness.helpers import plain_policy

#: Clients and targets authenticate with CLAIMTOBE in clear (replies are readable in failures).
SECURITY = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[]))


@dataclass
class CcbSetup:
    """What a test gets: the broker, the target daemon and its registrations."""

    broker: Daemon
    target_daemon: Daemon
    targets: list[CcbTarget]

    @property
    def address(self) -> str:
        """The target's published address (with ``CCBID``)."""
        return self.target_daemon.address


def target_daemon(name: str = "target") -> Daemon:
    """A daemon that answers startd queries with one slot ad (what a requester asks for)."""
    daemon = Daemon(name, "STARTD", policy=plain_policy())
    daemon.register(Command.QUERY_STARTD_ADS, RecordingQueryHandler([slot_ad()]))
    return daemon


@contextlib.contextmanager
def ccb_setup(
    broker: Daemon | None = None,
    *,
    targets: int = 1,
    wait_registered: bool = True,
    **target_options: float,
) -> Iterator[CcbSetup]:
    """``broker`` (default: a :class:`MockCollector`) and ``targets`` daemons registered with it,
    running until the block ends; the block starts once each has registered (when asked)."""
    broker = broker or MockCollector(policy=plain_policy())
    daemons = [target_daemon(f"target{n}") for n in range(targets)]
    registrations: list[CcbTarget] = []
    ready = threading.Event()
    failure: list[BaseException] = []
    token: list[trio.lowlevel.TrioToken] = []
    scope = trio.CancelScope()

    async def main() -> None:
        with scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(broker.serve)
                for daemon in daemons:
                    await nursery.start(daemon.serve)
                    target_options.setdefault("reconnect", 0.2)
                    target = CcbTarget(daemon, broker.address, security=SECURITY, **target_options)
                    registrations.append(target)
                    nursery.start_soon(target.run)
                    if wait_registered:
                        with trio.fail_after(30):
                            await target.registered.wait()
                token.append(trio.lowlevel.current_trio_token())
                ready.set()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # reported below
            failure.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(60)
    if failure:
        raise failure[0]
    try:
        yield CcbSetup(broker, daemons[0], registrations)
    finally:
        if token:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(scope.cancel, trio_token=token[0])
        thread.join(30)
