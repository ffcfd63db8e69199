"""Streamable HTTP: the MCP server as an OAuth 2.0 resource server (an ASGI app on Trio).

A request must carry a bearer token (an HTCondor IDTOKEN or a SciToken).  The token is not
judged here: it is passed through to the schedd, and the identity the schedd authenticates is
the caller's (a token the schedd refuses is a 401 naming the protected-resource metadata, RFC
9728, which names the authorization servers).  Each token has its own sessions with the
daemons, and the SDK binds each MCP session to the token's principal.

:class:`McpHttp` is the app and its lifespan: standalone it is served by Hypercorn's Trio
worker (:func:`serve_http`); ``cedar serve`` mounts :attr:`McpHttp.app` at ``/mcp``, adds
:meth:`McpHttp.metadata_routes` at its root and enters :meth:`McpHttp.lifespan`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import jwt
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from cedar.config import default_config
from cedar.errors import CedarError, ConfigError
from cedar.mcp.server import CedarMcp
from cedar.mcp.settings import McpSettings
from cedar.service_core import Caller, PoolAccess
from cedar.service_core.metadata import TokenIssuers, protected_resource
from cedar.service_core.metadata import metadata_url as resource_metadata_url

log = logging.getLogger("cedar.mcp")

LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Issuer URLs are compared as exact strings (RFC 8414): no trailing slash may be added.
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


def _url(text: str) -> AnyHttpUrl:
    return _URL.validate_python(text)


class DaemonTokenVerifier:
    """Accepts a bearer token when the schedd authenticates it (the identity is the daemon's)."""

    def __init__(self, access: PoolAccess) -> None:
        self.access = access

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's principal as the schedd sees it, or None (HTTP 401)."""
        claims = _unverified_claims(token)
        expires = claims.get("exp")
        if isinstance(expires, (int, float)) and expires < time.time():
            return None
        try:
            identity = (await self.access.whoami(Caller.from_token(token))).user or ""
        except CedarError as exc:
            log.info("bearer token refused: %s", type(exc).__name__)
            return None
        return AccessToken(
            token=token,
            client_id=identity,
            scopes=[],
            expires_at=int(expires) if isinstance(expires, (int, float)) else None,
            subject=identity,
            claims={"iss": claims.get("iss")} if isinstance(claims.get("iss"), str) else None,
        )


def _unverified_claims(token: str) -> dict[str, Any]:
    """The JWT's claims, unverified (only for the expiry; the daemon verifies the token)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return {}
    return claims if isinstance(claims, dict) else {}


class McpHttp:
    """The MCP server over streamable HTTP: :attr:`app` (ASGI) and :meth:`lifespan`."""

    def __init__(
        self,
        settings: McpSettings,
        *,
        resource_url: str,
        host: str = "127.0.0.1",
        path: str = "/mcp",
        access: PoolAccess | None = None,
    ) -> None:
        self.settings = settings
        self.resource_url = resource_url.rstrip("/")
        self.path = path
        self.mcp = CedarMcp(settings, access)
        self.server = self.mcp.build()
        security = None
        if host in LOOPBACK:  # DNS-rebinding protection, as the SDK does for loopback hosts
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            )
        self.sessions = StreamableHTTPSessionManager(app=self.server, security_settings=security)
        metadata_url = _url(resource_metadata_url(self.resource_url))
        self.verifier = DaemonTokenVerifier(self.mcp.access)
        #: The endpoint as one ASGI app: bearer authentication, then the session manager.
        self.endpoint: ASGIApp = AuthenticationMiddleware(
            AuthContextMiddleware(
                RequireAuthMiddleware(StreamableHTTPASGIApp(self.sessions), [], metadata_url)
            ),
            backend=BearerAuthBackend(self.verifier),
        )
        self.app = Starlette(
            routes=self.routes(),
            lifespan=lambda app: self.lifespan(),
        )

    def routes(self) -> list[BaseRoute]:
        """The endpoint at :attr:`path` and the metadata routes (for an app of one's own)."""
        return [Route(self.path, endpoint=self.endpoint), *self.metadata_routes()]

    def metadata_routes(self) -> list[BaseRoute]:
        """The RFC 9728 protected-resource metadata (``/.well-known/oauth-protected-resource``
        plus the resource's path): the service core's document, naming the pool's token
        issuers and any authorization servers given by flag."""
        pool = TokenIssuers.from_config(self.settings.config or default_config())
        given = [*self.settings.authorization_servers, *pool.scitokens]
        issuers = TokenIssuers(pool.idtoken, tuple(dict.fromkeys(given)))
        document = protected_resource(self.resource_url, issuers, "HTCondor (cedar mcp)")

        async def metadata(request: Request) -> JSONResponse:
            return JSONResponse(document, headers={"Cache-Control": "max-age=300"})

        path = urlsplit(resource_metadata_url(self.resource_url)).path
        return [Route(path, endpoint=metadata, methods=["GET"])]

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the session manager (its task group) for as long as the app serves."""
        async with self.sessions.run():
            yield


def mount_in_serve(
    app: Any, *, resource_url: str | None = None, path: str = "/mcp"
) -> McpHttp | None:
    """Put the MCP endpoint into a ``cedar serve`` app at ``path`` (its metadata at the root),
    sharing that app's pool access (per-token sessions), and run its session manager inside
    the app's lifespan.

    None (nothing mounted) for a server on an ephemeral port (``--port 0``) with no
    ``CEDAR_MCP_RESOURCE_URL``: the protected-resource metadata must name a URL that reaches
    this server, and the port is not known until Hypercorn binds it."""
    services = app.state.services
    service_settings = services.settings
    config = McpSettings.from_config(
        service_settings.config or default_config(),
        pool=service_settings.collector,
        schedd_name=service_settings.schedd_name,
        schedd_address=service_settings.schedd,
        daemon_timeout=service_settings.timeout,
        private_attrs=service_settings.private_attrs,  # one redaction for every mouth
    )
    resource_url = resource_url or config.resource_url
    if resource_url is None and service_settings.port == 0:
        return None
    if resource_url is None:
        scheme = "https" if service_settings.tls_cert else "http"
        host = service_settings.host
        shown = f"[{host}]" if ":" in host else host
        resource_url = f"{scheme}://{shown}:{service_settings.port}{path}"
    access = services.access  # the one core: identities, scope and admins as cedar serve's
    http = McpHttp(
        config, resource_url=resource_url, host=service_settings.host, path=path, access=access
    )
    app.router.routes[0:0] = http.routes()  # before any catch-all mount
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(parent: Any) -> AsyncIterator[Any]:
        async with outer(parent) as state, http.lifespan():
            yield state

    app.router.lifespan_context = lifespan
    return http


async def serve_http(
    settings: McpSettings,
    host: str,
    port: int,
    *,
    resource_url: str | None = None,
    task_status: Any = None,
    shutdown_trigger: Callable[..., Awaitable[None]] | None = None,
) -> None:
    """Serve standalone with Hypercorn's Trio worker until cancelled."""
    import trio
    from hypercorn.config import Config as HypercornConfig
    from hypercorn.trio import serve

    shown = f"[{host}]" if ":" in host else host
    url = resource_url or settings.resource_url
    if url is None and port == 0:
        raise ConfigError(
            "an MCP server on port 0 needs --resource-url (CEDAR_MCP_RESOURCE_URL): its "
            "protected-resource metadata names the URL that reaches it"
        )
    url = url or f"http://{shown}:{port}/mcp"
    http = McpHttp(settings, resource_url=url, host=host)
    config = HypercornConfig()
    config.bind = [f"{shown}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("cedar.mcp.http")
    status = task_status if task_status is not None else trio.TASK_STATUS_IGNORED
    await serve(
        http.app,  # type: ignore[arg-type]  # Starlette is an ASGI app; hypercorn's type is narrower
        config,
        shutdown_trigger=shutdown_trigger,
        task_status=status,
    )
