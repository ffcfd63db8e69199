"""The registry of authentication methods (spec 04 §1).

A method is an object with a wire ``name`` and ``bit`` and two protocol coroutines, one per role.
The security handshake only ever talks to methods through this registry, so another package can
add TOKEN/SSL/SCITOKENS by calling :func:`register_method` at import time; see ``docs/CONTRACTS.md``
for the interface.  The built-in methods are registered by :mod:`cedar.auth.methods.registration`
(imported by :mod:`cedar.auth`, so before any use), since they import this module.
"""

from __future__ import annotations

import _thread  # the lock alone: threading is a costly import at start-up
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from cedar.errors import InvalidArgument
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol

if TYPE_CHECKING:
    from cedar.auth.sinful import Sinful

#: Every method bit of the wire protocol (spec 04 §1.2), including ones cedar does not implement,
#: so that lists from peers can be read and reported by name.
METHOD_BITS: dict[str, int] = {
    "CLAIMTOBE": 0x0002,
    "FS": 0x0004,
    "FS_REMOTE": 0x0008,
    "NTSSPI": 0x0010,
    "GSI": 0x0020,
    "KERBEROS": 0x0040,
    "ANONYMOUS": 0x0080,
    "SSL": 0x0100,
    "PASSWORD": 0x0200,
    "MUNGE": 0x0400,
    "TOKEN": 0x0800,
    "SCITOKENS": 0x1000,
}

#: Config spellings rewritten before a list goes on the wire (spec 04 §1.2, spec 03 §4.2).
METHOD_ALIASES: dict[str, str] = {
    "TOKENS": "TOKEN",
    "IDTOKEN": "TOKEN",
    "IDTOKENS": "TOKEN",
    "SCITOKEN": "SCITOKENS",
}

#: How condor_ping -verbose names a method it authenticated with, where that differs from the
#: wire name (observed on 25.13.2: "Authenticated using: IDTOKENS" after a TOKEN exchange).
TOOL_SPELLINGS: dict[str, str] = {"TOKEN": "IDTOKENS"}

#: Identity of an unauthenticated peer (spec 04 §1.5).
UNAUTHENTICATED_USER = "unauthenticated@unmapped"


def canonical_method_name(name: str) -> str | None:
    """The wire spelling of a method name, or ``None`` if it is no CEDAR method at all."""
    upper = name.strip().upper()
    upper = METHOD_ALIASES.get(upper, upper)
    return upper if upper in METHOD_BITS else None


def method_bits(names: list[str]) -> int:
    """OR of the bits of ``names`` (unknown names contribute nothing)."""
    mask = 0
    for name in names:
        canonical = canonical_method_name(name)
        if canonical is not None:
            mask |= METHOD_BITS[canonical]
    return mask


def names_of_bits(mask: int) -> list[str]:
    """Method names of the bits set in ``mask`` (for error messages)."""
    names = [name for name, bit in METHOD_BITS.items() if mask & bit]
    unknown = mask & ~sum(METHOD_BITS.values())
    if unknown:
        names.append(f"unknown bits {unknown:#x}")
    return names


class AuthContext(Record, hidden=("options",)):
    """What a method may need to know about the connection it runs on.

    ``local_address``/``peer_address`` are the socket endpoints as this side sees them (FS binds
    the server's endpoint into its directory name).  ``options`` holds method knobs by their
    HTCondor config name (``FS_LOCAL_DIR``, ``SEC_CLAIMTOBE_USER``, ``SEC_TOKEN_DIRECTORY`` ...).
    ``peer_ad``/``own_ad`` are the handshake ads (client: M2/M1, server: M1/M2).
    """

    __slots__ = (
        "role",
        "local_address",
        "peer_address",
        "uid_domain",
        "trust_domain",
        "options",
        "connect_sinful",
        "shared_port_id",
        "command",
        "permission",
        "peer_ad",
        "own_ad",
    )

    def __init__(
        self,
        role: str,  # "client" or "server"
        local_address: tuple[str, int] | None = None,
        peer_address: tuple[str, int] | None = None,
        uid_domain: str = "",
        trust_domain: str = "",
        options: Mapping[str, Any] | None = None,  # may hold tokens: not in the repr
        connect_sinful: Sinful | None = None,
        shared_port_id: str | None = None,
        command: int | None = None,
        permission: str | None = None,
        peer_ad: Any = None,
        own_ad: Any = None,
    ) -> None:
        self.role = role
        self.local_address = local_address
        self.peer_address = peer_address
        self.uid_domain = uid_domain
        self.trust_domain = trust_domain
        self.options: Mapping[str, Any] = {} if options is None else options
        self.connect_sinful = connect_sinful
        self.shared_port_id = shared_port_id
        self.command = command
        self.permission = permission
        self.peer_ad = peer_ad
        self.own_ad = own_ad


class MethodResult(Record):
    """The outcome of one method exchange.

    On the server, ``user``/``domain`` are the authenticated client; on the client they are the
    server identity if the method proves one (SSL), else ``None``.  ``error`` says why a method
    failed (never a secret).  ``wrap_key``/``unwrap_key`` protect a legacy (non-ECDH) session key
    in the post-authentication key message; ``None`` means the key travels in clear.
    ``limit_authorization`` restricts the session to these levels (CLAIMTOBE, token scopes).
    ``unread``: replies of this exchange the client did not wait for, because it knew the
    outcome (a failed FS); the method loop reads them after sending its next mask, which saves
    a round trip.
    """

    __slots__ = (
        "success",
        "user",
        "domain",
        "authenticated_name",
        "error",
        "wrap_key",
        "unwrap_key",
        "limit_authorization",
        "extra",
        "unread",
    )

    def __init__(
        self,
        success: bool,
        user: str | None = None,
        domain: str | None = None,
        authenticated_name: str | None = None,
        error: str | None = None,
        wrap_key: Callable[[bytes], bytes] | None = None,
        unwrap_key: Callable[[bytes], bytes] | None = None,
        limit_authorization: list[str] | None = None,
        extra: dict[str, Any] | None = None,
        unread: int = 0,
    ) -> None:
        self.success = success
        self.user = user
        self.domain = domain
        self.authenticated_name = authenticated_name
        self.error = error
        self.wrap_key = wrap_key
        self.unwrap_key = unwrap_key
        self.limit_authorization = limit_authorization
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.unread = unread

    @property
    def fqu(self) -> str | None:
        """``user@domain`` (or ``user`` without a domain), the form authorization lists match."""
        if not self.user:
            return None
        return f"{self.user}@{self.domain}" if self.domain else self.user

    @classmethod
    def failed(cls, error: str) -> MethodResult:
        """A failure with a reason."""
        return cls(False, error=error)


class AuthMethod:
    """Base class of an authentication method; subclasses set ``name``/``bit`` and the roles.

    ``client_available``/``server_available`` let a method drop out of the offered lists when it
    cannot run here (no token, no certificate).  ``client_ad_attributes`` and
    ``server_ad_attributes`` may add literal attributes to M1 / M2 (e.g. ``IssuerKeys``).
    """

    name: ClassVar[str] = ""
    bit: ClassVar[int] = 0

    def client_available(self, ctx: AuthContext) -> bool:
        """Whether this process can run the client role now."""
        return True

    def server_available(self, ctx: AuthContext) -> bool:
        """Whether this process can run the server role now."""
        return True

    def client_ad_attributes(self, ctx: AuthContext) -> dict[str, Any]:
        """Extra literal attributes for the client policy ad when this method is offered."""
        return {}

    def server_ad_attributes(self, ctx: AuthContext) -> dict[str, Any]:
        """Extra literal attributes for the server response ad when this method is configured."""
        return {}

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Run the client side of the exchange."""
        raise NotImplementedError
        yield  # pragma: no cover

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Run the server side of the exchange."""
        raise NotImplementedError
        yield  # pragma: no cover

    def __repr__(self) -> str:
        return f"<auth method {self.name}>"


class DeferredMethod(AuthMethod):
    """A method whose module is imported the first time a handshake runs it or a server asks
    whether it can: the client's offer needs only its name and bit, so a client that
    authenticates with FS never imports TOKEN's, SSL's or SCITOKENS' machinery (``ssl``,
    key derivation, token parsing).

    A subclass sets ``name``/``bit`` and :meth:`load` (which imports and makes the real
    method).  Only for methods that keep :class:`AuthMethod`'s client hooks (always offered,
    no extra attributes in M1); ``tests/auth`` checks the built-in ones.
    """

    def __init__(self) -> None:
        self._method: AuthMethod | None = None
        self._load_lock = _thread.allocate_lock()

    def load(self) -> AuthMethod:
        """Import the method's module and make the method."""
        raise NotImplementedError

    @property
    def method(self) -> AuthMethod:
        """The real method (imported on first use)."""
        if self._method is None:
            with self._load_lock:
                if self._method is None:
                    self._method = self.load()
        return self._method

    def server_available(self, ctx: AuthContext) -> bool:
        """The real method's answer."""
        return self.method.server_available(ctx)

    def server_ad_attributes(self, ctx: AuthContext) -> dict[str, Any]:
        """The real method's attributes."""
        return self.method.server_ad_attributes(ctx)

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Run the real method's client role."""
        return self.method.client(conn, ctx)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Run the real method's server role."""
        return self.method.server(conn, ctx)

    def __repr__(self) -> str:
        return f"<auth method {self.name} (deferred)>"


_registry: dict[str, AuthMethod] = {}
_lock = _thread.allocate_lock()


def register_method(method: AuthMethod, *, replace: bool = False) -> None:
    """Make ``method`` available to both roles under its wire name."""
    canonical = canonical_method_name(method.name)
    if canonical is None or METHOD_BITS[canonical] != method.bit:
        raise InvalidArgument(f"{method.name!r} with bit {method.bit:#x} is not a CEDAR method")
    with _lock:
        if canonical in _registry and not replace:
            raise InvalidArgument(f"authentication method {canonical} is already registered")
        _registry[canonical] = method


def unregister_method(name: str) -> None:
    """Remove a method (tests)."""
    canonical = canonical_method_name(name)
    with _lock:
        _registry.pop(canonical or name, None)


def get_method(name: str) -> AuthMethod | None:
    """The registered method for a name in any accepted spelling, or ``None``."""
    canonical = canonical_method_name(name)
    return _registry.get(canonical) if canonical else None


def method_for_bit(bit: int) -> AuthMethod | None:
    """The registered method with this bit, or ``None``."""
    for method in _registry.values():
        if method.bit == bit:
            return method
    return None


def available_methods(names: Iterable[str], available: Callable[[AuthMethod], bool]) -> list[str]:
    """The registered methods among ``names`` for which ``available(method)`` holds.

    Canonical spelling, first mention wins, unknown names dropped: the client's offer and the
    server's list are filtered the same way, only the availability hook differs.
    """
    result: list[str] = []
    for name in names:
        canonical = canonical_method_name(name)
        if canonical is None or canonical in result:
            continue
        method = get_method(canonical)
        if method is not None and available(method):
            result.append(canonical)
    return result


def registered_methods() -> list[str]:
    """Wire names of every registered method."""
    return list(_registry)


__all__ = [
    "METHOD_ALIASES",
    "METHOD_BITS",
    "UNAUTHENTICATED_USER",
    "AuthContext",
    "AuthMethod",
    "DeferredMethod",
    "MethodResult",
    "available_methods",
    "canonical_method_name",
    "get_method",
    "method_bits",
    "method_for_bit",
    "names_of_bits",
    "register_method",
    "registered_methods",
    "unregister_method",
]
