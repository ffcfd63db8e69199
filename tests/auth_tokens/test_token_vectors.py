"""The TOKEN arithmetic against spec 04 §5.9 (worked example) and §5.10 / the recorded captures."""

from __future__ import annotations

import hashlib
import json

import pytest

from cedar.auth import keywrap
from cedar.auth.signing_key import SigningKey, SigningKeyStore, scramble
from cedar.auth.token import (
    IdToken,
    b64url_encode,
    client_exchange,
    client_mac,
    derive_k,
    server_exchange,
    server_mac,
    session_material,
    sign,
)

from .pairing import run_pair

RAW = bytes(range(32))
HEADER = '{"alg":"HS256","kid":"POOL"}'
PAYLOAD = (
    '{"exp":1767225600,"iat":1767222000,"iss":"example.com",'
    '"jti":"0123456789abcdef0123456789abcdef","scope":"condor:/READ condor:/WRITE",'
    '"sub":"alice@example.com"}'
)
RA = bytes(range(256))
RB = bytes(255 - i for i in range(256))


def example_token() -> tuple[SigningKey, IdToken]:
    key = SigningKey.from_file_bytes("POOL", scramble(RAW))
    t = f"{b64url_encode(HEADER.encode())}.{b64url_encode(PAYLOAD.encode())}"
    return key, IdToken.parse(f"{t}.{b64url_encode(sign(key, t))}")


def test_worked_example_key_file_and_signature() -> None:
    assert scramble(RAW).hex() == (
        "deacbcecdaa8b8e8d6a4b4e4d2a0b0e0cebcacfccab8a8f8c6b4a4f4c2b0a0f0"
    )
    key, token = example_token()
    assert key.material == RAW + RAW
    assert key.jwt_key.hex() == "acb6c9345e182ac9a2575c32ac42d3738aae0629665bf6bf9678505229ac0d3d"
    assert len(token.signing_input) == 251
    assert token.signature.hex() == (
        "125755d1f73cb545c3c261d1624955f21260453637ab7351abd3f64213bb4e08"
    )
    assert token.text.endswith(".EldV0fc8tUXDwmHRYklV8hJgRTY3q3NRq9P2QhO7Tgg")
    k, k2 = derive_k(token.signature, token.signing_input)
    assert k.hex() == "d02973b8a85407b689c5cd8b1d03295cad415963aa7e14d2abcd032028185b89"
    assert k2.hex() == "3468eb7e96bf346a1078baa41ec3b089093ea08599ae8bf735e531d3e3db85df"
    a, b = "alice@example.com", "condor@password"
    assert server_mac(k, a, b, RA, RB).hex() == "1c20b707bddec733cbcebd62a0464c485bfa4c2d"
    assert client_mac(k, a, RB).hex() == "87b292bc9eb2f782ed561736ff8ef0849cf2753d"
    w = session_material(RB)
    assert w.hex() == "7628f7ee870ca6720af10c583ba06add6665a1da024ba51e358fd9a497bbdca2"
    assert keywrap.fold_key(w).hex() == "43a72e4a10b77ad00af10c583ba06add6665a1da024ba51e"
    wrapped = keywrap.wrap(w, bytes(range(0xA0, 0xC0)))
    assert wrapped.hex() == "640e49497f7cd23626040a45aeec74c203af9fc18036fa0384e264aba51a05dc"
    assert keywrap.unwrap(w, wrapped) == bytes(range(0xA0, 0xC0))


def test_worked_example_messages_byte_exact() -> None:
    key, token = example_token()
    store = SigningKeyStore([key])
    client, server, log = run_pair(
        client_exchange_with(token), server_exchange_with(store, now=1767222000)
    )
    assert client.success and server.success, (client, server)
    assert server.peer_name == "alice@example.com" and client.peer_name == "condor@password"
    assert client.material == server.material == session_material(RB)
    sizes = [(d, len(p), hashlib.sha256(p).hexdigest()) for d, p in log]
    assert sizes == [
        ("C->S", 550, "1003a726433e0860cf720662b991aaf390714dd9a12b6e4c764e25ba0877cb68"),
        ("S->C", 614, "9e7d1f21782b19d32a09afced64860d2211ec44d6c0f9432ea6fd9ad9ea0d136"),
        ("C->S", 326, "df1827cb7cc1bb5241042523345c6bfb47aabc01e86ec7864bdb86a6beef8494"),
    ]
    assert log[2][1][-36:].hex() == (
        "0706050403020100000000000000001487b292bc9eb2f782ed561736ff8ef0849cf2753d"
    )


def client_exchange_with(token: IdToken):  # type: ignore[no-untyped-def]
    from cedar.stream.connection import CedarConnection

    return client_exchange(CedarConnection(), token, ra=RA)


def server_exchange_with(store: SigningKeyStore, now: float):  # type: ignore[no-untyped-def]
    from cedar.stream.connection import CedarConnection

    return server_exchange(CedarConnection(), store, now=now, rb=RB)


def test_worked_example_expired_token_is_refused_by_server_now() -> None:
    key, token = example_token()
    client, server, log = run_pair(
        client_exchange_with(token), server_exchange_with(SigningKeyStore([key]), now=1767225601)
    )
    assert not client.success and not server.success
    assert "expired" in server.error
    assert log[1][1] == bytes.fromhex(
        "ffffffffffffffff"
        "0000000000000000"
        "00"
        "0000000000000000"
        "00"
        "0000000000000000"
        "0000000000000000"
        "0000000000000000"
    )  # the 50-byte M2 error form of spec 04 §5.5
    assert log[2][1] == bytes.fromhex(
        "ffffffffffffffff00000000000000000000000000000000000000000000000000"
    )


@pytest.mark.parametrize("now", [1767225600])
def test_exp_equal_now_is_accepted(now: int) -> None:
    key, token = example_token()
    client, server, _ = run_pair(
        client_exchange_with(token), server_exchange_with(SigningKeyStore([key]), now=now)
    )
    assert client.success and server.success


def test_payload_matches_spec_text() -> None:
    _, token = example_token()
    assert json.dumps(dict(token.claims), sort_keys=True, separators=(",", ":")) == PAYLOAD
    assert token.authorizations == ["READ", "WRITE"]
