"""The TOKEN (IDTOKENS) method for the auth-method registry (spec 04 §5).

Client options (``ctx.options``): ``token`` -- a token text (or list of texts) used before any
file; ``SEC_TOKEN_DIRECTORY`` -- else the configuration's token directory.  Server options:
``signing_keys`` -- a :class:`SigningKeyStore` or a list of :class:`SigningKey`; else
``SEC_PASSWORD_DIRECTORY`` / ``SEC_TOKEN_POOL_SIGNING_KEY_FILE`` from the configuration;
``SEC_TOKEN_MAX_AGE`` (seconds, unset = unlimited).
"""

from __future__ import annotations

from typing import Any

from cedar.auth import keywrap
from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.auth.methods._credentials import ad_get, config_of, knob
from cedar.auth.signing_key import SigningKey, SigningKeyStore, key_store_from_options
from cedar.auth.token import (
    FoundToken,
    IdToken,
    client_exchange,
    create_token,
    discover_tokens,
    select_token,
    server_exchange,
    server_name_for,
    split_issuer_keys,
)
from cedar.lazy import LazyLogger
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol

log = LazyLogger(__name__)


def _in_memory_tokens(ctx: AuthContext) -> list[str]:
    value = ctx.options.get("token")
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def client_token_directory(ctx: AuthContext) -> str | None:
    """``SEC_TOKEN_DIRECTORY`` from the options, else the configuration's choice (spec 06 §2.1)."""
    explicit = knob(ctx, "SEC_TOKEN_DIRECTORY")
    return explicit if explicit else config_of(ctx).token_directory()


def client_candidates(ctx: AuthContext) -> list[FoundToken]:
    """Every token the client would consider, in search order."""
    config = config_of(ctx)
    return discover_tokens(
        client_token_directory(ctx),
        exclude=config.exclude_regexp(),
        subsystem=config.subsystem,
        in_memory=_in_memory_tokens(ctx),
    )


def server_key_store(ctx: AuthContext) -> SigningKeyStore:
    """The server's signing keys: ``signing_keys`` option, else the configured files."""
    value = ctx.options.get("signing_keys")
    if isinstance(value, SigningKeyStore):
        return value
    if isinstance(value, SigningKey):
        return SigningKeyStore([value])
    if value is not None:
        return key_store_from_options(ctx.options)
    config = config_of(ctx)
    options: dict[str, Any] = {
        "SEC_PASSWORD_DIRECTORY": knob(ctx, "SEC_PASSWORD_DIRECTORY"),
        "SEC_TOKEN_POOL_SIGNING_KEY_FILE": knob(ctx, "SEC_TOKEN_POOL_SIGNING_KEY_FILE"),
        "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP": config.exclude_regexp().pattern,
    }
    return key_store_from_options(options)


#: Seconds a token minted by a client from a pool key it can read is valid (spec 04 §5.7).
EPHEMERAL_TOKEN_LIFETIME = 60


def ephemeral_token(
    ctx: AuthContext, issuer: str | None, issuer_keys: list[str]
) -> FoundToken | None:
    """A short-lived token minted from a signing key the client can read (spec 04 §5.3 step 5,
    §5.7), as the reference client does when it has no token: root or ``condor`` on a pool
    host is then ``condor@password``, the identity daemons sharing the pool key use.

    Only when no token was given in memory, the server's issuer is our own trust domain and
    the server names keys (``IssuerKeys``); the first of them (sorted) we can read signs.
    """
    if ctx.options.get("token") is not None or not issuer_keys or not issuer:
        return None
    if issuer != ctx.trust_domain:
        return None
    store = server_key_store(ctx)  # the key files a daemon on this host would read
    for name in sorted(issuer_keys):
        key = store.get(name)
        if key is None:
            continue
        version = ad_get(ctx.peer_ad, "RemoteVersion")
        subject = server_name_for(version if isinstance(version, str) else None, ctx.uid_domain)
        text = create_token(key, issuer=issuer, subject=subject, lifetime=EPHEMERAL_TOKEN_LIFETIME)
        return FoundToken(IdToken.parse(text), f"<token minted with signing key {name}>")
    return None


class IdTokens(AuthMethod):
    """TOKEN: HMAC-signed JWTs and the AKEP2 exchange."""

    name = "TOKEN"
    bit = 0x0800

    def server_available(self, ctx: AuthContext) -> bool:
        """A server offers TOKEN only when it holds at least one signing key."""
        return bool(server_key_store(ctx).names())

    def server_ad_attributes(self, ctx: AuthContext) -> dict[str, Any]:
        """``IssuerKeys``: the names of the keys this server verifies with (spec 04 §5.2)."""
        names = server_key_store(ctx).names()
        return {"IssuerKeys": ", ".join(names)} if names else {}

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Choose a token for this server and run the exchange."""
        issuer = ad_get(ctx.peer_ad, "TrustDomain") or ctx.trust_domain or None
        keys_value = ad_get(ctx.peer_ad, "IssuerKeys")
        if keys_value is None:
            keys_value = ad_get(ctx.own_ad, "IssuerKeys")
        issuer_keys = split_issuer_keys(keys_value)
        candidates = client_candidates(ctx)
        chosen = select_token(candidates, issuer, issuer_keys)
        if chosen is None:
            chosen = ephemeral_token(ctx, issuer, issuer_keys)
        if chosen is None:
            where = client_token_directory(ctx) or "no token directory"
            reason = (
                f"no IDTOKEN found for issuer {issuer!r}"
                + (f" and keys {', '.join(issuer_keys)}" if issuer_keys else "")
                + f" (searched {where}; {len(candidates)} token(s) found, none matching)"
            )
            log.debug("TOKEN: %s", reason)
        else:
            log.debug("TOKEN: using %r from %s", chosen.token, chosen.source)
        outcome = yield from client_exchange(conn, chosen.token if chosen else None)
        if not outcome.success:
            if chosen is None:
                return MethodResult.failed(f"TOKEN: {reason}")
            return MethodResult.failed(f"TOKEN: {outcome.error} (token from {chosen.source})")
        assert outcome.material is not None and outcome.peer_name is not None
        user, _, domain = outcome.peer_name.rpartition("@")
        wrap, unwrap = keywrap.wrappers(outcome.material)
        return MethodResult(
            True,
            user=user or outcome.peer_name,
            domain=domain or None,
            wrap_key=wrap,
            unwrap_key=unwrap,
        )

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Verify the client's token with our signing keys; limit the session to its scopes."""
        max_age_text = knob(ctx, "SEC_TOKEN_MAX_AGE")
        max_age = float(max_age_text) if max_age_text and max_age_text.strip() else None
        remote_version = ad_get(ctx.peer_ad, "RemoteVersion")
        outcome = yield from server_exchange(
            conn,
            server_key_store(ctx),
            server_name=server_name_for(
                remote_version if isinstance(remote_version, str) else None, ctx.uid_domain
            ),
            max_age=max_age,
        )
        if not outcome.success or outcome.token is None:
            log.info("TOKEN authentication failed: %s", outcome.error)
            return MethodResult.failed(f"TOKEN: {outcome.error}")
        token = outcome.token
        name = outcome.peer_name or ""
        user, sep, domain = name.rpartition("@")
        if not sep:
            user, domain = name, ""
        extra: dict[str, Any] = {
            "AuthTokenSubject": token.subject,
            "AuthTokenIssuer": token.issuer,
            "AuthTokenId": token.token_id,
        }
        if token.scopes:
            extra["AuthTokenScopes"] = ",".join(token.scopes)
        if token.expires_at is not None:
            extra["TokenExpirationTime"] = token.expires_at
        project = token.claims.get("project")
        if isinstance(project, str):
            extra["AuthTokenProject"] = project
        limits = token.authorizations
        if limits:
            extra["LimitAuthorization"] = ",".join(limits)
        wrap, unwrap = keywrap.wrappers(outcome.material or b"")
        return MethodResult(
            True,
            user=user,
            domain=domain.lower() if domain else None,
            limit_authorization=limits,
            wrap_key=wrap,
            unwrap_key=unwrap,
            extra={k: v for k, v in extra.items() if v is not None},
        )


__all__ = [
    "EPHEMERAL_TOKEN_LIFETIME",
    "IdTokens",
    "ephemeral_token",
    "client_candidates",
    "client_token_directory",
    "server_key_store",
]
