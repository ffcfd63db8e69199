"""Token discovery rules (spec 04 §5.3, §8.2), SciToken validation reasons, and ``cedar token``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cedar.auth.scitoken import (
    MapFile,
    SciTokenError,
    SciTokenIssuer,
    SciTokenServerSettings,
    discover_scitoken,
    validate_scitoken,
)
from cedar.auth.signing_key import SigningKey, read_secure_file
from cedar.auth.token import IdToken, create_token, discover_tokens, select_token
from cedar.cli import token as token_cli
from cedar.config import Config

from .conftest import AUDIENCE
from .pki import Issuer, make_issuer


def test_token_directory_rules(tmp_path: Path, pool_key: SigningKey) -> None:
    def mint(sub: str, iss: str = "td", key: SigningKey = pool_key) -> str:
        return create_token(key, issuer=iss, subject=sub)

    d = tmp_path / "tokens.d"
    d.mkdir()
    files = {
        "a": f"# comment\n\n   {mint('first')}  \r\n",
        "TOOL_auto_generated_token": mint("auto"),
        "b.rpmsave": mint("excluded"),
        "c": mint("world-readable"),
        "d": "not a token\n" + mint("second", iss="other"),
    }
    for name, text in files.items():
        (d / name).write_text(text)
        (d / name).chmod(0o600)
    (d / "c").chmod(0o644)
    found = discover_tokens(str(d), exclude=Config().exclude_regexp())
    assert [f.token.subject for f in found] == ["auto", "first", "second"]
    assert select_token(found, "other", ["POOL"]).token.subject == "second"  # type: ignore[union-attr]
    assert select_token(found, "td", ["NOTPOOL"]) is None
    with pytest.raises(Exception, match="readable by others"):
        read_secure_file(d / "c")


def test_scitoken_discovery_order(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / f"bt_u{os.geteuid()}").write_text(" from-xdg \n")
    assert discover_scitoken(environ={"XDG_RUNTIME_DIR": str(xdg)}) == (
        "from-xdg",
        str(xdg / f"bt_u{os.geteuid()}"),
    )
    env = {"BEARER_TOKEN": " from-env\n", "XDG_RUNTIME_DIR": str(xdg)}
    assert discover_scitoken(environ=env) == ("from-env", "BEARER_TOKEN")
    file = tmp_path / "file"
    file.write_text("# only a comment\n")
    assert discover_scitoken(scitokens_file=str(file), environ=env) is None
    with pytest.raises(SciTokenError, match="CR LF"):
        discover_scitoken(environ={"BEARER_TOKEN": "a\r\nb"})


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"aud": "https://elsewhere"}, "audience"),
        ({"exp": 1000}, "expired"),
        ({"scope": "storage.read:/"}, "no condor:/<LEVEL> scope"),
        ({"sub": "mallory"}, None),  # maps fine: the rule takes any subject
    ],
)
def test_scitoken_validation_reasons(issuer: Issuer, overrides: dict, reason: str | None) -> None:
    settings = SciTokenServerSettings(
        [SciTokenIssuer.with_key(issuer.url, issuer.public_pem, issuer.kid)],
        [AUDIENCE],
        MapFile.parse(r"SCITOKENS ^https://issuer\.authlab\.test,(.*)$ \1@example.com"),
    )
    token = issuer.mint(**overrides)
    if reason is None:
        assert validate_scitoken(token, settings).user == overrides["sub"]
        return
    with pytest.raises(SciTokenError, match=reason) as info:
        validate_scitoken(token, settings)
    assert token not in str(info.value)


def test_scitoken_unknown_issuer_and_forged_signature(issuer: Issuer) -> None:
    settings = SciTokenServerSettings(
        [SciTokenIssuer.with_key(issuer.url, issuer.public_pem, issuer.kid)],
        [AUDIENCE],
        MapFile.parse(r"SCITOKENS .* someone"),
    )
    with pytest.raises(SciTokenError, match="not trusted"):
        validate_scitoken(make_issuer("https://stranger").mint(), settings)
    forger = make_issuer(issuer.url)  # same issuer URL, different key
    with pytest.raises(SciTokenError, match="signature or claims invalid"):
        validate_scitoken(forger.mint(), settings)
    unmapped = SciTokenServerSettings(settings.issuers, [AUDIENCE], MapFile())
    with pytest.raises(SciTokenError, match="no CERTIFICATE_MAPFILE entry"):
        validate_scitoken(issuer.mint(), unmapped)


def run_cli(*argv: str) -> int:
    return token_cli.run(token_cli.build_parser().parse_args(list(argv)), Config())


def test_cli_create_list_and_signing_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "POOL"
    assert run_cli("create-signing-key", str(key_file)) == 0
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(key_file.read_bytes()) == 64
    assert run_cli("create-signing-key", str(key_file)) == 1  # never overwrites silently
    capsys.readouterr()
    assert (
        run_cli(
            "create",
            "--key-file",
            str(key_file),
            "--issuer",
            "td.example",
            "--identity",
            "bob@td",
            "--authz",
            "READ",
            "--authz",
            "ADVERTISE_STARTD",
            "--lifetime",
            "600",
        )
        == 0
    )
    text = capsys.readouterr().out.strip()
    token = IdToken.parse(text)
    assert token.header == {"alg": "HS256", "kid": "POOL"}
    assert token.claims["scope"] == "condor:/READ condor:/ADVERTISE_STARTD"
    assert token.claims["exp"] - token.claims["iat"] == 600 and len(token.claims["jti"]) == 32
    import base64

    payload = base64.urlsafe_b64decode(text.split(".")[1] + "==").decode()
    assert '"scope":"condor:\\/READ condor:\\/ADVERTISE_STARTD"' in payload  # HTCondor's escaping
    key = SigningKey.load(key_file, "POOL")
    assert (
        create_token(  # same key, same claims -> same signature
            key,
            issuer="td.example",
            subject="bob@td",
            lifetime=600,
            authorizations=["READ", "ADVERTISE_STARTD"],
            token_id=token.claims["jti"],
            issued_at=token.claims["iat"],
        )
        == text
    )
    tokens = tmp_path / "tokens.d"
    tokens.mkdir()
    assert (
        run_cli(
            "create",
            "--key-file",
            str(key_file),
            "--issuer",
            "td.example",
            "--identity",
            "carol@td",
            "--token",
            str(tokens / "carol"),
        )
        == 0
    )
    assert (tokens / "carol").stat().st_mode & 0o777 == 0o600
    capsys.readouterr()
    assert run_cli("list", "--dir", str(tokens)) == 0
    listing = capsys.readouterr().out
    # condor_token_list's format: header and payload as sorted JSON, then the file
    assert listing.startswith('Header: {"alg":"HS256","kid":"POOL"} Payload: {"iat":')
    assert '"sub":"carol@td"}' in listing and '"exp"' not in listing
    assert listing.endswith(f" File: {tokens / 'carol'}\n")
    signature = (tokens / "carol").read_text().strip().rsplit(".", 1)[1]
    assert signature not in listing
    assert run_cli("create", "--key-file", str(tmp_path / "missing"), "--identity", "x") == 1
    assert "cannot open" in capsys.readouterr().err
