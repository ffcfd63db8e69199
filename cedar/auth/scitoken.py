"""SciTokens: client token discovery, server-side validation and the map file (spec 04 §8).

The server never fetches issuer keys over the network: each trusted issuer is configured with
its public key(s) locally, the ``scitokens`` library verifies signature and claims, and the
identity ``iss,sub`` must map through a ``CERTIFICATE_MAPFILE``-style table, as the reference
requires before it answers HOLDING.  The token itself is a bearer credential and is never logged
or put into an exception.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cedar.auth.errors import SciTokenError as SciTokenError  # its old home exports it
from cedar.auth.errors import TokenError
from cedar.auth.token import (
    MAX_TOKEN_SIZE,
    b64url_decode,
    claim_seconds,
    parse_json_object,
)

log = logging.getLogger(__name__)

#: Files of this size or more are refused as bearer tokens (spec 04 §8.2).
MAX_TOKEN_FILE = 16384
WLCG_ANY_AUDIENCE = "https://wlcg.cern.ch/jwt/v1/any"
ALLOWED_ALGORITHMS = ("RS256", "ES256")
SCOPE_PREFIX = "condor:/"


# -- client: discovery (spec 04 §8.2, spec 06 §2.2) -----------------------------------------------


def _clean(text: str) -> str | None:
    token = text.strip(" \t\f\n\v\r")
    if "\r\n" in token:
        raise SciTokenError("bearer token contains CR LF")
    return token or None


def _read_bearer_file(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TOKEN_FILE)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise SciTokenError(f"cannot read bearer token file {path}: {exc.strerror}") from None
    if len(data) >= MAX_TOKEN_FILE:
        raise SciTokenError(f"bearer token file {path} is too large")
    return _clean(data.decode("utf-8", "replace"))


def discover_scitoken(
    *, scitokens_file: str | None = None, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """``(token, source)`` the client would present, or ``None`` (spec 04 §8.2).

    ``SCITOKENS_FILE`` first (first non-comment line); otherwise ``BEARER_TOKEN``,
    ``BEARER_TOKEN_FILE``, ``$XDG_RUNTIME_DIR/bt_u<euid>``, ``/tmp/bt_u<euid>``.  A file holding
    no token counts as "no token" (the reference would send an empty token and stall).
    """
    env = os.environ if environ is None else environ
    if scitokens_file:
        try:
            text = Path(scitokens_file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise SciTokenError(
                f"cannot read SCITOKENS_FILE {scitokens_file}: {exc.strerror}"
            ) from None
        for line in text.split("\n"):
            line = line.strip()
            if line and not line.startswith("#"):
                return line, scitokens_file
        return None
    value = env.get("BEARER_TOKEN")
    if value:
        token = _clean(value)
        if token:
            return token, "BEARER_TOKEN"
    candidates = []
    if env.get("BEARER_TOKEN_FILE"):
        candidates.append(env["BEARER_TOKEN_FILE"])
    euid = os.geteuid()
    if env.get("XDG_RUNTIME_DIR"):
        candidates.append(os.path.join(env["XDG_RUNTIME_DIR"], f"bt_u{euid}"))
    candidates.append(f"/tmp/bt_u{euid}")
    for path in candidates:
        token = _read_bearer_file(path)
        if token:
            return token, path
    return None


# -- map file -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapRule:
    """One ``METHOD regex canonical`` line."""

    method: str
    pattern: re.Pattern[str]
    canonical: str


class MapFile:
    """A ``CERTIFICATE_MAPFILE``: the first rule whose method and regex match gives the name.

    The canonical field may use ``\\1`` .. ``\\9`` for the regex groups.  Lines are
    ``METHOD regex canonical``; a field may be double-quoted to contain blanks.
    """

    def __init__(self, rules: Iterable[MapRule] = ()) -> None:
        self.rules = list(rules)

    @classmethod
    def parse(cls, text: str) -> MapFile:
        """Rules from map-file text (``#`` comments and blank lines skipped)."""
        rules = []
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [
                m.group(1) if m.group(1) is not None else m.group(2)
                for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|(\S+)', line)
            ]
            if len(fields) != 3:
                raise SciTokenError(f"map file line {number}: expected METHOD REGEX NAME")
            try:
                pattern = re.compile(fields[1])
            except re.error as exc:
                raise SciTokenError(f"map file line {number}: bad regex: {exc}") from None
            rules.append(MapRule(fields[0].upper(), pattern, fields[2]))
        return cls(rules)

    @classmethod
    def load(cls, path: str) -> MapFile:
        """Read a map file."""
        return cls.parse(Path(path).read_text(encoding="utf-8"))

    def map(self, method: str, name: str) -> str | None:
        """The canonical name for ``name`` authenticated with ``method``, or ``None``."""
        for rule in self.rules:
            if rule.method != method.upper() and rule.method != "*":
                continue
            found = rule.pattern.search(name)
            if found:
                groups: list[str] = [found.group(0), *(g or "" for g in found.groups())]

                def group(m: re.Match[str], groups: list[str] = groups) -> str:
                    index = int(m.group(1))
                    return groups[index] if index < len(groups) else ""

                return re.sub(r"\\(\d)", group, rule.canonical)
        return None

    def __repr__(self) -> str:
        return f"<MapFile {len(self.rules)} rules>"


# -- server: validation (spec 04 §8.3-§8.4) -----------------------------------------------------


@dataclass
class SciTokenIssuer:
    """A trusted issuer and its public key(s) in PEM, by ``kid`` (``None`` = any kid)."""

    issuer: str
    keys: dict[str | None, bytes] = field(repr=False, default_factory=dict)

    @classmethod
    def with_key(cls, issuer: str, pem: bytes | str, kid: str | None = None) -> SciTokenIssuer:
        """An issuer with one key."""
        return cls(issuer, {kid: pem.encode() if isinstance(pem, str) else pem})

    def key_for(self, kid: str | None) -> bytes | None:
        """The PEM for a token's ``kid``."""
        if kid in self.keys:
            return self.keys[kid]
        if None in self.keys:
            return self.keys[None]
        return None


@dataclass
class SciTokenServerSettings:
    """What a server needs to accept SciTokens without network access."""

    issuers: list[SciTokenIssuer] = field(default_factory=list)
    audiences: list[str] = field(default_factory=list)
    mapfile: MapFile | None = None

    def issuer(self, name: str) -> SciTokenIssuer | None:
        """The configured issuer with this ``iss``."""
        return next((i for i in self.issuers if i.issuer == name), None)


@dataclass(frozen=True)
class SciTokenIdentity:
    """A validated token: who it names, and what it allows."""

    issuer: str
    subject: str
    user: str
    domain: str | None
    token_id: str | None
    scopes: list[str]
    authorizations: list[str]
    groups: list[str]

    @property
    def authenticated_name(self) -> str:
        """``iss,sub``: the name the map file is consulted with."""
        return f"{self.issuer},{self.subject}"


def _unverified(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    parts = text.split(".")
    if len(parts) != 3:
        raise SciTokenError("invalid token supplied (not a JWT)")
    if len(text) > MAX_TOKEN_SIZE:
        raise SciTokenError(f"invalid token supplied (longer than {MAX_TOKEN_SIZE} characters)")
    try:
        return parse_json_object(b64url_decode(parts[0]), "header"), parse_json_object(
            b64url_decode(parts[1]), "payload"
        )
    except TokenError:
        raise SciTokenError("invalid token supplied (header or payload not usable JSON)") from None


def _audience_ok(aud: Any, audiences: list[str], claims: Mapping[str, Any]) -> str | None:
    """The audience value that matched, ``None`` if the token's ``aud`` is not acceptable."""
    values = aud if isinstance(aud, list) else [aud]
    for value in values:
        if value in audiences:
            return str(value)
        if value == "ANY" and claims.get("ver") in ("scitoken:2.0", "scitokens:2.0"):
            return str(value)
        if value == WLCG_ANY_AUDIENCE and claims.get("wlcg.ver") is not None:
            return str(value)
    return None


def validate_scitoken(
    text: str, settings: SciTokenServerSettings, *, now: float | None = None
) -> SciTokenIdentity:
    """Verify a SciToken against the local issuer configuration and map it to a user.

    Raises :class:`SciTokenError` with the reason: unknown issuer, bad signature, expired, wrong
    audience, no ``condor:/`` scope, no map-file entry.
    """
    import scitokens  # heavy import: only servers that accept SciTokens pay for it

    header, claims = _unverified(text)
    alg = header.get("alg")
    if alg not in ALLOWED_ALGORITHMS:
        raise SciTokenError(f"token algorithm {alg!r} is not RS256 or ES256")
    iss = claims.get("iss")
    if not isinstance(iss, str) or not iss:
        raise SciTokenError("token has no iss claim")
    issuer = settings.issuer(iss)
    if issuer is None:
        raise SciTokenError(f"issuer {iss!r} is not trusted by this server")
    pem = issuer.key_for(header.get("kid"))
    if pem is None:
        raise SciTokenError(f"no key configured for issuer {iss!r} and kid {header.get('kid')!r}")
    current = time.time() if now is None else now
    for claim in ("exp", "iat"):
        if claim_seconds(claims.get(claim)) is None:
            raise SciTokenError(f"token has no usable {claim} claim")
    if current > claims["exp"]:
        raise SciTokenError(f"token expired at {claim_seconds(claims['exp'])} (now {int(current)})")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise SciTokenError("token has no sub claim")
    aud = claims.get("aud")
    matched_aud: str | None = None
    if aud is not None or settings.audiences:
        matched_aud = _audience_ok(aud, settings.audiences, claims)
        if matched_aud is None:
            raise SciTokenError(
                f"token audience {aud!r} is not one this server accepts "
                f"({', '.join(settings.audiences) or 'none configured'})"
            )
    try:
        token = scitokens.SciToken.deserialize(text, audience=matched_aud, public_key=pem)
    except Exception as exc:  # the library raises many unrelated types
        raise SciTokenError(f"token signature or claims invalid: {type(exc).__name__}") from None
    enforcer = scitokens.Enforcer(iss, audience=matched_aud if matched_aud != "ANY" else None)
    if matched_aud == "ANY":
        enforcer.add_validator("aud", lambda value: True)
    try:
        acls = enforcer.generate_acls(token)
    except Exception as exc:
        why = getattr(enforcer, "last_failure", None) or type(exc).__name__
        raise SciTokenError(f"token claims rejected: {why}") from None
    levels = [path[1:] for authz, path in acls if authz == "condor" and path.startswith("/")]
    if not levels:
        raise SciTokenError("token grants no condor:/<LEVEL> scope")
    name = f"{iss},{sub}"
    mapped = settings.mapfile.map("SCITOKENS", name) if settings.mapfile else None
    if not mapped:
        raise SciTokenError(f"no CERTIFICATE_MAPFILE entry maps SCITOKENS {name!r}")
    user, sep, domain = mapped.rpartition("@")
    if not sep:
        user, domain = mapped, ""
    scope = claims.get("scope")
    groups = claims.get("wlcg.groups")
    return SciTokenIdentity(
        issuer=iss,
        subject=sub,
        user=user,
        domain=domain.lower() or None,
        token_id=claims.get("jti") if isinstance(claims.get("jti"), str) else None,
        scopes=scope.split() if isinstance(scope, str) else [],
        authorizations=levels,
        groups=[str(g) for g in groups] if isinstance(groups, list) else [],
    )


__all__ = [
    "MapFile",
    "MapRule",
    "SciTokenError",
    "SciTokenIdentity",
    "SciTokenIssuer",
    "SciTokenServerSettings",
    "discover_scitoken",
    "validate_scitoken",
]
