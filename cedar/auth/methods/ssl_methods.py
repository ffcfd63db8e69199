"""The SSL and SCITOKENS methods for the auth-method registry (spec 04 §7, §8).

Client options: ``ssl_client`` -- a :class:`TlsClientSettings`; else the ``AUTH_SSL_CLIENT_*``
knobs and ``SSL_SKIP_HOST_CHECK``.  The expected server name is the ``alias`` of the address the
client dialled (``SSL_HOST`` overrides it).  SCITOKENS also takes ``scitoken`` (the token text),
else ``SCITOKENS_FILE`` / bearer-token discovery.

Server options: ``ssl_server`` -- a :class:`TlsServerSettings`; else ``AUTH_SSL_SERVER_*`` knobs;
``certificate_mapfile`` -- a :class:`MapFile`, else ``CERTIFICATE_MAPFILE``; ``scitokens_server``
-- a :class:`SciTokenServerSettings` (trusted issuers with their local public keys), whose
audiences default to ``SCITOKENS_SERVER_AUDIENCE``.
"""

from __future__ import annotations

import logging
from typing import Any

from cedar.auth import keywrap
from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.auth.methods._credentials import config_of, knob, knob_bool
from cedar.auth.scitoken import (
    MapFile,
    SciTokenError,
    SciTokenServerSettings,
    discover_scitoken,
    validate_scitoken,
)
from cedar.auth.tls import (
    TlsClientSettings,
    TlsOutcome,
    TlsServerSettings,
    client_send_token,
    client_tls,
    server_receive_token,
    server_tls,
)
from cedar.errors import InvalidArgument
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol

log = logging.getLogger(__name__)


def client_settings(ctx: AuthContext) -> TlsClientSettings:
    """TLS client settings from ``ssl_client`` or the ``AUTH_SSL_CLIENT_*`` knobs."""
    value = ctx.options.get("ssl_client")
    expected = knob(ctx, "SSL_HOST") or (ctx.connect_sinful.alias if ctx.connect_sinful else None)
    if isinstance(value, TlsClientSettings):
        if value.expected_host is None and expected:
            return TlsClientSettings(**{**value.__dict__, "expected_host": expected})
        return value
    use_proxy = knob_bool(ctx, "AUTH_SSL_USE_CLIENT_PROXY_ENV_VAR", False)
    proxy = config_of(ctx).environ.get("X509_USER_PROXY") if use_proxy else None
    return TlsClientSettings(
        cafile=knob(ctx, "AUTH_SSL_CLIENT_CAFILE"),
        cadir=knob(ctx, "AUTH_SSL_CLIENT_CADIR"),
        certfile=proxy or knob(ctx, "AUTH_SSL_CLIENT_CERTFILE"),
        keyfile=proxy or knob(ctx, "AUTH_SSL_CLIENT_KEYFILE"),
        use_default_cas=knob_bool(ctx, "AUTH_SSL_CLIENT_USE_DEFAULT_CAS", True),
        skip_host_check=knob_bool(ctx, "SSL_SKIP_HOST_CHECK", False),
        expected_host=expected,
    )


def server_settings(ctx: AuthContext) -> TlsServerSettings:
    """TLS server settings from ``ssl_server`` or the ``AUTH_SSL_SERVER_*`` knobs."""
    value = ctx.options.get("ssl_server")
    if isinstance(value, TlsServerSettings):
        return value

    def items(name: str) -> list[str]:
        text = knob(ctx, name) or ""
        return [x for x in text.replace(",", " ").split() if x]

    cafiles = items("AUTH_SSL_SERVER_CAFILE")
    return TlsServerSettings(
        certfiles=items("AUTH_SSL_SERVER_CERTFILE"),
        keyfiles=items("AUTH_SSL_SERVER_KEYFILE"),
        cafile=cafiles[-1] if cafiles else None,
        cadir=knob(ctx, "AUTH_SSL_SERVER_CADIR"),
        use_default_cas=knob_bool(ctx, "AUTH_SSL_SERVER_USE_DEFAULT_CAS", True),
        require_client_certificate=knob_bool(ctx, "AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE", False),
    )


def mapfile(ctx: AuthContext) -> MapFile | None:
    """The server's map file: ``certificate_mapfile`` option or ``CERTIFICATE_MAPFILE``."""
    value = ctx.options.get("certificate_mapfile")
    if isinstance(value, MapFile):
        return value
    path = knob(ctx, "CERTIFICATE_MAPFILE")
    if not path:
        return None
    try:
        return MapFile.load(path)
    except (OSError, SciTokenError) as exc:
        log.warning("cannot use CERTIFICATE_MAPFILE %s: %s", path, exc)
        return None


def _result(
    outcome: TlsOutcome, user: str | None, domain: str | None, **kwargs: Any
) -> MethodResult:
    wrap, unwrap = keywrap.wrappers(outcome.material or b"\0")
    return MethodResult(True, user=user, domain=domain, wrap_key=wrap, unwrap_key=unwrap, **kwargs)


class Ssl(AuthMethod):
    """SSL: mutual TLS inside CEDAR messages; the client certificate (optional) is the identity."""

    name = "SSL"
    bit = 0x0100

    def server_available(self, ctx: AuthContext) -> bool:
        """Offered only with a readable certificate and key."""
        return server_settings(ctx).available()

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Verify the server's certificate and host name; present ours if configured."""
        outcome = yield from client_tls(conn, client_settings(ctx))
        if not outcome.success:
            return MethodResult.failed(f"SSL: {outcome.error}")
        return _result(outcome, "ssl", "unmapped", authenticated_name=outcome.peer_dn)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """A client certificate gives ``ssl@unmapped`` (or its map-file name)."""
        outcome = yield from server_tls(conn, server_settings(ctx))
        if not outcome.success:
            log.info("SSL authentication failed: %s", outcome.error)
            return MethodResult.failed(f"SSL: {outcome.error}")
        if outcome.peer_dn is None:
            return _result(outcome, "unauthenticated", "unmapped")
        user, domain = "ssl", "unmapped"
        table = mapfile(ctx)
        mapped = table.map("SSL", outcome.peer_dn) if table else None
        if mapped:
            user, sep, domain = mapped.rpartition("@")
            if not sep:
                user, domain = mapped, ctx.uid_domain
        return _result(outcome, user, domain.lower() or None, authenticated_name=outcome.peer_dn)


def scitoken_server_settings(ctx: AuthContext) -> SciTokenServerSettings | None:
    """The trusted issuers (``scitokens_server`` option); audiences/map file filled from knobs."""
    value = ctx.options.get("scitokens_server")
    if not isinstance(value, SciTokenServerSettings):
        return None
    audiences = value.audiences or [
        a for a in (knob(ctx, "SCITOKENS_SERVER_AUDIENCE") or "").replace(",", " ").split() if a
    ]
    return SciTokenServerSettings(value.issuers, audiences, value.mapfile or mapfile(ctx))


class SciTokens(AuthMethod):
    """SCITOKENS: the SSL exchange (no client certificate) plus a bearer token (spec 04 §8)."""

    name = "SCITOKENS"
    bit = 0x1000

    def server_available(self, ctx: AuthContext) -> bool:
        """Offered with a certificate and at least one trusted issuer."""
        settings = scitoken_server_settings(ctx)
        return bool(settings and settings.issuers) and server_settings(ctx).available()

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Find a token (else answer phase 0 with -1), verify the server, send the token."""
        token: str | None = None
        problem = "no SciToken found (SCITOKENS_FILE, BEARER_TOKEN, BEARER_TOKEN_FILE, bt_u<uid>)"
        explicit = ctx.options.get("scitoken")
        if isinstance(explicit, str) and explicit.strip():
            token = explicit.strip()
        else:
            try:
                found = discover_scitoken(
                    scitokens_file=knob(ctx, "SCITOKENS_FILE"), environ=config_of(ctx).environ
                )
            except SciTokenError as exc:
                found, problem = None, str(exc)
            if found is not None:
                token = found[0]
                log.debug("SCITOKENS: using the token from %s", found[1])
        outcome = yield from client_tls(
            conn,
            client_settings(ctx),
            with_certificate=False,
            ready=token is not None,
            phase3=client_send_token(token) if token is not None else None,
        )
        if not outcome.success:
            return MethodResult.failed(f"SCITOKENS: {problem if token is None else outcome.error}")
        return _result(outcome, "scitokens", "unmapped", authenticated_name=outcome.peer_dn)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Validate the token locally, map ``iss,sub`` to a user, limit to its scopes."""
        settings = scitoken_server_settings(ctx) or SciTokenServerSettings()

        def validate(text: str) -> Any:
            try:
                return validate_scitoken(text, settings)
            except SciTokenError as exc:
                raise InvalidArgument(str(exc)) from None

        outcome = yield from server_tls(
            conn, server_settings(ctx), phase3=server_receive_token(validate)
        )
        if not outcome.success or outcome.detail is None:
            log.info("SCITOKENS authentication failed: %s", outcome.error)
            return MethodResult.failed(f"SCITOKENS: {outcome.error}")
        identity = outcome.detail
        extra = {
            "AuthTokenIssuer": identity.issuer,
            "AuthTokenSubject": identity.subject,
            "AuthTokenId": identity.token_id,
            "AuthTokenScopes": ",".join(identity.scopes),
            "AuthTokenGroups": ",".join(identity.groups) or None,
            "LimitAuthorization": ",".join(identity.authorizations),
        }
        return _result(
            outcome,
            identity.user,
            identity.domain,
            authenticated_name=identity.authenticated_name,
            limit_authorization=identity.authorizations,
            extra={k: v for k, v in extra.items() if v is not None},
        )


__all__ = ["SciTokens", "Ssl", "client_settings", "mapfile", "server_settings"]
