"""The reference client (htcondor2, in a subprocess) authenticates to OUR daemon.

IDTOKENS with a token minted by ``cedar token create``; a SciToken from a local test issuer over
SSL; SSL with a client certificate.  Each must end in an AES-GCM session with the identity
visible in the ``htcondor2.ping`` result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.cli import token as token_cli
from cedar.config import Config

from .conftest import AUDIENCE, TRUST_DOMAIN, token_dir
from .pki import Issuer, Pki

pytestmark = pytest.mark.reference


def cli(*argv: str) -> int:
    parser = token_cli.build_parser()
    return token_cli.run(parser.parse_args(list(argv)), Config())


def assert_aes_session(ad: dict[str, Any], user: str, method: str) -> None:
    assert "error" not in ad, ad.get("error", "") + "\n" + ad["_log"][-3000:]
    assert ad["MyRemoteUserName"] == user
    assert ad["AuthMethods"] == method
    assert ad["CryptoMethods"] == "AES" and ad["Encryption"] == "YES"
    assert ad["AuthorizationSucceeded"] in (True, "true")


def test_reference_client_idtoken_from_cedar_token_create(
    tmp_path: Path, serve: Any, reference_ping: Any
) -> None:
    key_file = tmp_path / "POOL"
    assert cli("create-signing-key", str(key_file)) == 0
    tokens = tmp_path / "tokens.d"
    tokens.mkdir()
    assert (
        cli(
            "create",
            "--key-file",
            str(key_file),
            "--issuer",
            TRUST_DOMAIN,
            "--identity",
            f"alice@{TRUST_DOMAIN}",
            "--lifetime",
            "600",
            "--token",
            str(tokens / "alice"),
        )
        == 0
    )
    key = SigningKey.load(key_file, "POOL")
    with serve(["TOKEN"], signing_keys=SigningKeyStore([key])) as address:
        ad = reference_ping(
            address,
            "WRITE",
            SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS",
            SEC_TOKEN_DIRECTORY=str(tokens),
        )
    assert_aes_session(ad, f"alice@{TRUST_DOMAIN}", "IDTOKENS")


def test_reference_client_scitoken_over_ssl(
    tmp_path: Path, serve: Any, reference_ping: Any, pki: Pki, issuer: Issuer
) -> None:
    token_file = tmp_path / "scitoken"
    token_file.write_text("# a comment line\n" + issuer.mint(aud=AUDIENCE) + "\n")
    with serve(["SCITOKENS"]) as address:
        ad = reference_ping(
            address,
            "WRITE",
            SEC_CLIENT_AUTHENTICATION_METHODS="SCITOKENS",
            AUTH_SSL_CLIENT_CAFILE=str(pki.ca),
            SCITOKENS_FILE=str(token_file),
        )
    assert_aes_session(ad, f"alice@{TRUST_DOMAIN}", "SCITOKENS")


def test_reference_client_ssl_with_client_certificate(
    serve: Any, reference_ping: Any, pki: Pki
) -> None:
    with serve(["SSL"]) as address:
        ad = reference_ping(
            address,
            "WRITE",
            SEC_CLIENT_AUTHENTICATION_METHODS="SSL",
            AUTH_SSL_CLIENT_CAFILE=str(pki.ca),
            AUTH_SSL_CLIENT_CERTFILE=str(pki.client_cert),
            AUTH_SSL_CLIENT_KEYFILE=str(pki.client_key),
        )
    assert_aes_session(ad, f"alice@{TRUST_DOMAIN}", "SSL")


def test_reference_client_expired_idtoken_is_refused(
    tmp_path: Path, serve: Any, reference_ping: Any, pool_key: SigningKey
) -> None:
    import time

    from cedar.auth.token import create_token

    old = create_token(
        pool_key,
        issuer=TRUST_DOMAIN,
        subject=f"alice@{TRUST_DOMAIN}",
        lifetime=60,
        issued_at=int(time.time()) - 3600,
    )
    with serve(["TOKEN"]) as address:
        ad = reference_ping(
            address,
            "WRITE",
            SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS",
            SEC_TOKEN_DIRECTORY=str(token_dir(tmp_path, old)),
        )
    assert "error" in ad, ad
