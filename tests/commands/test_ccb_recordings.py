"""The CCB recordings of 25.13.2 (``captures/ccb/``): the requester's pieces, then every
recording replayed in every role (:mod:`cedar.capture.replay_ccb`).

Our request ad is the tools' byte for byte (given the recorded connect id and listener), the
recorded hello is accepted only with its own connect id, the broker's recorded refusal becomes
the error with its reason, and the recorded streaming reply, replayed hello and relayed answer
read as the requester reads them (the answer after the session's framing is dropped).
"""

from __future__ import annotations

import functools

import pytest

from cedar.auth.sinful import Sinful
from cedar.capture.pcap import read_segments
from cedar.capture.replay_ccb import replay_ccb_capture
from cedar.capture.replay_context import ReplayReport
from cedar.capture.tcp import C2S, S2C, TcpConversation, reassemble
from cedar.classad_wire import get_classad, put_classad
from cedar.commands.ccb import CcbRoute, broker_contacts, read_ad, read_hello, request_ad
from cedar.commands.errors import CcbRefused
from cedar.numbers import Command
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import ReplayChannel
from cedar.stream.primitives import MessageReader, MessageWriter
from tests.support import CAPTURES

RECORDINGS = CAPTURES / "ccb"
#: The startd's published address in the recordings (spec 09 §2.2).
TARGET = Sinful.parse(
    "<127.0.0.5:42469?CCBID=127.0.0.1:9760%3faddrs%3d127.0.0.1-9760%26alias%3dvm%26noUDP"
    "%26sock%3dcollector#1&PrivNet=ccb-target-net&addrs=127.0.0.5-42469&alias=vm>"
)


def _conversations(name: str) -> list[TcpConversation]:
    return reassemble(read_segments(RECORDINGS / f"{name}.pcap"))


def _messages(data: bytes) -> list[bytes]:
    conn = CedarConnection()
    conn.receive_data(bytes(data))
    found = []
    while (message := conn.next_message()) is not None:
        found.append(message.payload)
    return found


def test_the_contact_of_the_recorded_address() -> None:
    (contact,) = broker_contacts(TARGET)
    assert contact.ccbid == "1"
    assert (
        contact.broker_text == "127.0.0.1:9760?addrs=127.0.0.1-9760&alias=vm&noUDP&sock=collector"
    )
    assert contact.broker.connect_target().endpoint == ("127.0.0.1", 9760)


def test_our_request_is_the_tools_request() -> None:
    to_broker = _conversations("ccb-status-direct-raw")[0]
    preamble, recorded = _messages(to_broker.streams[C2S].data)[:2]
    assert preamble[:8] == MessageWriter().put_int(Command.SHARED_PORT_CONNECT).getvalue()
    sent = get_classad(_reader(recorded[8:]))
    (contact,) = broker_contacts(TARGET)
    ours = request_ad(contact, str(sent["ClaimId"]), str(sent["MyAddress"]))
    writer = MessageWriter().put_int(Command.CCB_REQUEST)
    put_classad(writer, ours)  # raw: the private ClaimId behind ZKM, as the tool sent it
    assert writer.getvalue() == recorded


def test_the_recorded_hello_is_ours_only_with_our_connect_id() -> None:
    to_broker, _persistent, reversed_connection = _conversations("ccb-status-direct-raw")
    request = get_classad(_reader(_messages(to_broker.streams[C2S].data)[1][8:]))
    hello = ReplayChannel(bytes(reversed_connection.streams[C2S].data)).run(read_hello())
    route = CcbRoute(TARGET, broker_contacts(TARGET), connect_id=str(request["ClaimId"]))
    assert route.hello_matches(hello)
    assert not CcbRoute(TARGET, broker_contacts(TARGET)).hello_matches(hello)


def test_the_recorded_refusal_is_the_error() -> None:
    (to_broker,) = _conversations("ccb-request-unknown-ccbid-raw")
    reply = ReplayChannel(bytes(to_broker.streams[S2C].data)).run(read_ad())
    route = CcbRoute(TARGET, broker_contacts(TARGET))
    with pytest.raises(CcbRefused) as caught:
        route.check_reply(route.contacts[0], reply)
    assert "received failure message from CCB server 127.0.0.1:9760" in str(caught.value)
    assert str(caught.value).endswith(
        "CCB server rejecting request for ccbid 999 because no daemon is currently registered "
        "with that id (perhaps it recently disconnected)."
    )


def test_the_recorded_relay_reads_as_the_requester_reads_it() -> None:
    probe = _conversations("ccb-probe-proxy-raw")[0]
    request = get_classad(_reader(_messages(probe.streams[C2S].data)[1][8:]))
    assert request["CCBStreamingRequired"] is True and request["MyAddress"] == ""
    channel = ReplayChannel(bytes(probe.streams[S2C].data))
    route = CcbRoute(TARGET, broker_contacts(TARGET), streaming=True)
    route.connect_id = str(request["ClaimId"])
    assert route.check_reply(route.contacts[0], channel.run(read_ad())) is True  # ProxyMode
    assert route.hello_matches(channel.run(read_hello()))
    channel.conn = channel.conn.detached()
    answer = channel.read_message()
    assert answer.get_int() == 1  # the startd's first slot ad, relayed
    assert str(get_classad(answer)["Name"]).startswith("slot")


def _reader(payload: bytes) -> MessageReader:
    return MessageReader(payload)


# -- every recording, every role (cedar.capture.replay_ccb) -------------------------------------

ALL = sorted(p.stem for p in RECORDINGS.glob("ccb-*.pcap"))
#: The reasons a part of a recording may not be replayed (the module says why in full).
UNREPLAYABLE = ("AES-GCM encrypted", "BLOWFISH key", "encrypted not replayable")


@functools.cache
def _replayed(name: str) -> tuple[ReplayReport, ...]:
    return tuple(replay_ccb_capture(str(RECORDINGS / f"{name}.pcap")))


def test_every_ccb_recording_is_here() -> None:
    assert len(ALL) == 12


@pytest.mark.parametrize("name", ALL)
def test_every_ccb_recording_replays_in_every_role(name: str) -> None:
    """Each part is replayed and equal to the recording, or skipped for a stated reason."""
    reports = _replayed(name)
    assert reports
    for report in reports:
        if report.skipped is not None:
            assert any(reason in report.skipped for reason in UNREPLAYABLE), report.skipped
        else:
            assert report.differences == [], (report.kind, report.side, report.differences)


#: What is replayed and matches in full, per recording: (kind, side) pairs.
REPLAYED = {
    "ccb-register-plain": {("ccb-register", "server"), ("ccb-register", "client"),
                           ("ccb-heartbeat", "target")},
    "ccb-reconnect-plain": {("ccb-register", "server"), ("ccb-register", "client")},
    "ccb-status-direct-raw": {("ccb-request", "server"), ("ccb-request", "client"),
                              ("ccb-forward", "broker"), ("ccb-result", "target"),
                              ("ccb-hello", "target"), ("ccb-hello", "requester"),
                              ("collector-query", "client"), ("collector-query", "server")},
    "ccb-request-unknown-ccbid-raw": {("ccb-request", "server"), ("ccb-request", "client")},
    "ccb-probe-raw": {("ccb-request", "server"), ("ccb-request", "client"),
                      ("collector-query", "client"), ("collector-query", "server")},
    "ccb-probe-proxy-raw": {("ccb-request", "server"), ("ccb-request", "client"),
                            ("ccb-forward", "broker"), ("collector-query", "client"),
                            ("collector-query", "server")},
    "ccb-ping-startd-plain": {("ccb-request", "client"), ("ccb-forward", "broker"),
                              ("ping", "client"), ("ping", "server"), ("ccb-hello", "target")},
    "ccb-ping-startd-nosp-plain": {("ccb-request", "client"), ("ping", "client"),
                                   ("ping", "server"), ("ccb-result", "target")},
    "ccb-proxy-ping-startd-plain": {("ccb-request", "client"), ("ping", "client"),
                                    ("ping", "server"), ("ccb-forward", "broker")},
    "ccb-ping-startd-fs-aes": {("ccb-request", "server"), ("ccb-hello", "target"),
                               ("ccb-result", "target")},
    "ccb-proxy-ping-startd-fs-aes": {("ccb-request", "server"), ("ccb-hello", "requester"),
                                     ("ccb-result", "target")},
    "ccb-claim-daemons-fs-aes": {("ccb-hello", "target"), ("ccb-result", "target")},
}  # fmt: skip


@pytest.mark.parametrize("name", ALL)
def test_the_replayable_parts_are_replayed(name: str) -> None:
    done = {(r.kind, r.side) for r in _replayed(name) if r.ok}
    assert REPLAYED[name] <= done, REPLAYED[name] - done
