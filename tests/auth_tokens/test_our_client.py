"""Our client against our daemon: TOKEN, SSL, SCITOKENS, fall-through, and every failure case."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.signing_key import SigningKey
from cedar.auth.tls import TlsClientSettings
from cedar.auth.token import create_token
from cedar.commands import ping
from cedar.commands.ping import PingResult
from cedar.config import Config
from cedar.errors import CedarError

from .conftest import AUDIENCE, HOST, TRUST_DOMAIN, token_dir
from .pki import Issuer, Pki

ALICE = f"alice@{TRUST_DOMAIN}"


def client(methods: list[str], **options: Any) -> ClientSecurity:
    options.setdefault("config", Config())
    options.setdefault("SEC_TOKEN_DIRECTORY", "/nonexistent/tokens.d")
    config = SecurityConfig(
        methods=methods, options=options, trust_domain=TRUST_DOMAIN, uid_domain=TRUST_DOMAIN
    )
    return ClientSecurity(config)


def attempt(address: str, level: str, security: ClientSecurity) -> PingResult | str:
    """The ping result, or the text of the error it raised."""
    try:
        return ping(address, level, security=security, timeout=20)
    except CedarError as exc:
        return str(exc)


def assert_ok(result: PingResult | str, user: str, method: str) -> None:
    assert isinstance(result, PingResult), result
    assert result.authorized, result
    assert (result.user, result.method, result.crypto, result.encrypted) == (
        user,
        method,
        "AES",
        True,
    )


def tls(pki: Pki, **kwargs: Any) -> TlsClientSettings:
    return TlsClientSettings(cafile=str(pki.ca), use_default_cas=False, **kwargs)


def test_token_in_memory(serve: Any, pool_key: SigningKey) -> None:
    token = create_token(pool_key, issuer=TRUST_DOMAIN, subject=ALICE, lifetime=600)
    with serve(["TOKEN"]) as address:
        assert_ok(attempt(address, "WRITE", client(["TOKEN"], token=token)), ALICE, "TOKEN")


def test_token_from_directory(tmp_path: Path, serve: Any, pool_key: SigningKey) -> None:
    other = create_token(SigningKey.generate("OTHER"), issuer=TRUST_DOMAIN, subject="bob@x")
    elsewhere = create_token(pool_key, issuer="elsewhere.org", subject="carol@x")
    good = create_token(pool_key, issuer=TRUST_DOMAIN, subject=ALICE)
    directory = token_dir(tmp_path, other, elsewhere, good)  # only the last one fits the server
    with serve(["TOKEN"]) as address:
        result = attempt(address, "READ", client(["TOKEN"], SEC_TOKEN_DIRECTORY=str(directory)))
    assert_ok(result, ALICE, "TOKEN")


def test_ssl_with_client_certificate(serve: Any, pki: Pki) -> None:
    settings = tls(pki, certfile=str(pki.client_cert), keyfile=str(pki.client_key))
    with serve(["SSL"]) as address:
        assert_ok(attempt(address, "WRITE", client(["SSL"], ssl_client=settings)), ALICE, "SSL")


def test_ssl_without_client_certificate_is_unauthenticated(serve: Any, pki: Pki) -> None:
    with serve(["SSL"]) as address:
        result = attempt(address, "WRITE", client(["SSL"], ssl_client=tls(pki)))
    # TLS succeeds and keys the session, but the client is not identified (spec 04 §7.4); this
    # test daemon authorizes everyone, so the level is granted to the unauthenticated identity.
    assert isinstance(result, PingResult), result
    assert (result.user, result.method, result.encrypted) == (
        "unauthenticated@unmapped",
        "SSL",
        True,
    )


def test_scitoken_over_ssl(serve: Any, pki: Pki, issuer: Issuer) -> None:
    security = client(["SCITOKENS"], ssl_client=tls(pki), scitoken=issuer.mint(aud=AUDIENCE))
    with serve(["SCITOKENS"]) as address:
        assert_ok(attempt(address, "WRITE", security), ALICE, "SCITOKENS")


def test_scitoken_from_bearer_token_file(
    tmp_path: Path, serve: Any, pki: Pki, issuer: Issuer
) -> None:
    path = tmp_path / "bt"
    path.write_text("  " + issuer.mint(aud=AUDIENCE) + "\n")
    config = Config.load(
        condor_config="/dev/null", environ={"BEARER_TOKEN_FILE": str(path)}, read_user_config=False
    )
    security = client(["SCITOKENS"], ssl_client=tls(pki), config=config)
    with serve(["SCITOKENS"]) as address:
        assert_ok(attempt(address, "READ", security), ALICE, "SCITOKENS")


def test_fall_through_token_fails_then_fs(serve: Any) -> None:
    wrong = create_token(SigningKey.generate("POOL"), issuer=TRUST_DOMAIN, subject=ALICE)
    with serve(["TOKEN", "FS"]) as address:
        result = attempt(address, "WRITE", client(["TOKEN", "FS"], token=wrong))
    assert isinstance(result, PingResult) and result.authorized, result
    assert result.method == "FS" and result.encrypted


# -- failures: each with a message that says what went wrong --


def failure(address: str, level: str, security: ClientSecurity) -> str:
    result = attempt(address, level, security)
    if isinstance(result, PingResult):
        assert not result.authorized, result
        return result.error or ""
    return result


def test_wrong_signing_key(serve: Any) -> None:
    wrong = create_token(SigningKey.generate("POOL"), issuer=TRUST_DOMAIN, subject=ALICE)
    with serve(["TOKEN"]) as address:
        message = failure(address, "READ", client(["TOKEN"], token=wrong))
    assert "signed with a key the server does not have" in message


def test_expired_token(serve: Any, pool_key: SigningKey) -> None:
    old = create_token(
        pool_key,
        issuer=TRUST_DOMAIN,
        subject=ALICE,
        lifetime=60,
        issued_at=int(time.time()) - 3600,
    )
    with serve(["TOKEN"]) as address:
        message = failure(address, "READ", client(["TOKEN"], token=old))
    assert "server refused the token" in message and "expired" in message


def test_scope_lacking_the_level(serve: Any, pool_key: SigningKey) -> None:
    token = create_token(pool_key, issuer=TRUST_DOMAIN, subject=ALICE, authorizations=["READ"])
    with serve(["TOKEN"]) as address:
        assert_ok(attempt(address, "READ", client(["TOKEN"], token=token)), ALICE, "TOKEN")
        message = failure(address, "WRITE", client(["TOKEN"], token=token))
    assert "DENIED" in message


def test_no_token_found(serve: Any) -> None:
    with serve(["TOKEN"]) as address:
        message = failure(address, "READ", client(["TOKEN"]))
    assert "no IDTOKEN found for issuer 'example.com'" in message
    assert "/nonexistent/tokens.d" in message


def test_wrong_audience(serve: Any, pki: Pki, issuer: Issuer) -> None:
    token = issuer.mint(aud="https://somewhere.else")
    with serve(["SCITOKENS"]) as address:
        message = failure(
            address, "READ", client(["SCITOKENS"], ssl_client=tls(pki), scitoken=token)
        )
    assert "server rejected our SciToken" in message


def test_unknown_issuer(serve: Any, pki: Pki) -> None:
    from .pki import make_issuer

    stranger = make_issuer("https://stranger.example")
    with serve(["SCITOKENS"]) as address:
        message = failure(
            address,
            "READ",
            client(["SCITOKENS"], ssl_client=tls(pki), scitoken=stranger.mint(aud=AUDIENCE)),
        )
    assert "server rejected our SciToken" in message


def test_untrusted_certificate(serve: Any, other_pki: Pki) -> None:
    with serve(["SSL"]) as address:
        message = failure(address, "READ", client(["SSL"], ssl_client=tls(other_pki)))
    assert "certificate verification failed" in message


def test_certificate_name_mismatch(serve: Any, pki: Pki) -> None:
    with serve(["SSL"]) as address:
        message = failure(
            address, "READ", client(["SSL"], ssl_client=tls(pki, expected_host="other.example"))
        )
    assert "does not match the host name 'other.example'" in message


def test_tls_round_structure_matches_spec_trace(pki: Pki) -> None:
    """Phases 0-2 alternate exactly as spec 04 §7.5 (TLS 1.3, client certificate)."""
    from cedar.auth.tls import TlsServerSettings, client_tls, server_tls
    from cedar.stream.connection import CedarConnection

    from .pairing import run_pair

    settings = tls(
        pki, expected_host=HOST, certfile=str(pki.client_cert), keyfile=str(pki.client_key)
    )
    server = TlsServerSettings(
        [str(pki.server_cert)], [str(pki.server_key)], cafile=str(pki.ca), use_default_cas=False
    )
    c_conn, s_conn = CedarConnection(), CedarConnection()
    c, s, log = run_pair(client_tls(c_conn, settings), server_tls(s_conn, server), c_conn, s_conn)
    assert c.success and s.success and c.material == s.material and len(c.material) == 256
    assert s.peer_dn == "/O=authlab/CN=alice"
    shape = [(d, int.from_bytes(p[:8], "big")) for d, p in log]
    assert shape == [
        ("S->C", 0),
        ("C->S", 0),  # phase 0
        ("C->S", 2),
        ("S->C", 2),
        ("C->S", 4),
        ("S->C", 4),  # phase 1
        ("S->C", 4),
        ("C->S", 4),  # phase 2: W, then the client's empty HOLDING
    ]
    assert c_conn.transcript_digests() == s_conn.transcript_digests()[::-1]


def test_ephemeral_token_from_a_readable_pool_key(
    tmp_path: Path, serve: Any, pool_key: SigningKey
) -> None:
    # No token anywhere, but the pool key is readable (root or condor on a pool host): the
    # client mints a 60 s token and is condor@password, as the reference client is (§5.7).
    key_file = tmp_path / "POOL"
    pool_key.save(key_file)
    with serve(["TOKEN"]) as address:
        security = client(["TOKEN"], SEC_TOKEN_POOL_SIGNING_KEY_FILE=str(key_file))
        result = attempt(address, "READ", security)
        assert isinstance(result, PingResult) and (result.user, result.method) == (
            "condor@password",
            "TOKEN",
        ), result
        # Another trust domain than the server's issuer: nothing is minted, TOKEN fails.
        foreign = ClientSecurity(
            SecurityConfig(
                methods=["TOKEN"],
                trust_domain="elsewhere.org",
                uid_domain="elsewhere.org",
                options={
                    "config": Config(),
                    "SEC_TOKEN_DIRECTORY": "/nonexistent/tokens.d",
                    "SEC_TOKEN_POOL_SIGNING_KEY_FILE": str(key_file),
                },
            )
        )
        failed = attempt(address, "READ", foreign)
        assert not isinstance(failed, PingResult) or failed.method != "TOKEN", failed
