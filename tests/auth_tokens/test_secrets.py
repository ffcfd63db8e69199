"""Tokens, signatures and keys never appear in logs, reprs or exception texts."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.token import IdToken, b64url_encode, create_token, discover_tokens
from cedar.cli import token as token_cli
from cedar.commands import ping
from cedar.config import Config
from cedar.errors import CedarError

from .conftest import AUDIENCE, TRUST_DOMAIN, token_dir
from .pki import Issuer, Pki


def secrets_of(token: str, key: SigningKey) -> list[str]:
    signature = token.rsplit(".", 1)[1]
    return [signature, token, key.raw.hex(), key.file_bytes().hex(), key.jwt_key.hex()]


def test_reprs_hide_secrets(pool_key: SigningKey) -> None:
    token = create_token(pool_key, issuer=TRUST_DOMAIN, subject="a@b")
    parsed = IdToken.parse(token)
    texts = [repr(parsed), str(parsed), repr(pool_key), repr(SigningKeyStore([pool_key]))]
    for secret in secrets_of(token, pool_key):
        assert not any(secret in text for text in texts)
    assert "a@b" in repr(parsed)


def test_handshakes_log_no_secrets(
    tmp_path: Path,
    serve: Any,
    pool_key: SigningKey,
    pki: Pki,
    issuer: Issuer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = create_token(pool_key, issuer=TRUST_DOMAIN, subject=f"alice@{TRUST_DOMAIN}")
    wrong_key = SigningKey.generate("POOL")
    wrong = create_token(wrong_key, issuer=TRUST_DOMAIN, subject=f"alice@{TRUST_DOMAIN}")
    scitoken = issuer.mint(aud=AUDIENCE)
    bad_scitoken = issuer.mint(aud="https://elsewhere")
    directory = token_dir(tmp_path, good)
    errors: list[str] = []
    caplog.set_level(logging.DEBUG)
    from cedar.auth.tls import TlsClientSettings

    tls = TlsClientSettings(cafile=str(pki.ca), use_default_cas=False)
    cases = [
        (["TOKEN"], {"SEC_TOKEN_DIRECTORY": str(directory)}),
        (["TOKEN"], {"token": wrong}),
        (["SCITOKENS"], {"ssl_client": tls, "scitoken": scitoken}),
        (["SCITOKENS"], {"ssl_client": tls, "scitoken": bad_scitoken}),
    ]
    with serve(["TOKEN", "SCITOKENS"]) as address:
        for methods, options in cases:
            security = ClientSecurity(
                SecurityConfig(
                    methods=methods,
                    trust_domain=TRUST_DOMAIN,
                    options={"config": Config(), **options},
                )
            )
            try:
                result = ping(address, "READ", security=security)
                errors.append(repr(result))
            except CedarError as exc:
                errors.append(str(exc))
                errors.append(repr(exc))
    assert (
        token_cli.run(
            token_cli.build_parser().parse_args(["list", "--dir", str(directory)]), Config()
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert f"alice@{TRUST_DOMAIN}" in printed
    everything = "\n".join([caplog.text, printed, *errors])
    assert "TOKEN" in caplog.text  # the log did record the handshakes
    secrets = secrets_of(good, pool_key) + secrets_of(wrong, wrong_key)
    secrets += [scitoken, bad_scitoken, scitoken.rsplit(".", 1)[1], bad_scitoken.rsplit(".", 1)[1]]
    for secret in secrets:
        assert secret not in everything
    assert b64url_encode(IdToken.parse(good).signature) not in everything
    assert discover_tokens(str(directory))[0].token.subject == f"alice@{TRUST_DOMAIN}"
