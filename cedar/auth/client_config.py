"""What a client brings to every command start: its security configuration (the ``SEC_*``
knobs, read once), the policy it offers (methods, crypto, levels) and the session cache it
resumes from (spec 03 §2-§3).  The handshake that uses them is :mod:`cedar.auth.client`."""

from __future__ import annotations

import _thread  # the lock alone: threading is a costly import at start-up
import socket
import time
from collections import OrderedDict
from typing import Any

from cedar.auth.errors import CommandDenied as CommandDenied
from cedar.auth.errors import SessionRejected as SessionRejected
from cedar.auth.methods import (
    AuthContext,
)
from cedar.auth.policy import Requirement, apply_dependency
from cedar.auth.session import ClientSessionCache
from cedar.auth.version import CEDAR_VERSION_STRING
from cedar.config import Config, default_config
from cedar.errors import (
    AuthenticationError,
    InvalidArgument,
    SecurityError,
)

# Defined in cedar.auth.errors; exported here too, where callers have always imported them.
from cedar.record import Record

#: HTCondor's Unix default method list, in cedar's wire spelling; unregistered ones drop out.
DEFAULT_METHODS = ("FS", "TOKEN", "KERBEROS", "SCITOKENS", "SSL")
#: The only stream cipher cedar implements (spec 01 §4.5).
SUPPORTED_CRYPTO = ("AES",)
LEGACY_CRYPTO = {"BLOWFISH", "3DES", "TRIPLEDES"}
#: Daemon and command pairs an unnegotiated read is remembered as refused at (bounded memo).
MAX_RAW_REFUSALS = 256
#: Seconds a refusal of an unnegotiated read is remembered (a reconfigured daemon is retried).
RAW_REFUSAL_TTL = 600.0


#: Method knobs copied from a configuration into ``SecurityConfig.options``.
_METHOD_KNOBS = (
    "FS_LOCAL_DIR",
    "FS_REMOTE_DIR",
    "SEC_CLAIMTOBE_USER",
    "SEC_CLAIMTOBE_INCLUDE_DOMAIN",
    "SEC_FS_ENFORCE_CHANNEL_BINDING",
)


def crypto_name(name: str) -> str:
    """Canonical crypto-method spelling (``TRIPLEDES`` is an alias of ``3DES``)."""
    upper = name.strip().upper()
    return "3DES" if upper == "TRIPLEDES" else upper


def _default_domain() -> str:
    return socket.gethostname().lower() or "localhost"


class SecurityConfig(Record, hidden=("options",)):
    """The client's outgoing security policy (the ``SEC_CLIENT_*`` knobs).

    ``methods`` are tried in this order (unregistered or unavailable ones are skipped);
    ``crypto_methods``: AES, or the legacy BLOWFISH/3DES only with encryption and integrity
    NEVER (a clear-text session like the real tools' "plain" setting, spec 03 §5.4: cedar never
    turns a legacy cipher on); an empty list means "no key, no encryption".  ``options``
    carries method knobs by config name.
    """

    __slots__ = (
        "authentication",
        "encryption",
        "integrity",
        "negotiation",
        "methods",
        "crypto_methods",
        "subsystem",
        "session_duration",
        "session_lease",
        "uid_domain",
        "trust_domain",
        "version",
        "resume_sessions",
        "resume_keyless_sessions",
        "cache_tag",
        "unnegotiated_reads",
        "offer_ecdh",
        "options",
    )

    def __init__(
        self,
        authentication: Requirement = Requirement.OPTIONAL,
        encryption: Requirement = Requirement.OPTIONAL,
        integrity: Requirement = Requirement.OPTIONAL,
        negotiation: Requirement = Requirement.PREFERRED,
        methods: list[str] | None = None,
        crypto_methods: list[str] | None = None,
        subsystem: str = "TOOL",
        session_duration: int = 60,
        session_lease: int = 3600,
        uid_domain: str | None = None,
        trust_domain: str | None = None,
        version: str = CEDAR_VERSION_STRING,
        resume_sessions: bool = True,
        resume_keyless_sessions: bool = False,
        cache_tag: str | None = None,
        unnegotiated_reads: bool = False,
        options: dict[str, Any] | None = None,  # may hold tokens: not in the repr
        offer_ecdh: bool = True,
    ) -> None:
        self.authentication = authentication
        self.encryption = encryption
        self.integrity = integrity
        self.negotiation = negotiation
        self.methods = list(DEFAULT_METHODS) if methods is None else methods
        self.crypto_methods = list(SUPPORTED_CRYPTO) if crypto_methods is None else crypto_methods
        self.subsystem = subsystem
        self.session_duration = session_duration
        self.session_lease = session_lease
        self.uid_domain = _default_domain() if uid_domain is None else uid_domain
        self.trust_domain = trust_domain
        self.version = version
        self.resume_sessions = resume_sessions
        #: Resume sessions without a key too (the real tools' clear-text mode does; there the
        #: session id alone is the credential).  Off by default; capture replays turn it on.
        self.resume_keyless_sessions = resume_keyless_sessions
        self.cache_tag = cache_tag
        #: Start read-only queries unnegotiated (a raw ``put_int(command)``, no
        #: DC_AUTHENTICATE, no session, no key, spec 03 §2) for an anonymous client (no
        #: ``methods``): a daemon whose READ level requires none of negotiation,
        #: authentication, encryption and integrity answers at once (25.13.2, each checked
        #: alone).  A daemon that refuses (it closes the connection before answering) gets a
        #: negotiated start instead, and is remembered (:meth:`ClientSecurity.raw_refused`).
        #: Ignored when ``methods`` is set: a client with a credential is never sent
        #: unauthenticated.
        self.unnegotiated_reads = unnegotiated_reads
        #: Send an ECDH public key with the crypto methods (the real tools always do).  Off, the
        #: client is a pre-ECDH one: an AES session then takes the key the server sends
        #: wrapped after authentication (spec 04 §1.4); capture replays of such clients need it.
        self.offer_ecdh = offer_ecdh
        self.options: dict[str, Any] = {} if options is None else options
        self._check()

    def _check(self) -> None:
        for name in ("authentication", "encryption", "integrity", "negotiation"):
            setattr(self, name, Requirement.parse(getattr(self, name)))
        self.crypto_methods = [crypto_name(name) for name in self.crypto_methods]
        if self.unnegotiated_reads and self.methods:
            raise InvalidArgument(
                "unnegotiated_reads is for an anonymous client: it needs an empty method list "
                "(a client with a credential is never sent unauthenticated)"
            )
        clear = self.encryption is Requirement.NEVER and self.integrity is Requirement.NEVER
        for name in self.crypto_methods:
            if name in LEGACY_CRYPTO and not clear:
                raise InvalidArgument(
                    f"crypto method {name} is not supported: cedar implements only AES-GCM "
                    "(legacy ciphers may only be offered with encryption and integrity NEVER)"
                )
            if name not in LEGACY_CRYPTO and name not in SUPPORTED_CRYPTO:
                raise InvalidArgument(f"unknown crypto method {name!r}")

    @classmethod
    def from_config(cls, config: Config) -> SecurityConfig:
        """The client policy a :class:`cedar.config.Config` describes (``SEC_CLIENT_*``).

        Legacy crypto methods in the configuration are dropped (cedar only speaks AES-GCM).  The
        ``Config`` itself is passed to methods as ``options["config"]``.
        """
        subsystem = str(getattr(config, "subsystem", "TOOL") or "TOOL")
        duration = config.get_int(f"SEC_{subsystem}_CLIENT_SESSION_DURATION")
        if duration is None:
            duration = config.get_int("SEC_CLIENT_SESSION_DURATION", 60)
        options: dict[str, Any] = {"config": config}
        for knob in _METHOD_KNOBS:
            value = config.get(knob)
            if value is not None:
                options[knob] = value
        uid_domain = config.get("UID_DOMAIN") or _default_domain()
        return cls(
            authentication=Requirement.parse(config.security_level("AUTHENTICATION")),
            encryption=Requirement.parse(config.security_level("ENCRYPTION")),
            integrity=Requirement.parse(config.security_level("INTEGRITY")),
            negotiation=Requirement.parse(config.security_level("NEGOTIATION")),
            methods=list(config.authentication_methods("CLIENT")),
            crypto_methods=[m for m in config.crypto_methods("CLIENT") if m in SUPPORTED_CRYPTO],
            subsystem=subsystem,
            session_duration=int(duration or 60),
            session_lease=int(config.get_int("SEC_CLIENT_SESSION_LEASE", 3600) or 0),
            uid_domain=uid_domain,
            trust_domain=config.get("TRUST_DOMAIN") or uid_domain,
            options=options,
        )

    def method_context(self, **kwargs: Any) -> AuthContext:
        """An :class:`AuthContext` for the client role with this configuration's settings."""
        return AuthContext(
            role="client",
            uid_domain=self.uid_domain,
            trust_domain=self.trust_domain or self.uid_domain,
            options=self.options,
            **kwargs,
        )


class ClientPolicy(Record):
    """The reconciled outgoing values of spec 03 §3.2 ("client policy construction")."""

    __slots__ = ("authentication", "authentication_new", "encryption", "integrity", "negotiation")

    def __init__(
        self,
        authentication: Requirement,
        authentication_new: Requirement,
        encryption: Requirement,
        integrity: Requirement,
        negotiation: Requirement,
    ) -> None:
        self.authentication = authentication
        self.authentication_new = authentication_new
        self.encryption = encryption
        self.integrity = integrity
        self.negotiation = negotiation


def build_client_policy(config: SecurityConfig, methods: list[str]) -> ClientPolicy:
    """Apply the dependency rule; raises :class:`SecurityError` for an impossible policy."""
    a, e, i, n = config.authentication, config.encryption, config.integrity, config.negotiation
    a_new = a
    try:
        a, e = apply_dependency(a, e)
        a, i = apply_dependency(a, i)
        n, a = apply_dependency(n, a)
        n, e = apply_dependency(n, e)
        n, i = apply_dependency(n, i)
    except ValueError as exc:
        raise SecurityError(f"the client security configuration is contradictory: {exc}") from None
    if not methods:
        if a_new is Requirement.REQUIRED:
            raise AuthenticationError(
                "authentication is REQUIRED but no usable authentication method is configured "
                f"(configured: {', '.join(config.methods) or 'none'})"
            )
        a_new = Requirement.NEVER
    if not config.crypto_methods:
        if Requirement.REQUIRED in (e, i):
            raise SecurityError("encryption or integrity is REQUIRED but no crypto method is set")
        e = i = Requirement.NEVER
    return ClientPolicy(a, a_new, e, i, n)


class ClientSecurity:
    """A client policy plus the session cache its handshakes fill."""

    def __init__(
        self, config: SecurityConfig | None = None, session_cache: ClientSessionCache | None = None
    ) -> None:
        self.config = config or SecurityConfig()
        self.sessions = session_cache if session_cache is not None else ClientSessionCache()
        #: Targets that did not want a message sent early (``Authentication = NO`` after a mask
        #: sent with M1, or another method than the one started ahead): plain handshakes there.
        self.plain_handshake_targets: set[str] = set()
        self._raw_refusals: OrderedDict[tuple[str, int], float] = OrderedDict()
        self._raw_lock = _thread.allocate_lock()

    def raw_allowed(self, target: str, command: int) -> bool:
        """Whether a read-only ``command`` to ``target`` may start unnegotiated: asked for
        (:attr:`SecurityConfig.unnegotiated_reads`, no methods) and not refused there lately."""
        if not self.config.unnegotiated_reads or self.config.methods:
            return False
        with self._raw_lock:
            refused = self._raw_refusals.get((target, command))
            if refused is None:
                return True
            if time.monotonic() - refused < RAW_REFUSAL_TTL:
                return False
            del self._raw_refusals[(target, command)]
            return True

    def raw_refused(self, target: str, command: int) -> None:
        """``target`` closed an unnegotiated ``command`` unanswered: negotiate there for
        :data:`RAW_REFUSAL_TTL` seconds (a small bounded memo, least recently refused dropped;
        losing it costs one refused connection)."""
        with self._raw_lock:
            self._raw_refusals.pop((target, command), None)
            self._raw_refusals[(target, command)] = time.monotonic()
            while len(self._raw_refusals) > MAX_RAW_REFUSALS:
                self._raw_refusals.popitem(last=False)

    def __repr__(self) -> str:
        return f"<ClientSecurity methods={self.config.methods} sessions={len(self.sessions)}>"


_default: ClientSecurity | None = None
_default_lock = _thread.allocate_lock()


def client_security(security: ClientSecurity | SecurityConfig | None) -> ClientSecurity | None:
    """Accept a :class:`SecurityConfig` wherever a :class:`ClientSecurity` is expected.

    A bare policy gets a session cache of its own (keep the returned object to reuse sessions);
    ``None`` stays ``None``: the process-wide :func:`default_security`.
    """
    if isinstance(security, SecurityConfig):
        return ClientSecurity(security)
    return security


def default_security() -> ClientSecurity:
    """The process-wide client security, from the HTCondor configuration (``cedar.config``)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ClientSecurity(SecurityConfig.from_config(default_config()))
        return _default
