"""The ``krb-*`` recordings (spec 10) replayed in both roles: our KERBEROS client against the
recorded schedd (its ticket rebuilt from the recording with the recorded keytab), our server
against the recorded client (the keytab, the recording's clock, a fresh replay cache)."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from cedar.capture.replay import ReplayReport, replay_capture
from tests.support import CAPTURES

KRB = CAPTURES / "krb"
NAMES = sorted(p.stem for p in KRB.glob("krb-*.pcap"))
#: The recorded client failed; ours must fail the same way, with this line.
CLIENT_FAILURES = {
    "krb-ping-noticket-plain": "no Kerberos credential cache",
    "krb-ping-expired-plain": "no Kerberos credential cache",
    "krb-ping-unknownservice-plain": "no Kerberos credential cache",
    "krb-ping-wrongservice-plain": "the server refused our ticket for nokeytab/localhost",
    "krb-probe-skew-plain": "the server refused our ticket for host/localhost",
}


@functools.cache
def reports(name: str) -> tuple[ReplayReport, ...]:
    return tuple(replay_capture(str(KRB / f"{name}.pcap")))


def test_every_krb_recording_is_here() -> None:
    assert len(NAMES) == 11


@pytest.mark.parametrize("name", NAMES)
def test_krb_recordings_replay_on_both_sides(name: str) -> None:
    done = reports(name)
    assert {r.side for r in done} == {"client", "server"}
    for report in done:
        if name.endswith("-aes"):
            assert report.skipped and "encrypted not replayable" in report.skipped
            continue
        assert report.skipped is None
        if report.side == "client" and name in CLIENT_FAILURES:
            (difference,) = report.differences
            assert difference.startswith("our client failed: required authentication")
            assert CLIENT_FAILURES[name] in difference
            continue
        assert report.differences == [], (report.side, report.kind, report.differences)


def test_the_skewed_recording_is_denied_by_our_server() -> None:
    """The recorded authenticator is 600 s ahead of the recording's clock: our server, set to
    that clock, answers DENY as the schedd did (the comparison above found no difference)."""
    (server,) = [r for r in reports("krb-probe-skew-plain") if r.side == "server"]
    assert server.differences == [] and server.skipped is None


def _session_key_of(conversation: Any) -> Any:
    """The ticket session key of a recorded AP-REQ, opened with the recorded daemons' keytab."""
    from cedar.auth.krb5.files import read_keytab
    from cedar.auth.krb5.messages import open_ticket, parse_ap_req

    (payload,) = [m.payload for m in conversation.messages if "service" in m.fields]
    size = int.from_bytes(payload[8:16], "big")
    ticket, _sealed = parse_ap_req(payload[16 : 16 + size])
    for entry in read_keytab(str(KRB / "krb-condor.keytab")):
        if entry.principal.same_name(ticket.server) and entry.key.etype == ticket.enc_part.etype:
            return open_ticket(ticket, entry.key).session_key
    raise AssertionError("no key of the keytab opens the recorded ticket")


def _kerberos_conversation(name: str, keys: list[bytes] | None = None) -> Any:
    from cedar.capture.dissect import dissect

    (found,) = [
        c for c in dissect(str(KRB / f"{name}.pcap"), keys=keys)
        if c.facts.get("method") == "KERBEROS"
    ]  # fmt: skip
    return found


LEGACY = str(KRB / "krb-probe-legacy-aes.pcap")


def _legacy_key() -> bytes:
    from cedar.capture.replay_kerberos import legacy_key

    stream_key = legacy_key(LEGACY, _kerberos_conversation("krb-probe-legacy-aes"))
    assert stream_key is not None
    return stream_key


def test_the_legacy_aes_recording_is_readable_with_the_keytab() -> None:
    """krb-probe-legacy-aes (no ECDH): the keytab opens the recorded ticket, its session key
    unwraps K1's stream key (spec 10 §6.3), and that key decrypts the recorded AES-GCM P1 and
    reply."""
    stream_key = _legacy_key()
    printed = (KRB / "krb-probe-legacy-aes.out").read_text()
    assert f"key {stream_key.hex()}" in printed  # what the recording's own client derived
    readable = _kerberos_conversation("krb-probe-legacy-aes", keys=[stream_key])
    texts = [str(m.fields) + str(m.payload) for m in readable.messages if m.encrypted]
    assert texts and any("testuser@minicondor" in text for text in texts)
    assert any("AuthorizationSucceeded" in text for text in texts)


def test_the_ecdh_aes_recording_is_readable_only_up_to_the_key_exchange() -> None:
    """krb-ping-schedd-write-aes: the keytab opens the recorded ticket (the Kerberos part, in
    clear before P1, verifies), but the AES-GCM key comes from the ECDH exchange, whose private
    halves are in no recording: P1 and the reply stay unreadable, so only the authentication
    could be replayed, not the session."""
    conversation = _kerberos_conversation("krb-ping-schedd-write-aes")
    assert _session_key_of(conversation) is not None
    assert conversation.facts.get("encrypted") is True
    assert any(str(m.fields.get("ecdh")) == "True" for m in conversation.messages)
    assert [str(m.fields["has_key"]) for m in conversation.messages if "has_key" in m.fields] == [
        "0"
    ]  # K1 = 0: no key sent under the ticket's session key
    assert not [m for m in conversation.messages if "key_length" in m.fields]
    assert all(not m.payload for m in conversation.messages if m.encrypted)  # unread


#: The recorded client is a probe that leaves OutgoingNegotiation at PREFERRED beside
#: Authentication REQUIRED; ours (like the real tools) raises it to REQUIRED (spec 03 §3.2,
#: "raised to at least every other preference").  Informational for the server; the only
#: difference, and it is ours to keep.
PROBE_NEGOTIATION = (
    "message 2 (C→S) [security policy]: missing [], extra [], changed outgoingnegotiation: "
    '"PREFERRED" -> "REQUIRED"'
)


def test_the_legacy_aes_recording_replays_in_both_roles_with_the_derived_key() -> None:
    """Given the key derived from the recording, both sides run past the authentication:
    our client (no ECDH key offered, as the probe) takes the recorded server's wrapped key and
    reads its re-protected P1 and DC_SEC_QUERY reply; our server (keytab, the recording's
    clock, fresh replay cache) sends the recorded client that key and answers the same."""
    client, server = replay_capture(LEGACY, keys=[_legacy_key()])
    assert (client.side, client.kind, client.skipped) == ("client", "ping", None)
    assert client.differences == [PROBE_NEGOTIATION]
    assert (server.side, server.kind, server.skipped) == ("server", "ping", None)
    assert server.differences == []


def test_a_wrong_key_leaves_the_legacy_recording_unreplayed() -> None:
    """One bit off the derived key: nothing opens, so both sides are skipped as without one."""
    key = bytearray(_legacy_key())
    key[0] ^= 1
    for report in replay_capture(LEGACY, keys=[bytes(key)]):
        assert report.skipped and "encrypted not replayable" in report.skipped


def test_our_server_must_send_the_recorded_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fresh random key (what a live server sends) our server's P1 no longer reads under
    the recorded key: the replay reports it rather than passing."""
    import os

    from cedar.capture import replay_context

    policy_for = replay_context.server_policy

    def fresh_key(ctx: Any) -> Any:
        policy = policy_for(ctx)
        policy.legacy_key_source = os.urandom
        return policy

    monkeypatch.setattr(replay_context, "server_policy", fresh_key)
    (server,) = [r for r in replay_capture(LEGACY, keys=[_legacy_key()]) if r.side == "server"]
    assert server.differences == [
        "message 14 (S→C): expected POST_AUTH S→C, got ENCRYPTED",
        "message 15 (S→C): expected SEC_QUERY_RESULT S→C, got ENCRYPTED",
    ]


def test_a_changed_recorded_byte_is_caught_on_the_client_side() -> None:
    """The recorded server's reply says AuthorizationSucceeded = true; changed in the plaintext
    the replay re-protects, our client decodes something else and the replay reports it."""
    from cedar.capture import replay
    from cedar.capture.messages import load_conversations
    from cedar.capture.replay_context import CaptureState, ReplayContext

    key = _legacy_key()
    conversation = _kerberos_conversation("krb-probe-legacy-aes", keys=[key])
    (reply,) = [m for m in conversation.messages if m.kind == "SEC_QUERY_RESULT"]
    assert reply.payload is not None and b"true" in reply.payload
    reply.payload = reply.payload.replace(b"true", b"1==2")  # same length: an expression
    raw = {c.number: c for c in load_conversations(LEGACY)}[conversation.number]
    ctx = ReplayContext(LEGACY, raw, conversation)
    kind = replay.kind_of(conversation, ctx)
    assert kind is not None
    client = replay.replay_client(ctx, kind, CaptureState(keys=[key]))
    assert client.differences == [
        "our client failed: handshake ad attribute 'AuthorizationSucceeded' is not a single "
        "literal (at byte offset 8)"
    ]
