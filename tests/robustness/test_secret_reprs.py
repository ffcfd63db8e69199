"""No token, key or session id in the repr/str of any public object that may hold one.

Secrets are planted in every object of cedar's security API that carries them; the test then
walks each object's repr, str and (recursively) the reprs of its public attributes.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from cedar.auth import ClientSecurity, SecurityConfig, ServerPolicy
from cedar.auth.client import CommandSession
from cedar.auth.methods import AuthContext, MethodResult
from cedar.auth.server import ServerOutcome
from cedar.auth.session import ClientSessionCache, ServerSessionCache, Session
from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.token import FoundToken, IdToken, create_token
from cedar.classad_wire.evaluate import Budget
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.stream.connection import CedarConnection

SID = "secrethost:1:SESSIONIDSECRETSESSIONIDSECRET"
KEY = b"K" * 32
KEY_HEX = KEY.hex()
SIGNING = SigningKey("POOL", b"SIGNINGKEYSECRETSIGNINGKEYSECRET")
TOKEN = create_token(SIGNING, issuer="example.com", subject="alice@example.com", lifetime=86400)
SIGNATURE = TOKEN.rsplit(".", 1)[1]
SECRETS = [SID, KEY.decode(), KEY_HEX, TOKEN, SIGNATURE, "SIGNINGKEYSECRET", "BEARERSECRET"]


def _objects() -> Iterator[Any]:
    options = {"token": TOKEN, "bearer": "BEARERSECRET", "signing_keys": SigningKeyStore([SIGNING])}
    config = SecurityConfig(options=dict(options))
    yield config
    security = ClientSecurity(config)
    session = Session(sid=SID, key=KEY, crypto_method="AES", user="alice@x", method="TOKEN")
    security.sessions.store(session, "<127.0.0.1:1>")
    yield security
    yield security.sessions
    yield session
    server_sessions = ServerSessionCache()
    server_sessions.add(session)
    yield server_sessions
    yield ClientSessionCache()
    yield ServerPolicy(options=dict(options))
    yield AuthContext(role="client", options=dict(options))
    yield MethodResult(True, user="alice", wrap_key=lambda k: k, unwrap_key=lambda k: k)
    token = IdToken.parse(TOKEN)
    yield token
    yield FoundToken(token, "memory")
    yield SIGNING
    yield SigningKeyStore([SIGNING])
    conn = CedarConnection()
    conn.install_aes_key(KEY)
    yield conn
    yield CommandSession(conn, 5, False, session_id=SID, resumed=True)
    yield ServerOutcome(5, "READ", "alice@x", "TOKEN", True, True, session=session)
    daemon = Daemon("d", "COLLECTOR", policy=ServerPolicy(options=dict(options)))
    yield daemon
    yield CommandRequest(5, conn, None, "alice@x", "TOKEN", "READ", daemon=daemon)
    yield Budget()
    yield from _kerberos_objects()


def _kerberos_objects() -> Iterator[Any]:
    """KERBEROS' keys, tickets and caches (spec 10), holding KEY as every key."""
    from cedar.auth.krb5.crypto import Key
    from cedar.auth.krb5.files import Credential, CredentialCache, KeytabEntry
    from cedar.auth.krb5.messages import Authenticator, Principal, TicketContents, seal_ticket
    from cedar.auth.methods.kerberos import ReplayCache

    key = Key(18, KEY)
    user, service = Principal(("alice",), "R"), Principal(("host", "h"), "R")
    ticket = seal_ticket(service, key, user, key, (0.0, 1.0))
    credential = Credential(user, service, key, 0.0, 1.0, ticket)
    yield key
    yield ticket
    yield credential
    yield CredentialCache("/tmp/cc", user, (credential,))
    yield KeytabEntry(service, 2, key)
    yield TicketContents(key, user, 0.0, None, 1.0, ())
    yield Authenticator(user, 0.0, 0, subkey=key, seq_number=1, cksum=(16, KEY))
    yield ReplayCache()


def _texts(obj: Any, depth: int = 0, seen: set[int] | None = None) -> Iterator[str]:
    """repr/str of ``obj`` and of the objects in its public dataclass fields."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 2 or isinstance(obj, (str, bytes)):
        return  # a secret's own value is the secret: only containers are checked
    seen.add(id(obj))
    yield repr(obj)
    yield str(obj)
    yield f"{obj}"
    names: list[str] = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj) if f.repr]
    for name in names:
        if not name.startswith("_"):
            yield from _texts(getattr(obj, name), depth + 1, seen)


@pytest.mark.parametrize("obj", list(_objects()), ids=lambda o: type(o).__name__)
def test_no_secret_in_any_repr(obj: Any) -> None:
    for text in _texts(obj):
        for secret in SECRETS:
            assert secret not in text, f"{type(obj).__name__} shows a secret: {text[:200]}"


def test_no_secret_in_logs_of_a_token_handshake(caplog: pytest.LogCaptureFixture) -> None:
    from cedar.commands import ping
    from cedar.config import Config

    key_store = SigningKeyStore([SIGNING])
    from cedar.auth import LevelPolicy

    policy = ServerPolicy(
        levels={"DEFAULT": LevelPolicy(methods=["TOKEN"], authentication="REQUIRED")},
        options={"config": Config(), "signing_keys": key_store},
        trust_domain="example.com",
        uid_domain="example.com",
    )
    daemon = Daemon("t", "SCHEDD", policy=policy)
    security = ClientSecurity(
        SecurityConfig(
            methods=["TOKEN"],
            options={"config": Config(), "token": TOKEN, "SEC_TOKEN_DIRECTORY": "/nonexistent"},
            trust_domain="example.com",
            uid_domain="example.com",
        )
    )
    caplog.set_level(logging.DEBUG)
    with daemon.run_in_thread():
        assert ping(daemon.address, "WRITE", security=security, timeout=20).authorized
        assert ping(daemon.address, "READ", security=security, timeout=20).authorized
    session_ids = [s.sid for s in security.sessions._sessions.values()]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for secret in [TOKEN, SIGNATURE, *session_ids]:
        assert secret not in logged
