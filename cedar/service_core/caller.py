"""Who is calling: the bearer token a request carried (or none), never shown.

The token is the caller's only credential.  Its claims are read unverified here, and only to
choose which CEDAR method carries it (IDTOKEN or SCITOKENS); the identity a service reports and
scopes by is what the daemon authenticated (:meth:`cedar.service_core.PoolAccess.whoami`), never a
claim.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass, field

from cedar.service_core.errors import BadCredential as BadCredential  # its home; still exported

#: A bearer token longer than this is refused before anything else looks at it.
MAX_TOKEN_BYTES = 16384

#: ``Caller.kind`` values.
IDTOKEN = "idtoken"
SCITOKEN = "scitoken"
#: The user who started the server (``cedar mcp`` over stdio): the process's own credentials.
LOCAL = "local"


def _claims(token: str) -> dict[str, object]:
    """The payload of a JWT, unverified (only to pick the method; see the module doc)."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts):
        raise BadCredential("the bearer token is not a JWT (three base64url parts)")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, UnicodeError):
        raise BadCredential("the bearer token's payload is not base64url JSON") from None
    if not isinstance(claims, dict):
        raise BadCredential("the bearer token's payload is not a JSON object")
    return claims


def token_kind(token: str) -> str:
    """``scitoken`` when the claims say so (``scope``, ``ver``/``wlcg.ver``), else ``idtoken``."""
    return _kind(_claims(token))


def _kind(claims: dict[str, object]) -> str:
    version = str(claims.get("ver") or "")
    if "scope" in claims or "wlcg.ver" in claims or version.startswith("scitoken"):
        return SCITOKEN
    return IDTOKEN


@dataclass(frozen=True)
class Caller:
    """A request's credential: a bearer token (IDTOKEN or SciToken) or none (anonymous READ).

    ``key`` names the caller in caches and rate limits (a hash, never the token); ``repr`` and
    ``str`` never show the token.
    """

    token: str | None = field(default=None, repr=False)
    kind: str | None = None
    key: str = "anonymous"
    #: The token's own ``exp`` claim (seconds since the epoch), if it has one: an identity the
    #: daemon gave for it is never used past this moment (:meth:`PoolAccess.whoami`).
    expires: float | None = None

    @classmethod
    def anonymous(cls) -> Caller:
        """A caller without a token: an unauthenticated READ client to the daemons."""
        return cls()

    @classmethod
    def local(cls) -> Caller:
        """The user who started the process (its HTCondor configuration, token or FS): the
        stdio caller of ``cedar mcp``.  No HTTP request is ever this caller."""
        return cls(kind=LOCAL, key="local")

    @property
    def is_local(self) -> bool:
        """Whether this is :meth:`local` (the process's own credentials)."""
        return self.kind == LOCAL

    @classmethod
    def from_token(cls, token: str) -> Caller:
        """A caller holding ``token`` (checked for shape only).

        The same token gives the same (immutable) caller, remembered for the last
        :data:`KNOWN_TOKENS` tokens: every request of a client carries its token, and reading
        its claims and hashing it again each time was a measurable part of a one-job GET.
        A refused token is not remembered (it is checked again each time)."""
        token = token.strip()
        if len(token) > MAX_TOKEN_BYTES:  # before it is used as a cache key
            raise BadCredential(f"bearer token longer than {MAX_TOKEN_BYTES} bytes")
        known = _caller_of_token(token)
        if cls is Caller:
            return known
        # a subclass: its own type
        return cls(token=known.token, kind=known.kind, key=known.key, expires=known.expires)

    @classmethod
    def from_authorization(cls, header: str | None) -> Caller:
        """The caller an ``Authorization`` header names (absent = anonymous)."""
        if header is None or not header.strip():
            return cls.anonymous()
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise BadCredential("only 'Authorization: Bearer <token>' is accepted")
        return cls.from_token(value)

    @property
    def authenticated(self) -> bool:
        """Whether the caller brought a credential (a token, or the process's own for
        :meth:`local`); not whether a daemon accepted it."""
        return self.token is not None or self.kind == LOCAL

    def __str__(self) -> str:
        return self.key if self.token is None else f"{self.kind} caller {self.key}"


#: Tokens whose :class:`Caller` is remembered (at most ``MAX_TOKEN_BYTES`` each).
KNOWN_TOKENS = 256


@functools.lru_cache(maxsize=KNOWN_TOKENS)
def _caller_of_token(token: str) -> Caller:
    """:meth:`Caller.from_token` for a stripped token of bounded length (remembered)."""
    if not token:
        raise BadCredential("empty bearer token")
    if not token.isascii() or len(token.split(None, 1)) != 1:
        raise BadCredential("the bearer token has characters a JWT cannot have")
    claims = _claims(token)
    expires = claims.get("exp")
    digest = hashlib.sha256(token.encode("ascii")).hexdigest()[:32]
    return Caller(
        token=token,
        kind=_kind(claims),
        key=f"token:{digest}",
        expires=float(expires) if isinstance(expires, (int, float)) else None,
    )
