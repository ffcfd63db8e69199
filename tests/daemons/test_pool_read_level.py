"""The mock pool's READ level is a real pool's (``SECURITY : Recommended_v9_0``): encryption
and integrity OPTIONAL there, so raw reads are answered, yet a negotiated READ still runs under
AES-GCM when the client offers it (the key switches encryption on whatever M2's Encryption
says, spec 03 §5.4) -- anonymously, and with a token.  Other levels keep AES required."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from typing import Any

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.policy import Requirement
from cedar.classad_wire import ClassAd
from cedar.commands import run_command
from cedar.daemons.pool import MockPool
from cedar.numbers import Command
from tests.support import query_names


def query(session: Any) -> Any:
    ad = ClassAd()
    ad["MyType"] = "Query"
    names = yield from query_names(session, ad)
    return session, names


@pytest.fixture(scope="module")
def token_pool() -> Iterator[MockPool]:
    pool = MockPool.for_setup("tokens")
    with pool.run_in_thread():
        yield pool


def token(pool: MockPool) -> str:
    assert pool.token_dir is not None
    with open(f"{pool.token_dir}/cedar-pool.token") as f:
        return f.read().strip()


def test_an_anonymous_negotiated_read_is_encrypted(token_pool: MockPool) -> None:
    security = ClientSecurity(SecurityConfig(methods=[]))
    session, _ = run_command(token_pool.address, Command.QUERY_STARTD_ADS, query, security=security)
    assert session.crypto_method == "AES" and session.encrypted
    assert session.authenticated_user is None or "unauthenticated" in session.authenticated_user


def test_a_token_authenticated_read_is_encrypted(token_pool: MockPool) -> None:
    config = SecurityConfig(
        methods=["TOKEN"], authentication="REQUIRED", options={"token": token(token_pool)}
    )
    session, _ = run_command(
        token_pool.address, Command.QUERY_STARTD_ADS, query, security=ClientSecurity(config)
    )
    assert session.method == "TOKEN" and session.encrypted
    assert session.authenticated_user.startswith(f"{getpass.getuser()}@")


def test_a_client_without_crypto_reads_in_the_clear(token_pool: MockPool) -> None:
    """READ no longer insists on encryption (as a real pool); the other levels still do."""
    clear = SecurityConfig(methods=[], crypto_methods=[], encryption="NEVER", integrity="NEVER")
    session, _ = run_command(
        token_pool.address, Command.QUERY_STARTD_ADS, query, security=ClientSecurity(clear)
    )
    assert session.crypto_method is None and not session.encrypted
    assert token_pool.policy.resolve("WRITE").encryption is Requirement.REQUIRED
