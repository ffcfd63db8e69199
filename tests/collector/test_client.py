"""Our Collector / AsyncCollector against the mock collector: the same calls, sync and async."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.auth.server_policy import ServerPolicy
from cedar.classad_wire import ClassAd
from cedar.commands import AsyncCollector, Collector
from cedar.commands.collector import resolve_pool, split_pool
from cedar.daemons.collector import MockCollector
from cedar.errors import (
    CedarConnectionError,
    ClassAdParseError,
    CommandError,
    ConfigError,
    PermissionDenied,
)
from cedar.numbers import AdType, Command, DaemonType
from tests.loopback import serving

from .pool import host_port, new_store

RAW = ClientSecurity(SecurityConfig(negotiation="NEVER"))
FS = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))


def names(ads: list[ClassAd]) -> list[str]:
    return sorted(str(ad["Name"]) for ad in ads)


@pytest.fixture
def dead_address() -> str:
    """A local port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


@pytest.mark.parametrize("security", [RAW, FS], ids=["raw", "fs"])
def test_sync_queries(mock: MockCollector, security: ClientSecurity) -> None:
    c = Collector(host_port(mock), security=security, timeout=10)
    slots = c.query(AdType.SLOT, "SlotID >= 2", ["Name", "Memory"])
    assert names(slots) == ["slot2@vm", "slot3@vm", "slot4@vm"]
    assert all(sorted(ad) == ["Memory", "Name"] for ad in slots)
    assert len(c.query("slots", limit=2)) == 2
    assert names(c.query(AdType.SCHEDD)) == ["vm"]
    assert names(c.query(AdType.SUBMITTER)) == ["testuser@minicondor"]
    assert names(c.query(AdType.COLLECTOR)) == ["minicondor@vm", "mock@test"]
    assert len(c.query()) == 10  # ANY
    assert c.query(AdType.ACCOUNTING) == []
    stream = c.query_iter(AdType.SLOT, projection=["Name"])
    assert next(stream)["Name"].startswith("slot")
    stream.close()


def test_constraint_is_checked_before_sending(mock: MockCollector) -> None:
    with pytest.raises(ClassAdParseError):
        Collector(host_port(mock), security=RAW).query(AdType.SLOT, "Memory >")


def test_locate(mock: MockCollector) -> None:
    c = Collector(host_port(mock), security=RAW)
    schedd = c.locate(DaemonType.SCHEDD, "vm")
    assert "sock=schedd_7324_5fc6" in schedd.address
    assert schedd.version and schedd.version.startswith("$CondorVersion: 25.13.2")
    assert c.locate("schedd").name == "vm"  # the only schedd
    assert c.locate(DaemonType.STARTD, "slot3@vm").name == "slot3@vm"
    assert c.locate(DaemonType.STARTD, "vm").machine == "vm"  # by host: Machine ==
    assert [loc.name for loc in c.locate_all(DaemonType.MASTER)] == ["vm"]
    assert len(c.locate_all(DaemonType.STARTD)) == 4
    with pytest.raises(CommandError, match="no schedd named 'nosuch'"):
        c.locate(DaemonType.SCHEDD, "nosuch")
    with pytest.raises(CommandError, match="4 startds"):
        c.locate(DaemonType.STARTD)
    with pytest.raises(CommandError, match="knows no credd"):
        c.locate(DaemonType.CREDD)


def test_advertise_invalidate_and_direct_query(fresh_mock: MockCollector) -> None:
    c = Collector(host_port(fresh_mock), security=FS)
    probes = [ClassAd({"MyType": "SpecProbe", "Name": f"probe{i}", "Seq": i}) for i in (1, 2, 3)]
    c.advertise(probes)  # three updates on one connection, then DC_NOP
    found = c.query(AdType.GENERIC, "Seq >= 2", target_type="SpecProbe")
    assert names(found) == ["probe2", "probe3"]
    assert all(ad["AuthenticationMethod"] == "FS" for ad in found)
    c.invalidate(AdType.GENERIC, name="probe2", target_type="SpecProbe")
    c.invalidate(AdType.GENERIC, constraint="Seq == 3", target_type="SpecProbe")
    assert names(c.query(AdType.GENERIC)) == ["probe1"]

    schedd = MockCollector("direct")
    with schedd.run_in_thread():
        ad = ClassAd({"MyType": "Scheduler", "Name": "direct", "MyAddress": schedd.address})
        c.advertise([ad], Command.UPDATE_SCHEDD_AD)
        schedd.store.add({"MyType": "Scheduler", "Name": "direct", "MyAddress": schedd.address,
                          "TotalRunningJobs": 3})  # fmt: skip
        answer = c.direct_query(DaemonType.SCHEDD, "direct", ["Name", "TotalRunningJobs"])
    assert dict(answer) == {"Name": "direct", "TotalRunningJobs": 3}

    ack = ClassAd({"MyType": "Machine", "Name": "acked@h", "MyAddress": "<1.2.3.4:5>"})
    c.advertise([ack], "UPDATE_STARTD_AD_WITH_ACK")
    assert names(c.query(AdType.SLOT, 'Name == "acked@h"')) == ["acked@h"]


def test_update_permission_levels() -> None:
    policy = ServerPolicy(allow={"READ": ["*"], "ADVERTISE_SCHEDD": ["nobody@nowhere"]})
    collector = MockCollector("strict", policy=policy, store=new_store())
    with collector.run_in_thread():
        c = Collector(host_port(collector), security=FS)
        assert names(c.query(AdType.SCHEDD)) == ["vm"]  # READ is open
        ad = ClassAd({"MyType": "Scheduler", "Name": "intruder", "MyAddress": "<1:1>"})
        with pytest.raises(PermissionDenied, match="DENIED"):
            c.advertise([ad], Command.UPDATE_SCHEDD_AD)
        with pytest.raises(PermissionDenied):
            c.advertise([ClassAd({"MyType": "X", "Name": "y"})])  # DAEMON: nobody
        assert names(c.query(AdType.SCHEDD)) == ["vm"]
        assert c.query(AdType.GENERIC) == []


def test_failover_to_a_live_collector(mock: MockCollector, dead_address: str) -> None:
    pool = f"{dead_address}, {host_port(mock)}"
    for _ in range(4):  # random order: each run must end at the live one
        c = Collector(pool, security=RAW, timeout=5)
        assert names(c.query(AdType.SCHEDD)) == ["vm"]
    c = Collector([dead_address, host_port(mock)], security=RAW, use_primary=True, timeout=5)
    assert names(c.query(AdType.SCHEDD)) == ["vm"]
    assert c.query(AdType.SCHEDD)  # the failed one is tried last now
    assert c._pool.order()[-1] == dead_address


def test_failover_when_a_collector_drops_the_query(mock: MockCollector) -> None:
    """A collector that accepts and closes (what a refusing collector does) is skipped."""

    def drop(conn: socket.socket, stop: threading.Event) -> None:
        conn.recv(65536)  # closed by serving() on return

    with serving(drop) as dropping:
        pool = [dropping, host_port(mock)]
        c = Collector(pool, security=RAW, use_primary=True, timeout=5)
        assert names(c.query(AdType.MASTER)) == ["vm"]
        only_bad = Collector(pool[:1], security=RAW, timeout=5)
        # A close without reply: a communication error, or (raw start) reported as a refusal.
        with pytest.raises((CedarConnectionError, PermissionDenied)):
            only_bad.query(AdType.MASTER)


def test_all_collectors_down(dead_address: str) -> None:
    with pytest.raises(CedarConnectionError, match="no collector of the pool answered"):
        Collector([dead_address, dead_address], security=RAW, timeout=5).query()


def test_pool_strings() -> None:
    assert split_pool("a, b:1 <c:2?x=y>,d") == ["a", "b:1", "<c:2?x=y>", "d"]
    assert resolve_pool(["h", "h:19618", "[::1]:5", "<1.2.3.4:5>"]) == [
        "h:9618", "h:19618", "[::1]:5", "<1.2.3.4:5>",
    ]  # fmt: skip
    with pytest.raises(ValueError):
        resolve_pool("")


def test_pool_from_configuration(mock: MockCollector, monkeypatch: pytest.MonkeyPatch) -> None:
    from cedar.config import Config, set_default_config

    config = Config()
    config.set("COLLECTOR_HOST", host_port(mock))
    set_default_config(config)
    try:
        assert names(Collector(security=RAW).query(AdType.SCHEDD)) == ["vm"]
    finally:
        set_default_config(None)


def test_async_client(mock: MockCollector, fresh_mock: MockCollector) -> None:
    async def main() -> None:
        c = AsyncCollector(host_port(mock), security=FS, timeout=10)
        slots = await c.query(AdType.SLOT, "SlotID >= 2", ["Name"], limit=2)
        assert len(slots) == 2 and all(list(ad) == ["Name"] for ad in slots)
        streamed = [ad["Name"] async for ad in c.query_iter(AdType.SLOT, projection=["Name"])]
        assert sorted(streamed) == [f"slot{i}@vm" for i in range(1, 5)]
        assert (await c.locate(DaemonType.SCHEDD, "vm")).name == "vm"
        assert len(await c.locate_all(DaemonType.STARTD)) == 4
        w = AsyncCollector(host_port(fresh_mock), security=RAW)
        await w.advertise([ClassAd({"MyType": "AsyncProbe", "Name": "a1"})])
        assert names(await w.query(AdType.GENERIC, target_type="AsyncProbe")) == ["a1"]
        await w.invalidate(AdType.GENERIC, name="a1", target_type="AsyncProbe")
        assert await w.query(AdType.GENERIC, target_type="AsyncProbe") == []
        fresh_mock.store.add({"MyType": "Scheduler", "Name": "self",
                              "MyAddress": fresh_mock.address})  # fmt: skip
        ad = await w.direct_query(DaemonType.SCHEDD, "self", ad_type=AdType.SCHEDD,
                                  constraint='Name == "self"')  # fmt: skip
        assert ad["Name"] == "self"

    trio.run(main)


def test_streaming_yields_before_the_whole_list_is_built(mock: MockCollector) -> None:
    stream: Iterator[ClassAd] = Collector(host_port(mock), security=RAW).query_iter(AdType.ANY)
    first = next(stream)
    assert isinstance(first, ClassAd)
    assert len([first, *stream]) == 10


def test_address_files(tmp_path: Path) -> None:
    from cedar.commands.collector import read_address_file

    base = tmp_path
    positional = base / "positional"
    positional.write_text(
        "<127.0.0.1:29618?addrs=127.0.0.1-29618&alias=vm>\n$CondorVersion: 25 $\n"
    )
    assert read_address_file(str(positional)) == "<127.0.0.1:29618?addrs=127.0.0.1-29618&alias=vm>"
    long_form = base / "long"
    long_form.write_text('# comment\nMyAddress = "<1.2.3.4:5>"\nScheddIpAddr = "<6.7.8.9:10>"\n')
    assert read_address_file(str(long_form)) == "<6.7.8.9:10>"
    (base / "junk").write_text("not an address\n")
    assert read_address_file(str(base / "junk")) is None
    assert read_address_file(str(base / "missing")) is None


def test_port_zero_reads_the_collector_address_file(tmp_path: Path) -> None:
    from cedar.config import Config, set_default_config

    address_file = tmp_path / ".collector_address"
    address_file.write_text("<127.0.0.1:4242>\n")
    config = Config()
    config.set("COLLECTOR_ADDRESS_FILE", str(address_file))
    set_default_config(config)
    try:
        assert resolve_pool("127.0.0.1:0") == ["<127.0.0.1:4242>"]
        address_file.unlink()
        with pytest.raises(ConfigError, match="COLLECTOR_ADDRESS_FILE"):
            resolve_pool("127.0.0.1:0")
    finally:
        set_default_config(None)
