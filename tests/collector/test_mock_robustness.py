"""Bad input to the mock collector closes that connection and nothing else (spec 05 §2.5)."""

from __future__ import annotations

import pytest

from cedar.auth.server_policy import ServerPolicy
from cedar.classad_wire import ClassAd, put_classad
from cedar.daemons.collector import MockCollector
from cedar.numbers import Command
from cedar.stream import MessageWriter

from .pool import new_store
from .pool import raw_exchange as _send


def _ad(command: int | None, ad: dict[str, object]) -> bytes:
    writer = MessageWriter()
    if command is not None:
        writer.put_int(command)
    put_classad(writer, ClassAd(ad))
    return writer.getvalue()


def _count(mock: MockCollector, table: str) -> int:
    return len(mock.store.ads(table))


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00\x00\x00",  # not even a command number
        b"\x00\x00\x00\x00\x00\x00\x00\x05",  # command, no ad
        b"\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x0f\x42\x41",  # 1,000,001 attrs
        b"\x00\x00\x00\x00\x00\x00\x00\x05\xff\xff\xff\xff\xff\xff\xff\xff",  # negative count
        b"\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x01A = \xff\x00\x00\x00",
        MessageWriter().put_int(48).put_int(1).put_string("Requirements = ((").getvalue(),
        MessageWriter().put_int(53).put_int(0).put_string("").put_string("").getvalue(),
        MessageWriter().put_int(0).put_int(1).put_string("Name = ").getvalue(),
    ],
)
def test_garbage_is_answered_by_closing(fresh_mock: MockCollector, payload: bytes) -> None:
    before = _count(fresh_mock, "Machine")
    assert _send(fresh_mock.port, payload) == b""
    assert _count(fresh_mock, "Machine") == before
    # ... and the collector still serves the next client.
    answer = _send(fresh_mock.port, _ad(6, {"MyType": "Query", "TargetType": "Scheduler"}))
    assert answer.startswith(b"\x01") and b'Name = "vm"' in answer


def test_an_unreadable_update_value_is_not_stored(fresh_mock: MockCollector) -> None:
    bad = MessageWriter().put_int(58).put_int(3)
    bad.put_string('MyType = "Probe"').put_string('Name = "x"').put_string("Bad = ((")
    assert _send(fresh_mock.port, bad.put_string("").put_string("").getvalue()) == b""
    assert fresh_mock.store.generic_tables() == []


def test_updates_on_one_connection_until_dc_nop(fresh_mock: MockCollector) -> None:
    first = _ad(58, {"MyType": "SpecProbe", "Name": "probe1", "Seq": 1})
    second = _ad(58, {"MyType": "SpecProbe", "Name": "probe2", "Seq": 2})
    drop = _ad(59, {"MyType": "Query", "TargetType": "SpecProbe", "Name": "probe1"})
    nop = MessageWriter().put_int(Command.DC_NOP).getvalue()
    late = _ad(58, {"MyType": "SpecProbe", "Name": "late"})
    assert _send(fresh_mock.port, first, second, drop, nop, late) == b""
    assert [s.ad["Name"] for s in fresh_mock.store.ads("SpecProbe")] == ["probe2"]


def test_later_commands_on_an_update_connection_need_their_own_level() -> None:
    # Unauthenticated peers may advertise generic ads (DAEMON) but not schedds.
    policy = ServerPolicy(allow={"READ": ["*"], "DAEMON": ["*"], "ADVERTISE_SCHEDD": ["x@y"]})
    mock = MockCollector("levels", policy=policy, store=new_store())
    with mock.run_in_thread():
        generic = _ad(58, {"MyType": "Probe", "Name": "ok"})
        schedd = _ad(1, {"MyType": "Scheduler", "Name": "sneaky", "MyAddress": "<1:1>"})
        after = _ad(58, {"MyType": "Probe", "Name": "after"})
        assert _send(mock.port, generic, schedd, after) == b""
        assert [s.ad["Name"] for s in mock.store.ads("Probe")] == ["ok"]
        assert [s.ad["Name"] for s in mock.store.ads("Scheduler")] == ["vm"]
        assert _send(mock.port, schedd) == b""  # refused as the first command too
        assert [s.ad["Name"] for s in mock.store.ads("Scheduler")] == ["vm"]


def test_own_submitter_ad_needs_daemon_or_the_same_user() -> None:
    policy = ServerPolicy(allow={"READ": ["*"]})
    mock = MockCollector("own", policy=policy, store=new_store())
    with mock.run_in_thread():
        ad = {"MyType": "Submitter", "Name": "alice@x", "MyAddress": "<1:1>"}
        assert _send(mock.port, _ad(Command.UPDATE_OWN_SUBMITTOR_AD, ad)) == b""
        names = sorted(s.ad["Name"] for s in mock.store.ads("Submitter"))
        assert names == ["testuser@minicondor"]  # unauthenticated: not alice's to publish


def test_update_with_ack_is_acknowledged(fresh_mock: MockCollector) -> None:
    ad = {"MyType": "Machine", "Name": "a@h", "MyAddress": "<1.2.3.4:5>"}
    answer = _send(fresh_mock.port, _ad(Command.UPDATE_STARTD_AD_WITH_ACK, ad))
    assert answer == b"\x01\x00\x00\x00\x08" + (1).to_bytes(8, "big")
    assert any(s.ad["Name"] == "a@h" for s in fresh_mock.store.ads("Machine"))
