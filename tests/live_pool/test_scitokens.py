"""SciTokens against the real pool: tokens minted here with the pool's offline issuer key (pyjwt,
ES256) are accepted, and the daemons refuse a wrong audience, an expired token, a foreign key and
a read-only scope used for WRITE.  Needs a pool started with ``MINICONDOR_SCITOKENS=1``
(``CEDAR_LIVE_SCITOKEN_*`` and ``CEDAR_LIVE_SSL_CAFILE``)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from cedar.commands import ping
from cedar.conformance import Target
from cedar.errors import CedarError


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: start the pool with MINICONDOR_SCITOKENS=1")
    return value


def _mint(key: object, *, aud: str | None = None, scope: str = "condor:/READ condor:/WRITE",
          lifetime: int = 600, issued: int | None = None) -> str:  # fmt: skip
    now = int(time.time()) if issued is None else issued
    claims = {
        "iss": _env("CEDAR_LIVE_SCITOKEN_ISSUER"),
        "sub": "testuser",
        "aud": aud or _env("CEDAR_LIVE_SCITOKEN_AUDIENCE"),
        "scope": scope,
        "ver": "scitoken:2.0",
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "jti": str(uuid.uuid4()),
    }
    return jwt.encode(claims, key, algorithm="ES256")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def issuer_key() -> object:
    path = _env("CEDAR_LIVE_SCITOKEN_ISSUER_KEY")
    if not os.access(path, os.R_OK):
        pytest.skip(f"the issuer key {path} is not readable by this user")
    return serialization.load_pem_private_key(Path(path).read_bytes(), password=None)


def _ping(live_target: Target, tmp_path: Path, token: str, level: str):
    file = tmp_path / "token"
    file.write_text(token + "\n")
    file.chmod(0o600)
    target = Target(
        live_target.pool, scitoken_file=str(file), ssl_cafile=_env("CEDAR_LIVE_SSL_CAFILE")
    )
    return ping(target.pool, level, security=target.security(["SCITOKENS"]), timeout=target.timeout)


@pytest.mark.parametrize("level", ["READ", "WRITE"])
def test_minted_token_is_accepted(live_target, tmp_path, issuer_key, level) -> None:
    result = _ping(live_target, tmp_path, _mint(issuer_key), level)
    assert result.authorized, result.error
    assert result.method == "SCITOKENS" and result.user == "testuser@minicondor"


def _refused(live_target: Target, tmp_path: Path, token: str, level: str = "READ") -> str:
    try:
        result = _ping(live_target, tmp_path, token, level)
    except CedarError as exc:
        return str(exc)
    assert not result.authorized, f"accepted: {result}"
    return str(result.error)


def test_wrong_audience_is_refused(live_target, tmp_path, issuer_key) -> None:
    assert _refused(live_target, tmp_path, _mint(issuer_key, aud="https://elsewhere.example"))


def test_expired_token_is_refused(live_target, tmp_path, issuer_key) -> None:
    past = int(time.time()) - 7200
    assert _refused(live_target, tmp_path, _mint(issuer_key, lifetime=600, issued=past))


def test_foreign_key_is_refused(live_target, tmp_path) -> None:
    _env("CEDAR_LIVE_SCITOKEN_ISSUER_KEY")
    assert _refused(live_target, tmp_path, _mint(ec.generate_private_key(ec.SECP256R1())))


def test_read_only_scope_is_refused_for_write(live_target, tmp_path, issuer_key) -> None:
    token = _mint(issuer_key, scope="condor:/READ")
    assert _ping(live_target, tmp_path, token, "READ").authorized
    assert _refused(live_target, tmp_path, token, "WRITE")


def test_scitoken_at_the_schedd_for_every_job_command(live_target: Target) -> None:
    """The pool's ready token (testuser): ping the schedd, then submit → edit → release → hold →
    rm → history with SCITOKENS as the only method (the conformance check ``jobs.lifecycle``)."""
    from cedar.conformance.checks import CHECKS, run_check

    target = Target(
        live_target.pool,
        scitoken_file=_env("CEDAR_LIVE_SCITOKEN_FILE"),
        ssl_cafile=_env("CEDAR_LIVE_SSL_CAFILE"),
        write_method="SCITOKENS",
        iwd=live_target.iwd,
    )
    if not os.access(str(target.scitoken_file), os.R_OK):
        pytest.skip("the pool's SciToken is not readable by this user")
    schedd = str(target.schedd_ad()["MyAddress"])
    result = ping(schedd, "WRITE", security=target.security(["SCITOKENS"]), timeout=target.timeout)
    assert result.authorized and result.method == "SCITOKENS", result.error
    assert result.user == "testuser@minicondor"
    (lifecycle,) = [c for c in CHECKS if c.name == "jobs.lifecycle"]
    outcome = run_check(lifecycle, target)
    assert outcome.status == "pass", outcome.detail
