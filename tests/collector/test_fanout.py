"""One query against 50 daemons at once, with failures reported per daemon."""

from __future__ import annotations

import socket

import trio

from cedar.auth.client import ClientSecurity, SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.commands import query_all, query_all_async
from cedar.commands.collector import DaemonLocation
from cedar.errors import CedarConnectionError
from cedar.numbers import AdType
from cedar.server.collector import MockCollector

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
