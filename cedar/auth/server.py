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
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
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
from cedar.auth.server_policy import ResolvedPolicy, ServerPolicy
from cedar.auth.session import ServerSessionCache, Session, new_session_id
from cedar.classad_wire import ClassAd, get_handshake_ad, put_classad
from cedar.errors import ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import EcdhKeyPair
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger("cedar.daemons.security")


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


def server_context(
    env: HandshakeEnv, command: int, permission: str, *, peer_ad: ClassAd | None = None
) -> AuthContext:
    """What the server side of an authentication method sees of this connection."""
    return AuthContext(
        role="server",
        local_address=env.local_address,
        peer_address=env.peer_address,
        uid_domain=env.policy.uid_domain,
        trust_domain=env.policy.trust_domain or env.policy.uid_domain,
        options=env.policy.options,
        shared_port_id=env.shared_port_id,
        command=command,
        permission=permission,
        peer_ad=peer_ad,
    )


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


@dataclass
class _ServerHandshake:
    """What the server's new-session steps share (spec 03 §3.3-§6.1): one per connection."""

    conn: CedarConnection
    m1: ClassAd
    command: int
    cmd: int
    info: CommandInfo
    env: HandshakeEnv
    ctx: AuthContext
    resolved: ResolvedPolicy  # this level's settings
    methods: list[str] = field(default_factory=list)
    #: Our policy after the dependency rule (a, e, i) and the one for new sessions (a_new).
    a: Requirement = Requirement.OPTIONAL
    a_new: Requirement = Requirement.OPTIONAL
    e: Requirement = Requirement.OPTIONAL
    i: Requirement = Requirement.OPTIONAL
    client_auth: Requirement = Requirement.NEVER
    client_enc: Requirement = Requirement.NEVER
    client_int: Requirement = Requirement.NEVER
    decisions: dict[str, Decision] = field(default_factory=dict)
    method_list: list[str] = field(default_factory=list)
    client_crypto: list[str] = field(default_factory=list)
    crypto_list: list[str] = field(default_factory=list)
    client_public: str | None = None
    ecdh: EcdhKeyPair | None = None
    legacy_key: bytes | None = None
    crypto: str | None = None
    duration: int = 0
    lease: int | None = None
    m2: dict[str, Any] = field(default_factory=dict)
    result: MethodResult | None = None
    tried: bool = False
    key: bytes | None = None

    @property
    def auth_yes(self) -> bool:
        return self.decisions["authentication"] is Decision.YES

    @property
    def auth_required(self) -> bool:
        return Requirement.REQUIRED in (self.client_auth, self.a_new_or_a)

    @property
    def a_new_or_a(self) -> Requirement:
        """Our authentication value that meets the client's (new-session or old spelling)."""
        return self.a_new if "AuthenticationNew" in self.m1 else self.a


#: A step of the server handshake: a protocol returning False where the server silently closes.
_ServerStep = Callable[[_ServerHandshake], Protocol[bool]]


def _pure(decide: Callable[[_ServerHandshake], bool]) -> _ServerStep:
    """A step that only decides (no message): the table runs every step alike."""

    def step(hs: _ServerHandshake) -> Protocol[bool]:
        return decide(hs)
        yield  # pragma: no cover  (makes this a generator)

    step.__name__ = step.__qualname__ = decide.__name__
    step.__doc__ = decide.__doc__
    return step


def _own_policy(hs: _ServerHandshake) -> bool:
    """Spec 03 §3.3 step 3: this level's policy, forced or relaxed, after the dependency rule."""
    level = hs.info.permission
    a, e, i = hs.resolved.authentication, hs.resolved.encryption, hs.resolved.integrity
    if hs.info.force_authentication:
        a = Requirement.REQUIRED
    elif level == "ALLOW":
        a = Requirement.OPTIONAL
    a_new = a
    try:
        a, e = apply_dependency(a, e)
        a, i = apply_dependency(a, i)
    except ValueError:
        log.error("the server policy for level %s is contradictory; closing", level)
        return False
    if not hs.methods:
        a_new = Requirement.NEVER if a_new is not Requirement.REQUIRED else a_new
    hs.a, hs.a_new, hs.e, hs.i = a, a_new, e, i
    return True


def _reconcile(hs: _ServerHandshake) -> bool:
    """Spec 03 §3.3.1: one decision per feature from the client's M1 values and ours."""
    m1 = hs.m1
    hs.client_auth = _requirement(
        m1.get("AuthenticationNew") if "AuthenticationNew" in m1 else m1.get("Authentication")
    )
    hs.client_enc = _requirement(m1.get("Encryption"))
    hs.client_int = _requirement(m1.get("Integrity"))
    pairs = {
        "authentication": (hs.client_auth, hs.a_new_or_a),
        "encryption": (hs.client_enc, hs.e),
        "integrity": (hs.client_int, hs.i),
    }
    for feature, (client, server) in pairs.items():
        hs.decisions[feature] = decision = reconcile(client, server)
        if decision is Decision.FAIL:
            log.info(
                "command %d: cannot reconcile %s (client %s, server %s); closing",
                hs.cmd,
                feature,
                client.name,
                server.name,
            )
            return False
    return True


def _choose_crypto(hs: _ServerHandshake) -> bool:
    """The methods and the crypto both sides have; an ECDH pair or a legacy key (spec 03 §5)."""
    m1 = hs.m1
    client_methods = {c.upper() for c in split_list(m1.get("AuthMethods"))}
    if "AuthMethods" in m1:
        hs.method_list = [name for name in hs.methods if name.upper() in client_methods]
    hs.client_crypto = split_list(m1.get("CryptoMethods"))
    hs.crypto_list = intersect_in_order(hs.resolved.crypto_methods, hs.client_crypto)
    if hs.auth_yes and hs.crypto_list and hs.crypto_list[0] == "AES":
        hs.decisions["encryption"] = hs.decisions["integrity"] = Decision.YES
    public = m1.get("ECDHPublicKey")
    hs.client_public = public if isinstance(public, str) and public else None
    if not (hs.auth_yes or hs.client_public):
        return True
    if hs.crypto_list:
        hs.crypto = hs.crypto_list[0]
        if hs.client_public:
            hs.ecdh = EcdhKeyPair()
        else:
            hs.legacy_key = hs.env.policy.legacy_key_source(32)
    elif Decision.YES in (hs.decisions["encryption"], hs.decisions["integrity"]) or (
        hs.client_crypto and _needs_crypto(hs.client_enc, hs.client_int)
    ):
        log.info(
            "command %d: no common crypto method (client offered %s, this server supports "
            "%s); closing",
            hs.cmd,
            ", ".join(hs.client_crypto) or "none",
            ", ".join(hs.resolved.crypto_methods) or "none",
        )
        return False
    return True


def _session_times(hs: _ServerHandshake) -> bool:
    """The session's duration and lease: the shorter of the client's and ours."""
    policy = hs.env.policy
    hs.duration = min(_duration(hs.m1.get("SessionDuration")), policy.session_duration)
    client_lease = _int(hs.m1.get("SessionLease"))
    if client_lease is not None:
        lease = policy.session_lease if client_lease == 0 else client_lease
        hs.lease = min(lease, policy.session_lease) if policy.session_lease else lease
    return True


def _send_response(hs: _ServerHandshake) -> Protocol[bool]:
    """M2, the server response ad (spec 03 §3.4), sent when the client asked (``Enact = NO``)."""
    policy = hs.env.policy
    decisions = hs.decisions
    m2: dict[str, Any] = {
        "Enact": "YES",
        "Integrity": decisions["integrity"].value,
        "Encryption": decisions["encryption"].value,
    }
    for name in hs.methods:
        method = get_method(name)
        if method is not None:
            m2.update(method.server_ad_attributes(hs.ctx))
    m2["AuthMethods"] = hs.method_list[0] if hs.method_list else ""
    m2["TrustDomain"] = policy.trust_domain or policy.uid_domain
    if hs.auth_yes and not hs.auth_required:
        m2["AuthRequired"] = False
    if hs.lease is not None:
        m2["SessionLease"] = hs.lease
    if hs.crypto is not None:
        m2["CryptoMethods"] = hs.crypto
    if hs.ecdh is not None:
        m2["ECDHPublicKey"] = hs.ecdh.public_base64()
    m2["RemoteVersion"] = policy.version
    m2["Authentication"] = decisions["authentication"].value
    m2["AuthMethodsList"] = ",".join(hs.method_list)
    m2["SessionDuration"] = str(hs.duration)
    m2["CryptoMethodsList"] = ",".join(hs.crypto_list)
    m2["NegotiatedSession"] = True
    hs.m2 = hs.ctx.own_ad = m2
    if str(hs.m1.get("Enact", "")).upper().startswith("N"):
        yield Send(_ad_message(hs.conn, m2))
    return True


def _authenticate(hs: _ServerHandshake) -> Protocol[bool]:
    """A1..K1: the method loop and the key message (spec 03 §4, spec 04 §1.3-§1.4)."""
    if not hs.auth_yes:
        return True
    hs.tried = True
    if not hs.method_list:  # the reference closes here even when AuthRequired is false
        yield from authenticate_peer(hs.conn, hs.ctx, hs.method_list, hs.cmd)
        return False
    result = yield from authenticate_peer(hs.conn, hs.ctx, hs.method_list, hs.cmd)
    if result is None or not result.success:
        if hs.auth_required:
            log.info("command %d: required authentication failed; closing", hs.cmd)
            return False
        return True
    hs.result = result
    if hs.legacy_key is None:
        yield Send(hs.conn.writer().put_int(0))
        return True
    wrapped = result.wrap_key(hs.legacy_key) if result.wrap_key else hs.legacy_key
    yield Send(hs.conn.writer().put_int(1))
    yield Send(
        hs.conn.writer().put_int(32).put_int(3).put_int(0).put_int(len(wrapped)).put_bytes(wrapped)
    )
    return True


def _install_key(hs: _ServerHandshake) -> bool:
    """Spec 03 §5.4: the ECDH (or legacy) AES key switches encryption on, before P1."""
    if hs.crypto == "AES":
        if hs.ecdh is not None and hs.client_public is not None:
            hs.key = hs.ecdh.session_key(hs.client_public)
        elif hs.legacy_key is not None and hs.result is not None:
            hs.key = hs.legacy_key
    if hs.key is not None:
        hs.conn.install_aes_key(hs.key)
    return True


#: The server's new-session handshake, in order; each step is one decision or one exchange.
SERVER_STEPS: tuple[_ServerStep, ...] = (
    _pure(_own_policy),
    _pure(_reconcile),
    _pure(_choose_crypto),
    _pure(_session_times),
    _send_response,
    _authenticate,
    _pure(_install_key),
)


def _new_session(
    conn: CedarConnection,
    m1: ClassAd,
    command: int,
    cmd: int,
    info: CommandInfo,
    env: HandshakeEnv,
) -> Protocol[ServerOutcome | None]:
    resolved = env.policy.resolve(info.permission)
    ctx = server_context(env, cmd, info.permission, peer_ad=m1)
    hs = _ServerHandshake(conn, m1, command, cmd, info, env, ctx, resolved)
    hs.methods = server_methods(env, resolved.methods, ctx)
    for step in SERVER_STEPS:
        if not (yield from step(hs)):
            return None
    return (yield from _authorize(hs))


def _authorize(hs: _ServerHandshake) -> Protocol[ServerOutcome | None]:
    """P1, the post-authentication ad (spec 03 §6.1), then the session is cached."""
    env, level, result = hs.env, hs.info.permission, hs.result
    user = (result.fqu if result is not None else None) or UNAUTHENTICATED_USER
    method_name = result.extra.get("method") if result is not None else None
    limit = result.limit_authorization if result is not None else None
    ok, reason = _authorized(env, user, hs.info, limit)
    sid = new_session_id()
    valid = env.valid_commands(level, user_is_mapped(user))
    p1: dict[str, Any] = {
        "Sid": sid,
        "User": user,
        "ReturnCode": "AUTHORIZED" if ok else "DENIED",
        # int(): str() of an IntEnum is its name on Python 3.10 (the numbers go on the wire)
        "ValidCommands": ",".join(str(int(c)) for c in valid),
    }
    if hs.tried:
        p1["TriedAuthentication"] = True
    yield Send(_ad_message(hs.conn, p1))
    if not ok:
        log.info("PERMISSION DENIED for command %d (%s): %s", hs.cmd, level, reason)
        return None
    remote_version = hs.m1.get("RemoteVersion")
    session = Session(
        sid=sid,
        key=hs.key,
        crypto_method=hs.crypto if hs.key is not None else None,
        user=user,
        method=method_name,
        valid_commands=frozenset(valid),
        policy=hs.m2,
        remote_version=remote_version if isinstance(remote_version, str) else None,
        duration=float(hs.duration),
        lease=float(hs.lease or 0),
        limit_authorization=limit,
        tried_authentication=hs.tried,
    )
    if str(hs.m1.get("NewSession", "")).upper().startswith("Y") and (
        hs.key is not None or env.policy.resume_keyless_sessions
    ):
        env.sessions.add(session)  # a keyless session is not resumable unless the policy says
    log.debug(
        "authorized command %d (%s) for %s via %s", hs.cmd, level, user, method_name or "no method"
    )
    finished = hs.command in (DC_AUTHENTICATE, DC_SEC_QUERY)
    if hs.command == DC_SEC_QUERY:
        yield Send(_ad_message(hs.conn, {"AuthorizationSucceeded": True}))
    return ServerOutcome(
        command=hs.cmd if finished else hs.command,
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
