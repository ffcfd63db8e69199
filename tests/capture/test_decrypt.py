"""Decrypting AES-GCM conversations with a known key (transcript rules, spec 01 §4.2.4)."""

from __future__ import annotations

from cedar.capture import dissect
from cedar.capture.writer import write_capture

from .conftest import KEY, aes_query_exchange


def test_decrypts_with_the_session_key_after_a_shared_port_preamble() -> None:
    capture = write_capture([aes_query_exchange().chunks])
    (conv,) = dissect(capture, keys=[KEY], strict=True)
    kinds = [m.kind for m in conv.messages]
    assert kinds == [
        "SHARED_PORT_CONNECT",
        "DC_AUTHENTICATE",
        "SECURITY_RESPONSE",
        "POST_AUTH",
        "REQUEST",
        "QUERY_RESULT",
    ]
    assert [m.encrypted for m in conv.messages] == [False] * 3 + [True] * 3
    assert all(m.decrypted for m in conv.messages[3:])
    assert conv.facts["user"] == "unauthenticated@unmapped"
    assert conv.messages[-1].fields["ads"] == 1
    # The size shown is the plaintext; the wire carried IV (first packet) and tag on top.
    p1 = conv.messages[3]
    assert p1.wire_size == p1.size + 5 + 16 + 16


def test_decrypts_without_preamble_too() -> None:
    capture = write_capture([aes_query_exchange(preamble=False).chunks])
    (conv,) = dissect(capture, keys=[KEY], strict=True)
    assert conv.messages[-1].kind == "QUERY_RESULT"


def test_tries_every_given_key() -> None:
    capture = write_capture([aes_query_exchange().chunks])
    (conv,) = dissect(capture, keys=[bytes(32), KEY], strict=True)
    assert conv.messages[-1].decrypted


def test_without_or_with_a_wrong_key_messages_are_described() -> None:
    capture = write_capture([aes_query_exchange().chunks])
    (conv,) = dissect(capture, strict=True)
    encrypted = conv.messages[3:]
    assert all(m.encrypted and not m.decrypted for m in encrypted)
    assert "no session key given" in encrypted[0].summary
    assert [m.fields["expected"] for m in encrypted] == [
        "post-authentication ad",
        "QUERY_STARTD_ADS(5) request",
        "QUERY_STARTD_ADS(5) reply",
    ]
    (conv,) = dissect(capture, keys=[bytes(32)], strict=True)
    assert "wrong session key" in conv.messages[3].summary
    assert not conv.messages[-1].decrypted
