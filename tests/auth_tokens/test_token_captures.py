"""Recompute the recorded TOKEN exchanges of the 25.13.2 pool byte by byte (spec 04 §5.10).

``status-token-aes.pcap`` (condor_status -> collector) and ``submit-token-aes.pcap``
(condor_submit -> schedd) both authenticate with ``pool/testuser.token`` signed by
``pool/POOL.signing-key``.  Our client, given the recorded ``ra`` and fed the recorded server
messages, must send exactly the recorded client messages; our server, given the recorded ``rb``,
must send exactly the recorded server message.
"""

from __future__ import annotations

import pytest

from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.token import IdToken, client_exchange, derive_k, server_exchange, server_mac
from cedar.stream.drivers import ReplayChannel
from cedar.stream.primitives import MessageReader
from tests.support import CAPTURES

TOKEN_BIT = (0x800).to_bytes(8, "big")


def token_exchange(name: str) -> list[tuple[str, bytes, bytes]]:
    """(direction, body, wire) of the mask, chosen, M1, M2, M3 messages of the first TOKEN run."""
    messages_mod = pytest.importorskip("cedar.capture.messages")
    pcap = CAPTURES / name
    if not pcap.exists():
        pytest.skip(f"capture {pcap} not present")
    for conv in messages_mod.load_conversations(pcap):
        msgs = conv.messages
        for i in range(len(msgs) - 4):
            if msgs[i].body == TOKEN_BIT and msgs[i + 1].body == TOKEN_BIT:
                return [(m.direction, m.body, m.wire) for m in msgs[i + 2 : i + 5]]
    raise AssertionError(f"no TOKEN exchange in {name}")


@pytest.fixture(scope="module")
def pool_key() -> SigningKey:
    return SigningKey.from_file_bytes("POOL", (CAPTURES / "pool" / "POOL.signing-key").read_bytes())


@pytest.fixture(scope="module")
def pool_token() -> IdToken:
    return IdToken.parse((CAPTURES / "pool" / "testuser.token").read_text())


@pytest.mark.parametrize("capture", ["status-token-aes.pcap", "submit-token-aes.pcap"])
def test_recorded_exchange_recomputed(
    capture: str, pool_key: SigningKey, pool_token: IdToken
) -> None:
    (d1, m1, m1_wire), (d2, m2, m2_wire), (d3, m3, m3_wire) = token_exchange(capture)
    assert (d1, d2, d3) == ("C→S", "S→C", "C→S")
    reader = MessageReader(m1)
    assert reader.get_int() == 0 and reader.get_int() == 19
    assert reader.get_string() == "testuser@minicondor"
    assert reader.get_string() == pool_token.signing_input
    assert reader.get_int() == 256
    ra = reader.get_bytes(256)
    rb = m3[8 + 8 + 20 + 8 : 8 + 8 + 20 + 8 + 256]

    # The signature a server recomputes from the key file equals the token's own.
    store = SigningKeyStore([pool_key])
    k, _ = derive_k(pool_token.signature, pool_token.signing_input)
    assert server_mac(k, "testuser@minicondor", "condor@password", ra, rb) == m2[-20:]

    # Our client, replayed against the recorded server, sends the recorded M1 and M3.
    client = ReplayChannel(m2_wire)
    result = client.run(client_exchange(client.conn, pool_token, ra=ra))
    assert result.success and result.peer_name == "condor@password"
    assert client.sent == [m1_wire, m3_wire]

    # Our server, replayed against the recorded client, sends the recorded M2.
    server = ReplayChannel(m1_wire + m3_wire)
    outcome = server.run(server_exchange(server.conn, store, rb=rb, now=1795306848))
    assert outcome.success, outcome.error
    assert outcome.peer_name == "testuser@minicondor"
    assert server.sent == [m2_wire]


def test_live_example_values(pool_key: SigningKey, pool_token: IdToken) -> None:
    assert pool_key.jwt_key.hex() == (
        "a0a4e7a4f3bceafba269e898c634830946e6ccdf5324c65476cba38b972bcdd0"
    )
    k, k2 = derive_k(pool_token.signature, pool_token.signing_input)
    assert k.hex() == "9d31fd1e52b2f32384b983e1dac243aebdea2e83a9577758bbcc0ffbddabe8a3"
    assert k2.hex() == "efaf4719516bc80256aeb67b6c2d34578125c43785fcef0faee7c43f8f6c5331"
