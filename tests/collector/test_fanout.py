"""One query against 50 daemons at once, with failures reported per daemon."""

from __future__ import annotations

import functools
import socket

import trio

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.commands import query_all, query_all_async
from cedar.commands.collector import DaemonLocation
from cedar.daemons.collector import MockCollector
from cedar.errors import CedarConnectionError
from cedar.numbers import AdType

RAW = ClientSecurity(SecurityConfig(negotiation="NEVER"))
FS = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_fanout_against_50_daemons() -> None:
    async def main() -> None:
        daemons = [MockCollector(f"schedd{i}") for i in range(50)]
        async with trio.open_nursery() as nursery:
            for index, daemon in enumerate(daemons):
                await nursery.start(daemon.serve)
                daemon.store.add(
                    {"MyType": "Scheduler", "Name": f"schedd{index}",
                     "MyAddress": daemon.address, "TotalRunningJobs": index}
                )  # fmt: skip
            dead = f"127.0.0.1:{_dead_port()}"
            ad_target = ClassAd({"Name": "schedd7", "MyAddress": daemons[7].address})
            targets: list[str | ClassAd | DaemonLocation] = [d.address for d in daemons]
            targets += [dead, ad_target, ClassAd({"Name": "no-address"}), "<bad"]
            results = await query_all_async(
                targets, AdType.SCHEDD, "TotalRunningJobs >= 0", ["Name", "TotalRunningJobs"],
                security=FS, timeout=10, concurrency=16,
            )  # fmt: skip
            nursery.cancel_scope.cancel()
        assert len(results) == 54
        for index, result in enumerate(results[:50]):
            assert result.ok, result.error
            assert [dict(ad) for ad in result.ads] == [
                {"Name": f"schedd{index}", "TotalRunningJobs": index}
            ]
        assert not results[50].ok and isinstance(results[50].error, CedarConnectionError)
        assert results[51].ok and results[51].ads[0]["Name"] == "schedd7"
        assert not results[52].ok and "MyAddress" in str(results[52].error)
        assert not results[53].ok and "bad address" in str(results[53].error)

    trio.run(main)


def test_blocking_wrapper_and_constraints() -> None:
    daemon = MockCollector("one")
    with daemon.run_in_thread():
        daemon.store.add({"MyType": "Scheduler", "Name": "a", "MyAddress": daemon.address})
        (hit,) = query_all([daemon.address], "schedd", 'Name == "a"', security=RAW)
        (miss,) = query_all([daemon.address], "schedd", 'Name == "b"', security=RAW)
    assert hit.ok and [ad["Name"] for ad in hit.ads] == ["a"]
    assert miss.ok and miss.ads == []


def _scheduler_daemon() -> MockCollector:
    daemon = MockCollector("one")
    daemon.store.add({"MyType": "Scheduler", "Name": "a", "MyAddress": "<127.0.0.1:1>"})
    return daemon


def _fan_out_to_one_daemon(queries: int, concurrency: int) -> tuple[list[bool], dict[str, int]]:
    daemon = _scheduler_daemon()
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))

    async def main() -> list[bool]:
        async with trio.open_nursery() as nursery:
            await nursery.start(daemon.serve)
            results = await query_all_async(
                [daemon.address] * queries, AdType.SCHEDD, security=security,
                timeout=10, concurrency=concurrency,
            )  # fmt: skip
            nursery.cancel_scope.cancel()
        return [r.ok and [ad["Name"] for ad in r.ads] == ["a"] for r in results]

    return trio.run(main), daemon.stats


def test_queries_to_one_daemon_share_one_session_at_any_concurrency() -> None:
    # The first query makes the session; the others (already connected, when a slot allows)
    # resume it.  Concurrency 1 and 2 leave no slot to hold: nothing may deadlock.
    for concurrency in (1, 2, 5, 20):
        oks, stats = _fan_out_to_one_daemon(20, concurrency)
        assert all(oks) and len(oks) == 20, concurrency
        assert stats["new_sessions"] == 1 and stats["resumed_sessions"] == 19, (concurrency, stats)


def test_a_connection_held_too_long_is_replaced(monkeypatch) -> None:
    import cedar.commands._async.command as command

    monkeypatch.setattr(command, "HELD_CONNECTION_MAX", -1.0)  # every held one is "too old"
    oks, stats = _fan_out_to_one_daemon(10, 12)  # slots for all: the 9 waiters connect early
    assert all(oks) and stats["new_sessions"] == 1
    assert stats["connections"] == 10 + 10  # each (leader included) dropped its first one


def test_preconnected_queries_report_their_own_errors() -> None:
    # A daemon that accepts and hangs up at once: the leader fails, the waiters (connected
    # meanwhile) fail on their own, and the healthy daemon in the same batch still answers.
    async def main() -> None:
        async def hang_up(stream: trio.SocketStream) -> None:
            await stream.aclose()

        daemon = _scheduler_daemon()
        async with trio.open_nursery() as nursery:
            (listener,) = await nursery.start(
                functools.partial(trio.serve_tcp, hang_up, 0, host="127.0.0.1")
            )
            await nursery.start(daemon.serve)
            rude = f"127.0.0.1:{listener.socket.getsockname()[1]}"
            results = await query_all_async(
                [rude] * 6 + [daemon.address] * 4, AdType.SCHEDD, security=FS, timeout=10,
                concurrency=10,
            )  # fmt: skip
            nursery.cancel_scope.cancel()
        assert [r.ok for r in results] == [False] * 6 + [True] * 4
        for result in results[:6]:
            assert result.address == rude and result.ads == []
            assert "closed" in str(result.error).lower(), result.error

    trio.run(main)
