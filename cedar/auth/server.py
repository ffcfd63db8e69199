"""The server role of ``DC_AUTHENTICATE`` (spec 03 §3.3-§6): one protocol coroutine.

:func:`serve_authenticate` reads the client's policy ad, reconciles it with the
:class:`ServerPolicy` of the command's level, answers, authenticates, switches AES-GCM on,
authorizes and sends the post-authentication ad -- or resumes a cached session.  It returns
``None`` whenever the reference server would silently close the connection; the reason is logged
(never with keys, session ids or FS paths).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cedar.auth.methods import (
    UNAUTHENTICATED_USER,
    AuthContext,
    MethodResult,
    available_methods,
    get_method,
    method_bits,
)
from cedar.auth.permissions import DC_AUTHENTICATE, DC_SEC_QUERY
from cedar.auth.policy import (
    Decision,
    Requirement,
    apply_dependency,
    intersect_in_order,
    reconcile,
    split_list,
)
from cedar.auth.server_policy import ServerPolicy
from cedar.auth.session import ServerSessionCache, Session, new_session_id
from cedar.classad_wire import ClassAd, get_handshake_ad, put_classad
from cedar.errors import ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import EcdhKeyPair
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger("cedar.server.security")


@dataclass(frozen=True)
class CommandInfo:
    """How a command is registered: its level and whether it forces authentication."""

    permission: str
    force_authentication: bool = False
    #: Whether the client sends a payload message after the handshake (DC_NOP and RESCHEDULE
    #: do not).  On a resumed session that message is the proof that the peer holds the key.
    payload: bool = True


@dataclass
class HandshakeEnv:
    """What the handshake needs from the daemon hosting it."""

    policy: ServerPolicy
    sessions: ServerSessionCache
    lookup: Callable[[int], CommandInfo | None]
    valid_commands: Callable[[str, bool], list[int]]
    local_address: tuple[str, int] | None = None
    peer_address: tuple[str, int] | None = None
    shared_port_id: str | None = None


@dataclass
class ServerOutcome:
    """An authorized command, ready for its handler (``finished``: nothing left to dispatch)."""

    command: int
    permission: str
    user: str
    method: str | None
    authenticated: bool
    resumed: bool
    finished: bool = False
    session: Session | None = None
    #: The payload already read (a resumed session's first encrypted message, read as proof).
    first: MessageReader | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _duration(value: Any) -> int:
    """``SessionDuration`` is only read in its historical string form (spec 03 §3.3.1)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return 0


def _requirement(value: Any) -> Requirement:
    if value is None:
        return Requirement.NEVER
    try:
        return Requirement.parse(value)
    except ValueError:
        return Requirement.NEVER


def user_is_mapped(user: str) -> bool:
    """``unauthenticated@unmapped`` and other ``@unmapped`` identities are not mapped."""
    return not user.endswith("@unmapped")


def serve_authenticate(
    conn: CedarConnection, message: MessageReader, env: HandshakeEnv
) -> Protocol[ServerOutcome | None]:
    """Run the server side after the ``DC_AUTHENTICATE`` int was read from ``message``."""
    m1 = get_handshake_ad(message)
    message.end_of_message()
    command = _int(m1.get("Command"))
    if command is None:
        log.info("DC_AUTHENTICATE without a Command attribute; closing")
        return None
    cmd = command
    if command in (DC_AUTHENTICATE, DC_SEC_QUERY):
        cmd_value = _int(m1.get("AuthCommand"))
        if cmd_value is None:
            log.info("command %d without AuthCommand; closing", command)
            return None
        cmd = cmd_value
    info = env.lookup(cmd)
    if info is None:
        log.info("PERMISSION DENIED: command %d is not registered; closing", cmd)
        return None
    use_session = str(m1.get("UseSession", "")).upper().startswith("Y")
    if use_session:
        return (yield from _resume(conn, m1, command, cmd, info, env))
    return (yield from _new_session(conn, m1, command, cmd, info, env))


def _authorized(
    env: HandshakeEnv,
    user: str,
    info: CommandInfo,
    limit: list[str] | None,
) -> tuple[bool, str]:
    level = info.permission
    if level == "ALLOW":
        return True, ""
    if info.force_authentication and not user_is_mapped(user):
        return False, "the command requires an authenticated (mapped) identity"
    if limit is not None and level not in limit:
        return False, f"the session is limited to levels {', '.join(limit)}"
    peer = env.peer_address[0] if env.peer_address else None
    if not env.policy.is_authorized(user, peer, level):
        return False, f"{user} is not authorized for {level}"
    return True, ""


def _resume(
    conn: CedarConnection,
    m1: ClassAd,
    command: int,
    cmd: int,
    info: CommandInfo,
    env: HandshakeEnv,
) -> Protocol[ServerOutcome | None]:
    sid = m1.get("Sid")
    respond = m1.get("ResumeResponse") is True
    if not isinstance(sid, str) or not sid:
        log.info("resumption without a session id; closing")
        return None
    session = env.sessions.get(sid)
    if session is None:
        log.info("resumption of an unknown or expired session for command %d", cmd)
        if respond:
            yield Send(_ad_message(conn, {"ReturnCode": "SID_NOT_FOUND"}))
        return None
    if respond:
        yield Send(
            _ad_message(
                conn,
                {
                    "Nonce": base64.b64encode(secrets.token_bytes(33)).decode("ascii"),
                    "ReturnCode": "AUTHORIZED",
                    "RemoteVersion": env.policy.version,
                },
            )
        )
    if session.key is not None:
        conn.install_aes_key(session.key)
    elif not env.policy.resume_keyless_sessions:  # not cached then; a keyless id proves nothing
        return None
    ok, reason = _authorized(env, session.user, info, session.limit_authorization)
    if not ok:
        log.info("PERMISSION DENIED for resumed command %d (%s): %s", cmd, info.permission, reason)
        return None
    finished = command in (DC_AUTHENTICATE, DC_SEC_QUERY)
    first = None
    if info.payload and not finished and session.key is not None:
        # Proof of the key: the payload must decrypt (AES-GCM over the resume transcript)
        # before any handler runs; a peer that only knows the Sid fails here.
        first = yield Receive()
    log.debug("resumed a session for command %d as %s", cmd, session.user)
    return ServerOutcome(
        first=first,
        command=cmd if command in (DC_AUTHENTICATE, DC_SEC_QUERY) else command,
        permission=info.permission,
        user=session.user,
        method=session.method,
        authenticated=session.method is not None,
        resumed=True,
        finished=command in (DC_AUTHENTICATE, DC_SEC_QUERY),
        session=session,
    )


def _ad_message(conn: CedarConnection, attributes: dict[str, Any]) -> Any:
    ad = ClassAd()
    for name, value in attributes.items():
        ad[name] = value
    writer = conn.writer()
    put_classad(writer, ad)
    return writer


def server_methods(env: HandshakeEnv, names: list[str], ctx: AuthContext) -> list[str]:
    """The policy's methods this server can run now."""
    return available_methods(names, lambda method: method.server_available(ctx))


def _new_session(
    conn: CedarConnection,
    m1: ClassAd,
    command: int,
    cmd: int,
    info: CommandInfo,
    env: HandshakeEnv,
) -> Protocol[ServerOutcome | None]:
    policy = env.policy
    level = info.permission
    resolved = policy.resolve(level)
    ctx = AuthContext(
        role="server",
        local_address=env.local_address,
        peer_address=env.peer_address,
        uid_domain=policy.uid_domain,
        trust_domain=policy.trust_domain or policy.uid_domain,
        options=policy.options,
        shared_port_id=env.shared_port_id,
        command=cmd,
        permission=level,
        peer_ad=m1,
    )
    methods = server_methods(env, resolved.methods, ctx)

    # The server's own policy for this level (spec 03 §3.3 step 3).
    a, e, i = resolved.authentication, resolved.encryption, resolved.integrity
    if info.force_authentication:
        a = Requirement.REQUIRED
    elif level == "ALLOW":
        a = Requirement.OPTIONAL
    a_new = a
    try:
        a, e = apply_dependency(a, e)
        a, i = apply_dependency(a, i)
    except ValueError:
        log.error("the server policy for level %s is contradictory; closing", level)
        return None
    if not methods:
        a_new = Requirement.NEVER if a_new is not Requirement.REQUIRED else a_new

    if "AuthenticationNew" in m1:
        client_auth, server_auth = _requirement(m1.get("AuthenticationNew")), a_new
    else:
        client_auth, server_auth = _requirement(m1.get("Authentication")), a
    client_enc = _requirement(m1.get("Encryption"))
    client_int = _requirement(m1.get("Integrity"))
    decisions = {
        "authentication": reconcile(client_auth, server_auth),
        "encryption": reconcile(client_enc, e),
        "integrity": reconcile(client_int, i),
    }
    for feature, decision in decisions.items():
        if decision is Decision.FAIL:
            log.info(
                "command %d: cannot reconcile %s (client %s, server %s); closing",
                cmd,
                feature,
                {"authentication": client_auth, "encryption": client_enc}.get(
                    feature, client_int
                ).name,
                {"authentication": server_auth, "encryption": e}.get(feature, i).name,
            )
            return None
    auth_yes = decisions["authentication"] is Decision.YES
    auth_required = Requirement.REQUIRED in (client_auth, server_auth)

    client_methods = split_list(m1.get("AuthMethods"))
    method_list = (
        [name for name in methods if name.upper() in {c.upper() for c in client_methods}]
        if "AuthMethods" in m1
        else []
    )
    client_crypto = split_list(m1.get("CryptoMethods"))
    crypto_list = intersect_in_order(resolved.crypto_methods, client_crypto)
    if auth_yes and crypto_list and crypto_list[0] == "AES":
        decisions["encryption"] = decisions["integrity"] = Decision.YES

    client_public = m1.get("ECDHPublicKey")
    client_public = client_public if isinstance(client_public, str) and client_public else None
    ecdh: EcdhKeyPair | None = None
    legacy_key: bytes | None = None
    crypto: str | None = None
    if auth_yes or client_public:
        if crypto_list:
            crypto = crypto_list[0]
            if client_public:
                ecdh = EcdhKeyPair()
            else:
                legacy_key = os.urandom(32)
        elif Decision.YES in (decisions["encryption"], decisions["integrity"]) or (
            client_crypto and not crypto_list and _needs_crypto(client_enc, client_int)
        ):
            log.info(
                "command %d: no common crypto method (client offered %s, this server supports "
                "%s); closing",
                cmd,
                ", ".join(client_crypto) or "none",
                ", ".join(resolved.crypto_methods) or "none",
            )
            return None

    client_duration = _duration(m1.get("SessionDuration"))
    duration = min(client_duration, policy.session_duration)
    client_lease = _int(m1.get("SessionLease"))
    lease: int | None = None
    if client_lease is not None:
        lease = policy.session_lease if client_lease == 0 else client_lease
        if policy.session_lease:
            lease = min(lease, policy.session_lease)

    m2: dict[str, Any] = {
        "Enact": "YES",
        "Integrity": decisions["integrity"].value,
        "Encryption": decisions["encryption"].value,
    }
    for name in methods:
        method = get_method(name)
        if method is not None:
            m2.update(method.server_ad_attributes(ctx))
    m2["AuthMethods"] = method_list[0] if method_list else ""
    m2["TrustDomain"] = policy.trust_domain or policy.uid_domain
    if auth_yes and not auth_required:
        m2["AuthRequired"] = False
    if lease is not None:
        m2["SessionLease"] = lease
    if crypto is not None:
        m2["CryptoMethods"] = crypto
    if ecdh is not None:
        m2["ECDHPublicKey"] = ecdh.public_base64()
    m2["RemoteVersion"] = policy.version
    m2["Authentication"] = decisions["authentication"].value
    m2["AuthMethodsList"] = ",".join(method_list)
    m2["SessionDuration"] = str(duration)
    m2["CryptoMethodsList"] = ",".join(crypto_list)
    m2["NegotiatedSession"] = True
    ctx.own_ad = m2
    if str(m1.get("Enact", "")).upper().startswith("N"):
        yield Send(_ad_message(conn, m2))

    result: MethodResult | None = None
    tried = False
    if auth_yes:
        tried = True
        if not method_list:  # the reference closes here even when AuthRequired is false
            yield from authenticate_peer(conn, ctx, method_list, cmd)
            return None
        result = yield from authenticate_peer(conn, ctx, method_list, cmd)
        if result is None or not result.success:
            if auth_required:
                log.info("command %d: required authentication failed; closing", cmd)
                return None
            result = None
        else:
            if legacy_key is not None:
                wrapped = result.wrap_key(legacy_key) if result.wrap_key else legacy_key
                yield Send(conn.writer().put_int(1))
                yield Send(
                    conn.writer()
                    .put_int(32)
                    .put_int(3)
                    .put_int(0)
                    .put_int(len(wrapped))
                    .put_bytes(wrapped)
                )
            else:
                yield Send(conn.writer().put_int(0))

    key: bytes | None = None
    if crypto == "AES":
        if ecdh is not None and client_public is not None:
            key = ecdh.session_key(client_public)
        elif legacy_key is not None and result is not None:
            key = legacy_key
    if key is not None:
        conn.install_aes_key(key)

    user = (result.fqu if result is not None else None) or UNAUTHENTICATED_USER
    method_name = result.extra.get("method") if result is not None else None
    limit = result.limit_authorization if result is not None else None
    ok, reason = _authorized(env, user, info, limit)
    sid = new_session_id()
    p1: dict[str, Any] = {
        "Sid": sid,
        "User": user,
        "ReturnCode": "AUTHORIZED" if ok else "DENIED",
        # int(): str() of an IntEnum is its name on Python 3.10 (the numbers go on the wire)
        "ValidCommands": ",".join(
            str(int(c)) for c in env.valid_commands(level, user_is_mapped(user))
        ),
    }
    if tried:
        p1["TriedAuthentication"] = True
    yield Send(_ad_message(conn, p1))
    if not ok:
        log.info("PERMISSION DENIED for command %d (%s): %s", cmd, level, reason)
        return None
    session = Session(
        sid=sid,
        key=key,
        crypto_method=crypto if key is not None else None,
        user=user,
        method=method_name,
        valid_commands=frozenset(env.valid_commands(level, user_is_mapped(user))),
        policy=m2,
        remote_version=m1.get("RemoteVersion")
        if isinstance(m1.get("RemoteVersion"), str)
        else None,
        duration=float(duration),
        lease=float(lease or 0),
        limit_authorization=limit,
        tried_authentication=tried,
    )
    if str(m1.get("NewSession", "")).upper().startswith("Y") and (
        key is not None or env.policy.resume_keyless_sessions
    ):
        env.sessions.add(session)  # a keyless session is not resumable unless the policy says
    log.debug(
        "authorized command %d (%s) for %s via %s", cmd, level, user, method_name or "no method"
    )
    finished = command in (DC_AUTHENTICATE, DC_SEC_QUERY)
    if command == DC_SEC_QUERY:
        yield Send(_ad_message(conn, {"AuthorizationSucceeded": True}))
    return ServerOutcome(
        command=cmd if finished else command,
        permission=level,
        user=user,
        method=method_name,
        authenticated=result is not None,
        resumed=False,
        finished=finished,
        session=session,
    )


def _needs_crypto(encryption: Requirement, integrity: Requirement) -> bool:
    return Requirement.REQUIRED in (encryption, integrity)


def authenticate_peer(
    conn: CedarConnection,
    ctx: AuthContext,
    method_list: list[str],
    cmd: int,
    *,
    first: MessageReader | None = None,
) -> Protocol[MethodResult | None]:
    """Server side of the method loop (spec 04 §1.3); bounded so a client cannot spin it.

    ``first`` is a message whose remaining bytes hold the first mask (raw in-band start).
    """
    if not method_list:
        # The reference waits for the client's next message and closes without answering.
        with contextlib.suppress(ConnectionClosed):
            yield Receive()
        log.info("command %d: no authentication method in common; closing", cmd)
        return None
    offered_mask = method_bits(method_list)
    for _round in range(len(method_list) + 2):
        if first is not None:
            message, first = first, None
        else:
            try:
                message = yield Receive()
            except ConnectionClosed:
                return None
        mask = message.get_int()
        message.end_of_message()
        chosen = None
        for name in method_list:
            method = get_method(name)
            if method is not None and mask & method.bit & offered_mask:
                chosen = method
                break
        yield Send(conn.writer().put_int(chosen.bit if chosen else 0))
        if chosen is None:
            log.info("command %d: the client has no acceptable authentication method left", cmd)
            return None
        result = yield from chosen.server(conn, ctx)
        if result.success:
            result.extra.setdefault("method", chosen.name)
            return result
        log.info("command %d: %s authentication failed", cmd, chosen.name)
    return None
