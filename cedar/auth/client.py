"""The client role of command start and the ``DC_AUTHENTICATE`` handshake (spec 03 §2-§6).

One module because it is one state machine: :func:`start_command` and its steps (policy ad,
resumption, new session, authentication, key message) share the session state and read in order.

:func:`start_command` is a protocol coroutine: it either prepares a raw start or runs the whole
negotiation (policy ads, authentication, ECDH, AES-GCM switch-on, post-auth ad, session cache,
resumption) and returns a :class:`CommandSession` ready for the command's payload.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from os import urandom  # the resume nonce's source (a test replays a recorded one)
from typing import Any

from cedar.auth.client_config import (
    LEGACY_CRYPTO,
    SUPPORTED_CRYPTO,
    ClientPolicy,
    ClientSecurity,
    SecurityConfig,
    build_client_policy,
    crypto_name,
    default_security,
)

# Defined in cedar.auth.errors; exported here too, where callers have always imported them.
from cedar.auth.errors import CommandDenied as CommandDenied
from cedar.auth.errors import MaskRefused
from cedar.auth.errors import SessionRejected as SessionRejected
from cedar.auth.methods import (
    UNAUTHENTICATED_USER,
    AuthContext,
    AuthMethod,
    MethodResult,
    available_methods,
    canonical_method_name,
    get_method,
    method_bits,
    method_for_bit,
    names_of_bits,
)
from cedar.auth.permissions import DC_AUTHENTICATE, DC_NOP_COMMANDS, DC_SEC_QUERY
from cedar.auth.policy import Decision, Requirement, split_list
from cedar.auth.session import Session
from cedar.auth.sinful import Sinful
from cedar.auth.version import built_since
from cedar.classad_wire import ClassAd, get_handshake_ad, put_classad
from cedar.errors import (
    AuthenticationError,
    ConnectionClosed,
    InvalidArgument,
    ProtocolError,
    SecurityError,
)
from cedar.lazy import LazyLogger
from cedar.numbers import KEY_PROTOCOLS
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import EcdhKeyPair
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send

log = LazyLogger("cedar.auth")


class CommandSession(Record):
    """A started command: where to write its payload and what security it runs under."""

    __slots__ = ("conn", "command", "raw", "authenticated_user", "method", "session_id",
                 "remote_version", "resumed", "crypto_method", "server_user",
                 "valid_commands", "policy", "post_auth_ad", "client_principal",
                 "pipelined", "_raw_writer")  # fmt: skip

    def __init__(
        self,
        conn: CedarConnection,
        command: int,
        raw: bool,
        authenticated_user: str | None = None,
        method: str | None = None,
        session_id: str | None = None,
        remote_version: str | None = None,
        resumed: bool = False,
        crypto_method: str | None = None,
        server_user: str | None = None,
        valid_commands: frozenset[int] = frozenset(),
        policy: dict[str, Any] | None = None,
        post_auth_ad: Any = None,
        client_principal: str | None = None,
        pipelined: bool = False,
        _raw_writer: MessageWriter | None = None,
    ) -> None:
        self.conn = conn
        self.command = command
        self.raw = raw
        self.authenticated_user = authenticated_user
        self.method = method
        self.session_id = session_id
        self.remote_version = remote_version
        self.resumed = resumed
        self.crypto_method = crypto_method
        self.server_user = server_user
        self.valid_commands = valid_commands
        self.policy: dict[str, Any] = {} if policy is None else policy
        self.post_auth_ad = post_auth_ad
        #: The name our credential proved, when the method tells (KERBEROS: the ticket's client
        #: principal); ``None`` for other methods and resumed sessions.
        self.client_principal = client_principal
        #: The payload went out before the server accepted the start (a resumption without waiting
        #: for the resume response, or an unnegotiated read that may be refused): a silent close
        #: before any answer is a refusal the drivers retry with a new start.
        self.pipelined = pipelined
        self._raw_writer = _raw_writer

    @property
    def encrypted(self) -> bool:
        """Whether the payload will travel AES-GCM protected."""
        return self.conn.encrypted

    def payload_writer(self) -> MessageWriter:
        """The writer for the command payload; for a raw start it already holds the command int."""
        if self._raw_writer is not None:
            writer, self._raw_writer = self._raw_writer, None
            return writer
        return self.conn.writer()

    def send_empty_payload(self) -> Protocol[None]:
        """Finish a payload-less command: a raw start still has to send its command int."""
        if self._raw_writer is not None:
            yield Send(self.payload_writer())

    def __repr__(self) -> str:  # never the session id
        return (
            f"<CommandSession command={self.command} raw={self.raw} "
            f"user={self.authenticated_user!r} method={self.method} "
            f"encrypted={self.encrypted} resumed={self.resumed}>"
        )


def offered_methods(config: SecurityConfig, ctx: AuthContext) -> list[str]:
    """The configured methods cedar can run now, canonical spelling, duplicates removed."""
    return available_methods(config.methods, lambda method: method.client_available(ctx))


def _policy_ad(
    config: SecurityConfig,
    policy: ClientPolicy,
    methods: list[str],
    command: int,
    auth_command: int | None,
    target: str,
    ecdh: EcdhKeyPair | None,
    ctx: AuthContext,
) -> ClassAd:
    ad = ClassAd()
    ad["Enact"] = "NO"
    ad["Command"] = command
    if auth_command is not None:
        ad["AuthCommand"] = auth_command
    ad["Integrity"] = policy.integrity.name
    ad["ServerPid"] = os.getpid()
    ad["Subsystem"] = config.subsystem
    ad["Encryption"] = policy.encryption.name
    ad["NewSession"] = "YES"
    if methods:
        ad["AuthMethods"] = ",".join(methods)
    ad["TrustDomain"] = config.trust_domain or config.uid_domain
    ad["SessionLease"] = int(config.session_lease)
    ad["ConnectSinful"] = target
    if config.crypto_methods:
        ad["CryptoMethods"] = ",".join(config.crypto_methods)
    if ecdh is not None:
        ad["ECDHPublicKey"] = ecdh.public_base64()
    ad["RemoteVersion"] = config.version
    ad["Authentication"] = policy.authentication.name
    ad["SessionDuration"] = str(int(config.session_duration))
    ad["AuthenticationNew"] = policy.authentication_new.name
    ad["NegotiatedSession"] = True
    ad["OutgoingNegotiation"] = policy.negotiation.name
    for name in methods:
        method = get_method(name)
        if method is not None:
            for key, value in method.client_ad_attributes(ctx).items():
                ad[key] = value
    return ad


def _describe(command: int) -> str:
    if command in DC_NOP_COMMANDS:
        return f"command {command} (DC_NOP at level {DC_NOP_COMMANDS[command]})"
    return f"command {command}"


def _receive_or_closed(what: str, detail: str) -> Protocol[MessageReader]:
    """Receive one message; a close by the peer becomes a :class:`CommandDenied` with ``detail``."""
    try:
        message = yield Receive()
    except ConnectionClosed as exc:
        if exc.mid_message:  # cut inside a packet: a broken stream, not a refusal
            raise ConnectionClosed(f"truncated message during {what}: {exc}") from None
        raise CommandDenied(f"Connection closed during {what}. {detail}") from None
    return message  # type: ignore[no-any-return]


def _read_ad(message: MessageReader, what: str) -> ClassAd:
    ad = get_handshake_ad(message)
    try:
        message.end_of_message()
    except ProtocolError as exc:
        raise ProtocolError(f"{what}: {exc}") from None
    return ad


def start_command(
    conn: CedarConnection,
    command: int,
    *,
    security: ClientSecurity | None = None,
    target: Sinful | str = "",
    permission_hint: str | None = None,
    raw: bool | None = None,
    auth_command: int | None = None,
    local_address: tuple[str, int] | None = None,
    peer_address: tuple[str, int] | None = None,
    pipeline_resume: bool = False,
) -> Protocol[CommandSession]:
    """Start ``command`` on a fresh connection (after any shared-port preamble).

    ``target`` is the address the caller connected to (it becomes ``ConnectSinful`` and keys
    the session cache).  ``raw=None`` negotiates unless the client's negotiation setting is
    OPTIONAL/NEVER.  ``auth_command`` is required for ``DC_SEC_QUERY``/``DC_AUTHENTICATE``
    (the command whose level is tested).  ``local_address``/``peer_address`` are this
    connection's socket endpoints (FS binds to them).  ``permission_hint`` only improves error
    messages.  ``pipeline_resume`` marks a read-only command (a query, safe to start twice): a
    cached session is resumed without waiting for the resume response, and a new session sends
    its first authentication mask along with M1 (one round trip less each); with
    ``SecurityConfig.unnegotiated_reads`` (an anonymous client) it starts raw, unless the target
    refused that lately (:class:`~cedar.auth.errors.RawStartRefused`).
    """
    security = security or default_security()
    config = security.config
    target_text = str(target)
    if raw is None and pipeline_resume and security.raw_allowed(target_text, command):
        log.debug("starting %s unnegotiated (anonymous read)", _describe(command))
        writer = conn.writer().put_int(command)
        return CommandSession(conn, command, True, pipelined=True, _raw_writer=writer)
    if raw is None:
        raw = config.negotiation in (Requirement.OPTIONAL, Requirement.NEVER)
    if raw:
        log.debug("starting %s raw (no security negotiation)", _describe(command))
        return CommandSession(conn, command, True, _raw_writer=conn.writer().put_int(command))
        yield  # pragma: no cover  (makes this a generator)
    if command in (DC_SEC_QUERY, DC_AUTHENTICATE) and auth_command is None:
        raise InvalidArgument(f"command {command} needs auth_command (the command to authorize)")
    level = f" at level {permission_hint}" if permission_hint else ""
    session = None
    if config.resume_sessions and command not in (DC_SEC_QUERY, DC_AUTHENTICATE):
        session = security.sessions.lookup(target_text, command, config.cache_tag)
    if session is not None:
        return (
            yield from _resume(
                conn, command, auth_command, security, target_text, session, pipeline_resume
            )
        )
    ctx = config.method_context(
        local_address=local_address,
        peer_address=peer_address,
        connect_sinful=Sinful.parse(target_text) if target_text else None,
        command=auth_command if auth_command is not None else command,
        permission=permission_hint,
    )
    return (
        yield from _new_session(
            conn, command, auth_command, security, target_text, ctx, level, pipeline_resume
        )
    )


#: Stands for the nonce while a resume message is encoded once per session (not base64).
_NONCE_MARK = "@" * 44
#: Most encoded resume messages one session keeps (one per command, target and mode).
_MAX_RESUME_MESSAGES = 32


def _resume_message(
    conn: CedarConnection,
    command: int,
    auth_command: int | None,
    config: SecurityConfig,
    target: str,
    session: Session,
    resume_response: bool,
) -> bytes:
    """The resume message payload (spec 03 §6.3) with a fresh nonce.

    Everything but the 44-character nonce is the same on every resumption of one session for
    one command, so the encoding is kept on the session (dropped with it) as the bytes before
    and after the nonce.
    """
    nonce = base64.b64encode(urandom(33))
    key = (command, auth_command, target, config.version, resume_response, conn.encrypted)
    cached = session.resume_messages.get(key)
    if cached is not None:
        return cached[0] + nonce + cached[1]
    attributes: dict[str, Any] = {"Command": command, "ConnectSinful": target}
    if auth_command is not None:
        attributes["AuthCommand"] = auth_command
    if session.crypto_method:
        attributes["CryptoMethods"] = session.crypto_method
    attributes["Nonce"] = _NONCE_MARK
    attributes["RemoteVersion"] = config.version
    attributes["ResumeResponse"] = resume_response
    attributes["Sid"] = session.sid
    attributes["UseSession"] = "YES"
    ad = ClassAd()
    for name in sorted(attributes, key=str.lower):
        ad[name] = attributes[name]
    writer = conn.writer().put_int(DC_AUTHENTICATE)
    put_classad(writer, ad)
    before, mark, after = writer.getvalue().partition(_NONCE_MARK.encode("ascii"))
    if not mark or _NONCE_MARK.encode("ascii") in after:
        raise ProtocolError("cannot encode the resume message (nonce placeholder not unique)")
    if len(session.resume_messages) >= _MAX_RESUME_MESSAGES:
        session.resume_messages.clear()
    session.resume_messages[key] = (before, after)
    return before + nonce + after


def _resume(
    conn: CedarConnection,
    command: int,
    auth_command: int | None,
    security: ClientSecurity,
    target: str,
    session: Session,
    pipelined: bool,
) -> Protocol[CommandSession]:
    config = security.config
    # Pipelined: no resume response is asked for, so the payload can follow at once, in the
    # same write (spec 03 §6.3: "C1 follows R1 directly"); the server then answers a forgotten
    # session by closing, which the caller turns into a retry with a new session.
    resume_response = not pipelined and built_since(session.remote_version, 9, 9, 0)
    payload = _resume_message(conn, command, auth_command, config, target, session, resume_response)
    log.debug("resuming a cached session for %s", _describe(command))
    yield Send(payload, flush=resume_response)
    if resume_response:
        message = yield from _receive_or_closed(
            "session resumption", f"The server dropped the resumption of {_describe(command)}."
        )
        reply = _read_ad(message, "session resumption response")
        code = reply.get("ReturnCode")
        if code == "SID_NOT_FOUND":
            security.sessions.invalidate(session.sid)
            raise SessionRejected(
                "Server rejected our session id (it no longer knows the session); "
                "the session was dropped and the next command negotiates a new one"
            )
        if code not in (None, "", "AUTHORIZED"):
            security.sessions.invalidate(session.sid)
            raise CommandDenied(
                f"Received {code!r} from server when resuming a session for {_describe(command)}",
                command=command,
                user=session.user,
                method=session.method,
            )
    if session.key is not None:
        if session.cipher is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            session.cipher = AESGCM(session.key)
        conn.install_aes_key(session.key, aead=session.cipher)
    return CommandSession(
        conn,
        command,
        False,
        authenticated_user=session.user,
        method=session.method,
        session_id=session.sid,
        remote_version=session.remote_version,
        resumed=True,
        crypto_method=session.crypto_method if session.key is not None else None,
        valid_commands=session.valid_commands,
        policy=dict(session.policy),
        pipelined=not resume_response,
    )


def _decision(ad: ClassAd, name: str) -> Decision:
    value = Decision.parse(ad.get(name))
    if value is None or value is Decision.FAIL:
        raise SecurityError(
            f"the server's security response has no valid {name} decision ({ad.get(name)!r})"
        )
    return value


class _ClientHandshake:
    """What the client's new-session steps share (spec 03 §3-§6.1): one per connection."""

    __slots__ = ("conn", "command", "auth_command", "security", "target", "ctx",
                 "level", "read_only", "mask_sent", "methods", "policy", "ecdh",
                 "described", "offered", "m2", "authentication", "encryption",
                 "integrity", "crypto", "clear_legacy", "result", "legacy_key", "tried",
                 "key", "p1")  # fmt: skip

    def __init__(
        self,
        conn: CedarConnection,
        command: int,
        auth_command: int | None,
        security: ClientSecurity,
        target: str,
        ctx: AuthContext,
        level: str,
        read_only: bool = False,
    ) -> None:
        self.conn = conn
        self.command = command
        self.auth_command = auth_command
        self.security = security
        self.target = target
        self.ctx = ctx
        self.level = level
        #: The command is read-only (``pipeline_resume``): the first mask may go along with M1.
        self.read_only = read_only
        self.mask_sent = False
        self.methods: list[str] = []
        self.policy: ClientPolicy | None = None
        self.ecdh: EcdhKeyPair | None = None
        self.described = ""
        self.offered = ""
        self.m2 = ClassAd()
        self.authentication = Decision.NO
        self.encryption = Decision.NO
        self.integrity = Decision.NO
        self.crypto: str | None = None
        self.clear_legacy = False
        self.result: MethodResult | None = None
        self.legacy_key: bytes | None = None
        self.tried = False
        self.key: bytes | None = None
        self.p1 = ClassAd()

    @property
    def config(self) -> SecurityConfig:
        return self.security.config


#: A step of the client handshake; it raises to end the handshake (the server closes then).
_ClientStep = Callable[[_ClientHandshake], Protocol[None]]


def _send_policy_ad(hs: _ClientHandshake) -> Protocol[None]:
    """M1, the client policy ad (spec 03 §3.2), with a fresh ECDH public key."""
    config = hs.config
    hs.methods = offered_methods(config, hs.ctx)
    hs.policy = policy = build_client_policy(config, hs.methods)
    hs.ecdh = EcdhKeyPair() if config.crypto_methods and config.offer_ecdh else None
    m1 = _policy_ad(
        config, policy, hs.methods, hs.command, hs.auth_command, hs.target, hs.ecdh, hs.ctx
    )
    hs.ctx.own_ad = m1
    writer = hs.conn.writer().put_int(DC_AUTHENTICATE)
    put_classad(writer, m1)
    hs.described = _describe(hs.auth_command if hs.auth_command is not None else hs.command)
    hs.offered = (
        f"we offered authentication {policy.authentication_new.name} with methods "
        f"{', '.join(hs.methods) or 'none'}, encryption {policy.encryption.name}, "
        f"crypto {', '.join(config.crypto_methods) or 'none'}"
    )
    log.debug("negotiating a new session for %s%s; %s", hs.described, hs.level, hs.offered)
    hs.mask_sent = _send_mask_early(hs)
    yield Send(writer, flush=not hs.mask_sent)
    if hs.mask_sent:
        yield Send(hs.conn.writer().put_int(method_bits(hs.methods)))


#: Most targets remembered as wanting plain handshakes (see :func:`_send_early`).
_MAX_PLAIN_TARGETS = 1024


def _send_mask_early(hs: _ClientHandshake) -> bool:
    """Whether the first method mask (A1) may go in the same write as M1 (one round trip less).

    The server reads A1 only after answering ``Authentication = YES``, which it does whenever we
    PREFER or REQUIRE it and its level does not say NEVER (spec 03 §3.3.1); from M2's method list
    it picks the first that is in our mask, so the mask of everything we offer gets the same
    answer as the intersection would.  Done only for read-only commands: if the server answers
    NO after all, the mask would be read as the payload, so the connection is dropped unused
    (:class:`MaskRefused`, retried once) and the target remembered.
    """
    assert hs.policy is not None
    return (
        _send_early(hs)
        and bool(hs.methods)
        and hs.policy.authentication_new in (Requirement.PREFERRED, Requirement.REQUIRED)
    )


def _send_early(hs: _ClientHandshake) -> bool:
    """Whether this handshake may send messages before it knows the server wants them: only a
    read-only command, to a target where that never went wrong (see :class:`MaskRefused`)."""
    return hs.read_only and hs.target not in hs.security.plain_handshake_targets


def _remember_plain(hs: _ClientHandshake) -> None:
    """A message sent early was not wanted: this target gets plain handshakes from now on."""
    targets = hs.security.plain_handshake_targets
    if len(targets) >= _MAX_PLAIN_TARGETS:
        targets.clear()
    targets.add(hs.target)


def _read_response(hs: _ClientHandshake) -> Protocol[None]:
    """M2, the server response ad (spec 03 §3.4): the decisions and the crypto method."""
    message = yield from _receive_or_closed(
        "command authorization",
        f"Probably due to an unknown command: the server closed the connection instead of "
        f"answering the security negotiation for {hs.described}{hs.level} (an unknown command, "
        f"a denied raw-level policy, policies that cannot be reconciled, or a server at its "
        f"connection cap; {hs.offered}).",
    )
    hs.m2 = hs.ctx.peer_ad = m2 = _read_ad(message, "server security response")
    hs.authentication = _decision(m2, "Authentication")
    if hs.mask_sent and hs.authentication is not Decision.YES:
        _remember_plain(hs)
        raise MaskRefused(
            f"the server does not authenticate {hs.described}, but our first authentication "
            "message was already on its way; retrying with a plain handshake"
        )
    hs.encryption = _decision(m2, "Encryption")
    hs.integrity = _decision(m2, "Integrity")
    crypto_list = split_list(m2.get("CryptoMethods"))
    hs.crypto = crypto = crypto_name(crypto_list[0]) if crypto_list else None
    config = hs.config
    hs.clear_legacy = (
        crypto in LEGACY_CRYPTO
        and crypto in config.crypto_methods
        and Decision.YES not in (hs.encryption, hs.integrity)
    )
    if crypto is not None and crypto not in SUPPORTED_CRYPTO and not hs.clear_legacy:
        if crypto in LEGACY_CRYPTO:
            raise SecurityError(
                f"the server insists on the legacy crypto method {crypto}, which cedar does not "
                "implement (cedar only offers AES-GCM); configure the server's "
                "SEC_*_CRYPTO_METHODS to include AES"
            )
        raise SecurityError(f"the server chose an unknown crypto method {crypto!r}")
    if hs.encryption is Decision.YES and crypto is None:
        raise SecurityError(
            "the server requires encryption but named no crypto method we share "
            f"(we offered {', '.join(config.crypto_methods) or 'none'})"
        )


def _authenticate_step(hs: _ClientHandshake) -> Protocol[None]:
    """A1..K1 when M2 says ``Authentication = YES`` (spec 03 §4, spec 04 §1.3-§1.4)."""
    if hs.authentication is not Decision.YES:
        return
    hs.tried = True
    try:
        hs.result = yield from _authenticate(
            hs.conn, hs.ctx, hs.m2, hs.methods, hs.described, hs.mask_sent, _send_early(hs)
        )
    except MaskRefused:
        _remember_plain(hs)
        raise
    if hs.result is not None and hs.result.success:
        hs.legacy_key = yield from _read_key_message(hs.conn, hs.result)


def _read_post_auth_ad(hs: _ClientHandshake) -> Protocol[None]:
    """Switch AES on (spec 03 §5.4), then P1, the post-authentication ad (§6.1)."""
    if hs.crypto == "AES":
        server_public = hs.m2.get("ECDHPublicKey")
        if isinstance(server_public, str) and server_public and hs.ecdh is not None:
            hs.key = hs.ecdh.session_key(server_public)
        elif hs.legacy_key is not None:
            hs.key = hs.legacy_key
        elif hs.encryption is Decision.YES:
            raise SecurityError("the server requires encryption but provided no key material")
    if hs.key is not None:
        hs.conn.install_aes_key(hs.key)
    message = yield from _receive_or_closed(
        "command authorization",
        f"The server closed the connection before confirming authorization of "
        f"{hs.described}{hs.level}.",
    )
    hs.p1 = p1 = _read_ad(message, "post-authentication ad")
    user = p1.get("User")
    code = p1.get("ReturnCode", "AUTHORIZED")
    if code != "AUTHORIZED":
        method_name = hs.result.extra.get("method") if hs.result is not None else None
        raise CommandDenied(
            f'Received "{code}" from server for user {user or UNAUTHENTICATED_USER} using '
            f"method {method_name or 'none'} for {hs.described}{hs.level}",
            command=hs.auth_command if hs.auth_command is not None else hs.command,
            user=user if isinstance(user, str) else None,
            method=method_name,
        )


#: The client's new-session handshake, in order; each step is one exchange of spec 03.
CLIENT_STEPS: tuple[_ClientStep, ...] = (
    _send_policy_ad,
    _read_response,
    _authenticate_step,
    _read_post_auth_ad,
)


def _new_session(
    conn: CedarConnection,
    command: int,
    auth_command: int | None,
    security: ClientSecurity,
    target: str,
    ctx: AuthContext,
    level: str,
    read_only: bool,
) -> Protocol[CommandSession]:
    hs = _ClientHandshake(conn, command, auth_command, security, target, ctx, level, read_only)
    for step in CLIENT_STEPS:
        yield from step(hs)
    return _remember_session(hs)


def _remember_session(hs: _ClientHandshake) -> CommandSession:
    """The new session from P1 and M2, cached when it may be resumed (spec 03 §6.2)."""
    p1, m2, key = hs.p1, hs.m2, hs.key
    sid = p1.get("Sid")
    if not isinstance(sid, str) or not sid:
        raise ProtocolError("the server's post-authentication ad has no session id")
    valid = _parse_commands(p1.get("ValidCommands"))
    if not valid:
        raise ProtocolError("the server's post-authentication ad lists no valid commands")
    policy_copy = {
        name: value
        for name, value in m2.items()
        if name.lower() not in ("ecdhpublickey", "negotiatedsession")
    }
    user = p1.get("User")
    method_name = hs.result.extra.get("method") if hs.result is not None else None
    remote_version = m2.get("RemoteVersion")
    session = Session(
        sid=sid,
        key=key,
        # A clear legacy session keeps its method name: resumption repeats it (spec 03 §6.3).
        crypto_method=hs.crypto if key is not None or hs.clear_legacy else None,
        user=user if isinstance(user, str) else UNAUTHENTICATED_USER,
        method=method_name,
        valid_commands=valid,
        policy=policy_copy,
        remote_version=remote_version if isinstance(remote_version, str) else None,
        duration=_number(m2.get("SessionDuration")),
        lease=_number(m2.get("SessionLease")),
        tried_authentication=hs.tried,
    )
    config = hs.config
    if config.resume_sessions and (key is not None or config.resume_keyless_sessions):
        # A keyless session is never resumed: its id alone would be the credential.
        hs.security.sessions.store(session, hs.target, config.cache_tag)
    log.debug(
        "new session: %s as %s, method %s, crypto %s",
        hs.described,
        session.user,
        method_name or "none",
        session.crypto_method or "none",
    )
    return CommandSession(
        hs.conn,
        hs.command,
        False,
        authenticated_user=session.user,
        method=method_name,
        session_id=sid,
        remote_version=session.remote_version,
        crypto_method=session.crypto_method if key is not None else None,
        valid_commands=valid,
        policy=policy_copy,
        post_auth_ad=p1,
        client_principal=hs.result.extra.get("client_principal") if hs.result else None,
    )


def _number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _parse_commands(value: object) -> frozenset[int]:
    if not isinstance(value, str):
        return frozenset()
    result = set()
    for item in value.split(","):
        item = item.strip()
        if item.lstrip("-").isdigit():
            result.add(int(item))
    return frozenset(result)


def _authenticate(
    conn: CedarConnection,
    ctx: AuthContext,
    m2: ClassAd,
    offered: list[str],
    described: str,
    mask_sent: bool = False,
    ahead: bool = False,
) -> Protocol[MethodResult | None]:
    """The method-negotiation loop of spec 03 §4.3 / spec 04 §1.3; ``None`` = unauthenticated.

    ``mask_sent``: the first mask already went out with M1 (read-only commands).  ``ahead``
    (read-only commands): after a failed method, the next one's first messages go out with the
    next mask, before the server's choice is read (see :func:`_run_ahead`).
    """
    server_list = [
        name
        for name in (
            canonical_method_name(item)
            for item in split_list(m2.get("AuthMethodsList") or m2.get("AuthMethods"))
        )
        if name is not None
    ]
    if not server_list:
        raise AuthenticationError(
            f"authentication for {described} failed: the server accepts none of the methods we "
            f"offered ({', '.join(offered) or 'none'})"
        )
    remaining = [name for name in server_list if name in offered]  # in the server's order
    failures: list[str] = []
    unread = 0  # replies of a failed method that did not wait for them
    for _round in range(len(server_list) + 1):
        started: _Ahead | None = None
        if not mask_sent:  # else it went along with M1: the same choice, see _send_policy_ad
            early = get_method(remaining[0]) if ahead and failures and remaining else None
            yield Send(conn.writer().put_int(method_bits(remaining)), flush=early is None)
            if early is not None:
                started = yield from _run_ahead(early, conn, ctx)
        mask_sent = False
        try:
            yield from _discard_failures(unread)
            unread = 0
            message = yield Receive()
            chosen = message.get_int()
            message.end_of_message()
        except ConnectionClosed:
            chosen = 0
        if started is not None and chosen != started.method.bit:
            started.close()
            raise MaskRefused(
                f"the server did not choose {started.method.name} for {described}, whose first "
                "messages were already on their way; retrying with a plain handshake"
            )
        if chosen == 0:
            break
        method = method_for_bit(chosen)
        if method is None or method.name not in remaining or chosen & (chosen - 1):
            raise ProtocolError(
                f"the server chose authentication method {', '.join(names_of_bits(chosen))}, "
                f"which we did not offer (we offered {', '.join(remaining) or 'none'})"
            )
        log.debug("authenticating with %s", method.name)
        if started is not None:
            result = yield from started.finish()
        else:
            result = yield from method.client(conn, ctx)
        if result.success:
            result.extra.setdefault("method", method.name)
            return result
        failures.append(result.error or f"{method.name} failed")
        log.info("authentication method %s failed; trying the next one", method.name)
        remaining.remove(method.name)
        unread = result.unread
    _no_method_left(m2, server_list, offered, failures, described)
    return None


def _no_method_left(
    m2: ClassAd, server_list: list[str], offered: list[str], failures: list[str], described: str
) -> None:
    """Every method failed: an error, unless M2 allows going on unauthenticated."""
    unusable = [name for name in server_list if name not in offered]
    detail = (
        f"the server offered {', '.join(server_list)}; we could use "
        f"{', '.join(n for n in server_list if n in offered) or 'none of them'}"
        + (f" (cedar lacks or cannot use {', '.join(unusable)})" if unusable else "")
        + (f"; failures: {'; '.join(failures)}" if failures else "")
    )
    if m2.get("AuthRequired", True) is not False:
        raise AuthenticationError(f"required authentication for {described} failed: {detail}")
    log.info("authentication failed but is optional; continuing unauthenticated: %s", detail)


class _Ahead:
    """A method's client run up to its first wait, its messages sent before the server chose it.

    The server picks the first method of its list (M2's, in order) that is in our mask, so
    after a failure the next one is known in advance, unless the server cannot run it after
    all; then the connection is dropped (:class:`MaskRefused`), which only read-only commands
    risk.  Sending its first messages with the mask saves a round trip (TOKEN, CLAIMTOBE).
    """

    def __init__(self, method: AuthMethod, protocol: Protocol[MethodResult]) -> None:
        self.method = method
        self.protocol = protocol
        self.pending: Any = None  # the request it waits on, or its result
        self.done = False

    def close(self) -> None:
        self.protocol.close()

    def finish(self) -> Protocol[MethodResult]:
        """The rest of the method, as ``yield from`` would have run it."""
        if self.done:
            return self.pending  # type: ignore[no-any-return]
        request = self.pending
        protocol = self.protocol
        while True:
            try:
                value = yield request
            except GeneratorExit:
                protocol.close()
                raise
            except BaseException as exc:  # transport errors go to the method, as yield from
                try:
                    request = protocol.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                continue
            try:
                request = protocol.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


def _run_ahead(method: AuthMethod, conn: CedarConnection, ctx: AuthContext) -> Protocol[_Ahead]:
    """Start ``method``'s client and send what it sends before it first waits (held back, so
    they leave in the write of the mask before them)."""
    started = _Ahead(method, method.client(conn, ctx))
    try:
        request = next(started.protocol)
        while isinstance(request, Send):
            yield Send(request.message, flush=False)
            request = started.protocol.send(None)
    except StopIteration as stop:
        started.pending, started.done = stop.value, True
        return started
    started.pending = request
    return started


def _discard_failures(count: int) -> Protocol[None]:
    """Read the verdicts (``int -1``) of a failed method whose client did not wait for them."""
    for _ in range(count):
        message = yield Receive()
        verdict = message.get_int()
        message.end_of_message()
        if verdict != -1:
            raise ProtocolError(
                f"the server answered {verdict} to a failed authentication step, not -1"
            )


def _read_key_message(conn: CedarConnection, result: MethodResult) -> Protocol[bytes | None]:
    """The post-authentication key message (spec 04 §1.4): ``hasKey`` and a legacy key."""
    message = yield Receive()
    has_key = message.get_int()
    message.end_of_message()
    if has_key == 0:
        return None
    if has_key != 1:
        raise ProtocolError(f"invalid hasKey value {has_key} after authentication")
    message = yield Receive()
    key_length = message.get_int()
    protocol = message.get_int()
    message.get_int()  # duration: unused
    size = message.get_int()
    if not 0 < size <= 1024:
        raise ProtocolError(f"implausible wrapped key length {size}")
    wrapped = message.get_bytes(size)
    message.end_of_message()
    name = KEY_PROTOCOLS.get(protocol, f"unknown protocol {protocol}")
    if name != "AES":
        raise SecurityError(
            f"the server sent a {name} session key, which cedar does not implement (AES only)"
        )
    key = result.unwrap_key(wrapped) if result.unwrap_key is not None else wrapped
    if len(key) != 32 or key_length != 32:
        raise ProtocolError("the server's AES session key does not have 32 bytes")
    return key
