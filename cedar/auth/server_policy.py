"""The server's security policy: the ``SEC_<LEVEL>_*`` knobs and ``ALLOW_/DENY_<LEVEL>`` lists.

Lookup follows the reference: ``SEC_<L>_<X>``, then (for ADVERTISE_* levels) ``SEC_DAEMON_<X>``,
then ``SEC_DEFAULT_<X>`` (spec 03 §7.1).  Authorization patterns are ``user@domain``,
``user@domain/host`` or ``host`` with ``*`` wildcards; DENY wins over ALLOW.
"""

from __future__ import annotations

import fnmatch
import getpass
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from cedar.auth.permissions import config_fallbacks, levels_implying, normalize_level
from cedar.auth.policy import Requirement, split_list
from cedar.auth.version import CEDAR_VERSION_STRING

#: Methods a server offers when none are configured (reference Unix default, wire spelling).
DEFAULT_SERVER_METHODS = ["FS", "TOKEN", "KERBEROS", "SCITOKENS", "SSL"]


@dataclass
class LevelPolicy:
    """The settings of one level; ``None`` falls back to the next level in the lookup order."""

    authentication: Requirement | str | None = None
    encryption: Requirement | str | None = None
    integrity: Requirement | str | None = None
    negotiation: Requirement | str | None = None
    methods: list[str] | None = None
    crypto_methods: list[str] | None = None

    def __post_init__(self) -> None:
        for name in ("authentication", "encryption", "integrity", "negotiation"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, Requirement.parse(value))
        if isinstance(self.methods, str):
            self.methods = split_list(self.methods)
        if isinstance(self.crypto_methods, str):
            self.crypto_methods = split_list(self.crypto_methods)


@dataclass(frozen=True)
class ResolvedPolicy:
    """A level's complete settings after fallback."""

    authentication: Requirement
    encryption: Requirement
    integrity: Requirement
    negotiation: Requirement
    methods: list[str]
    crypto_methods: list[str]


def _default_level() -> LevelPolicy:
    return LevelPolicy(
        authentication=Requirement.PREFERRED,
        encryption=Requirement.OPTIONAL,
        integrity=Requirement.OPTIONAL,
        negotiation=Requirement.PREFERRED,
        methods=list(DEFAULT_SERVER_METHODS),
        crypto_methods=["AES"],
    )


@dataclass
class ServerPolicy:
    """Everything a :class:`~cedar.daemons.Daemon` decides security by.

    ``levels`` maps a level name (``READ``, ``WRITE``, ``DEFAULT`` ...) to its settings;
    ``allow``/``deny`` map a level to authorization patterns.  ``allow=None`` authorizes every
    identity at every level (handy for mock daemons); with a dict, a level nobody is listed for
    is closed, except that a grant of a level implies the levels it implies (WRITE -> READ).
    """

    levels: dict[str, LevelPolicy] = field(default_factory=dict)
    allow: dict[str, list[str]] | None = None
    deny: dict[str, list[str]] = field(default_factory=dict)
    session_duration: int = 86400
    session_lease: int = 3600
    uid_domain: str = field(default_factory=lambda: socket.gethostname().lower() or "localhost")
    trust_domain: str | None = None
    version: str = CEDAR_VERSION_STRING
    options: dict[str, Any] = field(default_factory=dict, repr=False)  # may hold secrets
    # Bounds on what one peer may make the daemon do (docs/security-findings.md lists them).
    #: Per read/write wait on a connection (seconds): how long a connection may sit idle.
    connection_timeout: float = 20.0
    #: The whole security negotiation must finish within this (``SEC_TCP_SESSION_DEADLINE``).
    session_deadline: float = 120.0
    #: Total time one connection may hold a slot, handshake and handler included (seconds).
    connection_lifetime: float = 300.0
    #: Connections served at once; more are closed right after accept.
    max_connections: int = 256
    #: Connections served at once from one peer address (the same host).
    max_connections_per_peer: int = 64
    #: Largest message accepted from a peer.
    max_message_size: int = 16 << 20
    #: Bytes all connections together may hold in unfinished messages; a read past it closes.
    max_buffered_bytes: int = 256 << 20
    #: Sessions kept in the server's cache.
    max_sessions: int = 10000
    #: Let sessions without a key be resumed (their id is then the only credential, issue 13
    #: §2).  Off: a keyless session is not cached.  Capture replays of clear-text pools need it.
    resume_keyless_sessions: bool = False
    #: Where the AES key of a legacy (non-ECDH) client comes from, given its length (spec 04
    #: §1.4): fresh random bytes.  A capture replay gives the recorded key instead, so the
    #: recorded client's encrypted messages read.  Out of the repr: it may return a secret.
    legacy_key_source: Callable[[int], bytes] = field(default=os.urandom, repr=False)
    #: Evaluation budget of one request, shared by all the ads it is evaluated against:
    #: steps, seconds in total, and seconds one single evaluation may run (see
    #: :class:`cedar.classad_wire.evaluate.Budget`).  Over it, the request gets an error.
    request_eval_steps: int = 20_000_000
    request_eval_seconds: float = 10.0
    eval_slice_seconds: float = 0.25

    def __post_init__(self) -> None:
        levels = {"DEFAULT": _default_level()}
        for name, value in self.levels.items():
            levels[name.upper()] = value
        base = levels["DEFAULT"]
        defaults = _default_level()
        for item in fields(LevelPolicy):  # a partial DEFAULT still has complete fallbacks
            if getattr(base, item.name) is None:
                setattr(base, item.name, getattr(defaults, item.name))
        self.levels = levels
        if self.allow is not None:
            self.allow = {normalize_level(k): split_list(v) for k, v in self.allow.items()}
        self.deny = {normalize_level(k): split_list(v) for k, v in self.deny.items()}

    @classmethod
    def from_knobs(cls, knobs: Mapping[str, Any], **kwargs: Any) -> ServerPolicy:
        """A policy from HTCondor knob names (``SEC_READ_AUTHENTICATION``, ``ALLOW_WRITE``)."""
        levels: dict[str, LevelPolicy] = {}
        allow: dict[str, list[str]] = {}
        deny: dict[str, list[str]] = {}
        suffixes = {
            "_AUTHENTICATION_METHODS": "methods",
            "_CRYPTO_METHODS": "crypto_methods",
            "_AUTHENTICATION": "authentication",
            "_ENCRYPTION": "encryption",
            "_INTEGRITY": "integrity",
            "_NEGOTIATION": "negotiation",
        }
        for raw_name, value in knobs.items():
            name = raw_name.upper()
            if name.startswith("SEC_"):
                for suffix, attribute in suffixes.items():
                    if name.endswith(suffix):
                        level = name[4 : -len(suffix)]
                        policy = levels.setdefault(level, LevelPolicy())
                        setattr(policy, attribute, value)
                        break
            elif name.startswith("ALLOW_"):
                allow[name[6:]] = split_list(value)
            elif name.startswith("DENY_"):
                deny[name[5:]] = split_list(value)
        for policy in levels.values():
            policy.__post_init__()
        return cls(levels=levels, allow=allow or None, deny=deny, **kwargs)

    def resolve(self, level: str) -> ResolvedPolicy:
        """The complete settings for ``level``."""
        chain = [self.levels[name] for name in config_fallbacks(level) if name in self.levels]

        def pick(attribute: str) -> Any:
            for policy in chain:
                value = getattr(policy, attribute)
                if value is not None:
                    return value
            return getattr(self.levels["DEFAULT"], attribute)

        return ResolvedPolicy(
            authentication=pick("authentication"),
            encryption=pick("encryption"),
            integrity=pick("integrity"),
            negotiation=pick("negotiation"),
            methods=list(pick("methods")),
            crypto_methods=[name.upper() for name in pick("crypto_methods")],
        )

    def is_authorized(self, user: str, peer_host: str | None, level: str) -> bool:
        """Whether ``user`` connecting from ``peer_host`` holds ``level`` (DENY beats ALLOW)."""
        level = normalize_level(level)
        if level == "ALLOW":
            return True
        if any(_matches(p, user, peer_host) for p in self.deny.get(level, [])):
            return False
        if self.allow is None:
            return True
        return any(
            _matches(pattern, user, peer_host)
            for granted in levels_implying(level)
            for pattern in self.allow.get(granted, [])
        )


def _matches(pattern: str, user: str, host: str | None) -> bool:
    if "/" in pattern:
        user_pattern, host_pattern = pattern.split("/", 1)
    elif "@" in pattern:
        user_pattern, host_pattern = pattern, "*"
    else:
        user_pattern, host_pattern = "*", pattern
    if not fnmatch.fnmatchcase(user, user_pattern):
        return False
    return host_pattern == "*" or (
        host is not None and fnmatch.fnmatch(host.lower(), host_pattern.lower())
    )


def default_admins() -> list[str]:
    """Who administers a mock pool by default: the local user running it, and ``condor``."""
    try:
        me = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        me = "condor"
    return sorted({f"{me}@*", "condor@*"})


def real_pool_policy(
    methods: list[str] | None = None,
    *,
    encryption: str = "OPTIONAL",
    admins: list[str] | None = None,
    writers: list[str] | None = None,
    **kwargs: Any,
) -> ServerPolicy:
    """The secure defaults of the mock daemons, modelled on a real (minicondor) pool's config.

    ``SEC_DEFAULT_AUTHENTICATION = REQUIRED`` with ``SEC_READ_AUTHENTICATION = OPTIONAL``;
    ``ALLOW_READ = *``; WRITE for ``writers`` (default ``*@*``: any authenticated identity);
    DAEMON, ADVERTISE_*, NEGOTIATOR and ADMINISTRATOR for ``admins`` only (default
    :func:`default_admins`).  ``encryption`` sets encryption and integrity at every level
    but READ, which has them OPTIONAL (as a real pool's ``SECURITY : Recommended_v9_0``, so
    that raw, unnegotiated reads are answered there too; a negotiated READ is still encrypted
    when the client offers AES) unless ``encryption`` is NEVER (a clear pool stays clear).
    Loosen it with :func:`open_policy` (everyone may do everything) or by passing your own
    ``ServerPolicy(allow=..., levels=...)``; docs/security-findings.md compares the two.
    """
    default = LevelPolicy(
        authentication=Requirement.REQUIRED,
        encryption=encryption,
        integrity=encryption,
        methods=list(methods) if methods else list(DEFAULT_SERVER_METHODS),
        crypto_methods=[] if str(encryption).upper() == "NEVER" else ["AES"],  # AES forces it
    )
    admin_list = list(admins) if admins is not None else default_admins()
    allow = {
        "READ": ["*"],
        "WRITE": list(writers) if writers is not None else ["*@*"],
        "NEGOTIATOR": admin_list,
        "ADMINISTRATOR": admin_list,
        "DAEMON": admin_list,
        "ADVERTISE_STARTD": admin_list,
        "ADVERTISE_SCHEDD": admin_list,
        "ADVERTISE_MASTER": admin_list,
    }
    read = LevelPolicy(authentication=Requirement.OPTIONAL)
    if Requirement.parse(encryption) is not Requirement.NEVER:
        read.encryption = read.integrity = Requirement.OPTIONAL
    levels = {"DEFAULT": default, "READ": read}
    levels.update(kwargs.pop("levels", {}))
    return ServerPolicy(levels=levels, allow=kwargs.pop("allow", allow), **kwargs)


def open_policy(**kwargs: Any) -> ServerPolicy:
    """The loosened policy: authentication preferred, every identity allowed every level.

    For tests and demos that want raw, anonymous updates; never the default of a mock daemon.
    """
    return ServerPolicy(allow=None, **kwargs)


#: Named security setups for the mock daemons (``cedar pool`` options build on these):
#: ``secure`` is the default (:func:`real_pool_policy`), ``open`` the loosened one.
SECURITY_PRESETS: dict[str, Callable[..., ServerPolicy]] = {
    "secure": real_pool_policy,
    "open": open_policy,
}
