"""Spec 01 §4.2 and spec 03 §5: AES-256-GCM packets, nonces, transcript AAD, key derivation."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from hypothesis import given, settings
from hypothesis import strategies as st

from cedar.errors import IntegrityError
from cedar.stream import CedarConnection, EcdhKeyPair, MessageWriter
from cedar.stream.crypto import ZERO_DIGEST, AesGcmDirection, nonce_for


def h(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


VECTOR_A_KEY = h("987b0d12d0804b3cde8381cfa35b04fb9bd10ae9da9eb4cf3de568e0241c7e5d")
VECTOR_A_DS = h("380ebe111a5e4ee44d7f1d949c4653ff250faf832e6de740adf73ae635db05f2")
VECTOR_A_DR = h("b243b4fe0b3c90952d14e13ff98d3c7e9e2e4b6662ee2621139a9ec59e74971b")
VECTOR_A_PAYLOAD = h("""
  da af 53 a6 df f2 f4 af 83 e5 e5 4c c4 cf bb 7b 84 11 bf 44 ca 00 c2 59 e3 3f 86 33 89 9a 82 de
  12 cd d8 82 21 13 42 54 24 40 82 9d 12 d1 93 be f2 0e 85 be 54 f2 cf ea 58 c9 ce 53 80 e2 6f ac
  17 98 60 6f b7 3c 61 d5 2d 5e fd d6 5b f3 dd a7 91 f6 ca 99 a9 dd a4 bf eb d7 df 29 57 67 cb 0f
  81 8d 28 26 45 86 92 0b 89 fa 2a 71 af 76 b8 79 f1 0c 4c ef d1 5b 1a 90 93 f4 e6 9f 08 1f b7 40
  b0 07 1a a4 39 81 2a 7b 76 1c 44 8d 76 75 b4 af 34 06 ab 8b 0a 02 34 09 d2 5e 41 79 3e ef ad bc
  1f 0e 14 b6 09 bc 38 ec 7d e3 21 b4 fa c4 a9 51 4e b2 52 20 85 53 ce""")
VECTOR_A_PLAINTEXT = h("""
  00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 11 4d 79 54 79 70 65 20 3d 20 22 51 75 65 72 79 22
  00 00 00 00 00 00 00 00 21 50 72 6f 6a 65 63 74 69 6f 6e 20 3d 20 22 4e 61 6d 65 20 43 70 75 73
  20 4c 6f 61 64 41 76 67 22 00 00 00 00 00 00 00 00 17 54 61 72 67 65 74 54 79 70 65 20 3d 20 22
  4d 61 63 68 69 6e 65 22 00 00 00 00 00 00 00 00 14 52 65 71 75 69 72 65 6d 65 6e 74 73 20 3d 20
  74 72 75 65 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 01 00""")

VECTOR_D_KEY = h("e65ab8c61e4508e135902598f5fa4bd9c6a46b64174622b787446f52568d2e01")
VECTOR_D_R2 = h("525bb12789288569d9fde4bfc292ada2a6c0b486220de4c161b9f208ea4dff92")
VECTOR_D_R1 = h("6efd51459c882c0d0171e6eeed0c69cdca8863df3971062705c0097ab12cc45e")
VECTOR_D_FIRST = h("""
  df ac fe 1c 5e e0 98 61 be 6c 11 c6 56 96 2d cf 6b 52 26 08 01 c3 88 e0 26 b8 f4 12 ae 03 bb c0
  94 b6 d3 65 88 d7 91 52 a1 97 7b c8 30 41 d2 27 fd 69 7d 36 b2 98 9f 0d 7f 5e 90 ac a5 94 12 dc
  3a 79 60 9a c4 d9 75 6f 30 60 05 dd 3a 74 d7 05 ff 04 40 b9 89 96 e0 4e 4c ae 2c 23 c7 25 5d 42
  d9 a7 5b 56 f5 78 79 a7 4f 91 6d 60 d4 7b 57 e6 0d 5b 82 6f a9 1d 06 38 04 09 59 15 21 d2 7a 2e
  ec f0 bd 91""")
VECTOR_D_SECOND = h("""
  cf f8 5b 86 9c e7 20 b3 53 e9 38 99 19 61 a4 ad 8e 2c dd 9d df cb 75 a2
  b2 10 a5 20 68 e2 a9 9e 86 68 99 44 91 5e 61 05 97 7e 69 1c 71 eb 5c ff
  ba 36 91 06 df 78 24 56 d4 88 69 85 1f cc 9c 5e 32 e9 aa c6 85 be 3e 22
  2d 88 39 a6 46 6b 6e b9 e3 7d fa 3f a2 ab b8 2b d5 a7 a1 50 85 5f 0e cc
  ad fa da 01 1e 53 f0 74 2a 40 bd 84 b1 4e d8 2e d2 04 8a 97""")
VECTOR_D_PLAINTEXT = h("""
  00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 0f 43 6c 75 73 74 65 72 49 64 20 3d 20 32 30 00 00
  00 00 00 00 00 00 0b 50 72 6f 63 49 64 20 3d 20 30 00 00 00 00 00 00 00 00 18 53 65 72 76 65 72
  54 69 6d 65 20 3d 20 31 37 39 35 33 30 37 35 31 37 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00
  00 00 01 00""")


def test_nonce_adds_the_counter_to_the_first_four_bytes() -> None:
    base = h("615e86870b488d0f0011223344556677")
    assert nonce_for(base, 0) == base
    assert nonce_for(base, 1)[:4] == h("615e8688") and nonce_for(base, 1)[4:] == base[4:]
    assert nonce_for(h("ffffffff") + bytes(12), 2)[:4] == h("00000001")


def test_vector_a_first_client_packet_verifies_with_both_digests() -> None:
    direction = AesGcmDirection(AESGCM(VECTOR_A_KEY), None)
    # receiver view: its D_recv (= client's D_sent) first, then its D_sent
    plaintext = direction.open(h("01000000b7"), VECTOR_A_PAYLOAD, VECTOR_A_DS + VECTOR_A_DR)
    assert plaintext == VECTOR_A_PLAINTEXT
    assert direction.base_iv == VECTOR_A_PAYLOAD[:16] and direction.counter == 1


def test_vector_b_later_packet_uses_header_only_aad() -> None:
    key = h("3c42be363fa40d41930415138e0cc5847500b4c0e91ce1134a5ae777b28f9285")
    direction = AesGcmDirection(AESGCM(key), h("38e89d01e23ccd24196909539fd6a94e"))
    direction.counter = 1
    body = h("ed1e6977785cba3f 9202ac132e8e2bf8b5a430e13ee0167d")
    assert direction.open(h("0100000018"), body, b"") == bytes(8)


def test_vector_d_live_schedd_packets_on_a_resumed_session() -> None:
    direction = AesGcmDirection(AESGCM(VECTOR_D_KEY), None)
    assert direction.open(h("0100000084"), VECTOR_D_FIRST, VECTOR_D_R2 + VECTOR_D_R1) == (
        VECTOR_D_PLAINTEXT
    )
    second = direction.open(h("0100000074"), VECTOR_D_SECOND, b"")
    assert second == VECTOR_D_PLAINTEXT[:48] + b"1" + VECTOR_D_PLAINTEXT[49:]


def test_spec03_vector_ecdh_hkdf_and_first_server_packets() -> None:
    client = EcdhKeyPair.from_private_value(int("11" * 32, 16))
    server = EcdhKeyPair.from_private_value(int("22" * 32, 16))
    assert client.public_base64() == (
        "BAIX5hfwtkQ5KCePlpmeaaI6TywVK99tbN9m5bgCgtTtGUp968uXcS0t2jyoWqh2Wlb0X8dYWZZS8ol8ZTBuV5Q="
    )
    key = server.session_key(client.public_base64())
    assert key == client.session_key(server.public_bytes())
    assert key == h("210c3e339c3a5e9743e64f7cf478cc963d37d96b613c885117a5cc1da41af6c5")

    conn = CedarConnection()
    conn.receive_data(h("01 00000008 0000000000000004"))
    assert conn.next_message() is not None
    conn.send_message(h("0000000000000004"))
    conn.send_message(h("0000000000000000"))
    assert conn.transcript_digests() == (
        h("2fbaec89db6482bc799ff22a126ab91d0383b13c95c1aaa27652cae99e96042a"),
        h("1f37be498a62ba17f5d56bc83cf556bde15d57ee57ae0c8c1a74f1d87f555a3c"),
    )
    conn.install_aes_key(key, send_iv=h("101112131415161718191a1b1c1d1e1f"))
    ad = conn.writer().put_int(1).put_string('ReturnCode = "AUTHORIZED"').put_string("")
    first = conn.send_message(ad.put_string(""))
    expected = h("""01 0000005c 101112131415161718191a1b1c1d1e1f
        227c55d4c89969417aaaebd4f151bd2ea6b824d0a08d5dc2a0c95f3fba796adf
        ecaba84a79d749087747209cd3eb78637e8a12f60b1046295cf2a79f
        a09a18cb34a04a644f57b23079034747""")
    assert first == expected
    second = conn.send_message(conn.writer().put_int(0))
    assert second == h("01 00000018 ec107b09b6d1254720d4f4265d19ef87aaafd4f4adfb21b5")


def _pair(key: bytes = b"k" * 32) -> tuple[CedarConnection, CedarConnection]:
    client, server = CedarConnection(), CedarConnection()
    server.receive_data(client.send_message(b"hello"))
    assert server.next_message() is not None
    client.receive_data(server.send_message(b"world!"))
    assert client.next_message() is not None
    client.install_aes_key(key)
    server.install_aes_key(key)
    return client, server


def test_handshake_digests_bind_both_directions() -> None:
    client, server = _pair()
    sent, received = client.transcript_digests()
    assert sent == hashlib.sha256(h("0100000005") + b"hello").digest()
    assert received == hashlib.sha256(h("0100000006") + b"world!").digest()
    server.receive_data(client.send_message(client.writer().put_string("payload")))
    message = server.next_message()
    assert message is not None and message.crypto and message.get_string() == "payload"


def test_no_plaintext_in_a_direction_means_zero_digest() -> None:
    conn = CedarConnection()
    conn.install_aes_key(b"k" * 32)
    assert conn.transcript_digests() == (ZERO_DIGEST, ZERO_DIGEST)


def test_transcript_reset_after_shared_port_preamble() -> None:
    conn = CedarConnection()
    conn.send_message(b"preamble")
    conn.reset_transcript()
    assert conn.transcript_digests() == (ZERO_DIGEST, ZERO_DIGEST)


@pytest.mark.parametrize("flip", [5, 20, -1])  # IV, ciphertext, tag
def test_tampered_packet_is_an_integrity_error(flip: int) -> None:
    client, server = _pair()
    wire = bytearray(client.send_message(b"secret data"))
    wire[flip] ^= 0x01
    server.receive_data(bytes(wire))
    with pytest.raises(IntegrityError, match="tag did not verify"):
        server.next_message()


def test_wrong_transcript_digest_is_an_integrity_error() -> None:
    client, server = _pair()
    server.reset_transcript()  # the server now believes nothing was exchanged in clear
    server.receive_data(client.send_message(b"x"))
    with pytest.raises(IntegrityError):
        server.next_message()


def test_short_encrypted_packet_is_an_integrity_error() -> None:
    _, server = _pair()
    server.receive_data(h("01 00000010") + bytes(16))
    with pytest.raises(IntegrityError, match="too short"):
        server.next_message()


def test_key_of_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="32-byte key"):
        CedarConnection().install_aes_key(b"short")


def test_reprs_do_not_leak_keys() -> None:
    client, _ = _pair(b"\x42" * 32)
    assert "42" not in repr(client) and "B" * 4 not in repr(client)


@settings(max_examples=40)
@given(st.lists(st.binary(min_size=1, max_size=3000), min_size=1, max_size=6))
def test_encrypted_messages_round_trip_in_both_directions(payloads: list[bytes]) -> None:
    """Messages sealed by either side of an AES-GCM session open on the other side equal."""
    client, server = _pair()
    for payload in payloads:
        server.receive_data(client.send_message(payload))
        client.receive_data(server.send_message(payload[::-1]))
        got_server, got_client = server.next_message(), client.next_message()
        assert got_server is not None and got_server.payload == payload
        assert got_client is not None and got_client.payload == payload[::-1]


def test_large_encrypted_message_spans_packets() -> None:
    client, server = _pair()
    payload = MessageWriter(crypto=True).put_bytes(b"z" * (3 << 20)).getvalue()
    server.receive_data(client.send_message(payload))
    message = server.next_message()
    assert message is not None and message.payload == payload
