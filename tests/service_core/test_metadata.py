"""RFC 9728 protected-resource metadata from the service core: the pool's token issuers read
from its configuration, the metadata's URL, the ``WWW-Authenticate`` of a 401; served by
``cedar serve`` for its API (the MCP endpoint's: tests/mcp_server/test_http.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cedar.config import Config
from cedar.service_core.metadata import (
    TokenIssuers,
    metadata_url,
    protected_resource,
    www_authenticate,
)
from tests.http_api.conftest import serving
from tests.service_core.conftest import TokenPool

#: A map file as minicondor.sh writes one for its SciTokens issuer, and rules that name none.
MAPFILE = (
    "# comment\n"
    "SCITOKENS ^https://127\\.0\\.0\\.1:8443,(.*)$ \\1@minicondor\n"
    'SCITOKENS "^https\\://tokens\\.example\\.org/pool,alice$" alice\n'
    "SCITOKENS ^https://any\\.example/.*,(.*)$ \\1\n"  # a pattern, not one issuer
    "SSL ^CN=x$ x\n"
)


def _config(tmp_path: Path, extra: str = "") -> Config:
    mapfile = tmp_path / "mapfile"
    mapfile.write_text(MAPFILE)
    return Config.from_text(
        f"TRUST_DOMAIN = pool.example\nCERTIFICATE_MAPFILE = {mapfile}\n"
        "SEC_SCITOKENS_FOREIGN_TOKEN_ISSUERS = https://aai.egi.eu/auth/realms/egi, *\n" + extra
    )


def test_the_pools_issuers_come_from_its_configuration(tmp_path: Path) -> None:
    issuers = TokenIssuers.from_config(_config(tmp_path))
    assert issuers.idtoken == "pool.example"
    assert issuers.scitokens == (
        "https://127.0.0.1:8443",
        "https://tokens.example.org/pool",
        "https://aai.egi.eu/auth/realms/egi",
    )
    given = TokenIssuers.from_config(
        _config(tmp_path, "CEDAR_SERVE_AUTHORIZATION_SERVERS = https://as.example\n")
    )
    assert given.scitokens[0] == "https://as.example"
    bare = TokenIssuers.from_config(Config.from_text("UID_DOMAIN = uid.example\n"))
    assert bare == TokenIssuers("uid.example", ())
    missing = Config.from_text(f"CERTIFICATE_MAPFILE = {tmp_path / 'nothing'}\n")
    assert TokenIssuers.from_config(missing).scitokens == ()


def test_the_document_and_the_header() -> None:
    """RFC 9728 §3.1: the well-known path goes between the host and the resource's path; §2:
    the members; §5.1: the header a 401 carries (RFC 6750's invalid_token for a sent token)."""
    assert metadata_url("https://h.example:8080") == (
        "https://h.example:8080/.well-known/oauth-protected-resource"
    )
    assert metadata_url("https://h.example/mcp/") == (
        "https://h.example/.well-known/oauth-protected-resource/mcp"
    )
    document = protected_resource(
        "https://h.example/mcp", TokenIssuers("pool", ("https://i.example",)), "x"
    )
    assert document["resource"] == "https://h.example/mcp"
    assert document["authorization_servers"] == ["https://i.example"]
    assert document["bearer_methods_supported"] == ["header"]
    assert "condor:/READ" in document["scopes_supported"]  # type: ignore[operator]
    assert document["htcondor_idtoken_issuer"] == "pool"
    assert "authorization_servers" not in protected_resource(
        "https://h", TokenIssuers(None, ()), "x"
    )
    assert www_authenticate("https://h.example/mcp") == (
        'Bearer resource_metadata="https://h.example/.well-known/oauth-protected-resource/mcp"'
    )
    assert www_authenticate("https://h", invalid=True).startswith('Bearer error="invalid_token", ')


def test_cedar_serve_names_its_metadata(token_pool: TokenPool, tmp_path: Path) -> None:
    """``GET /.well-known/oauth-protected-resource`` names the pool's issuers; a 401 (no token
    where one is needed; a token the daemon refuses) points to it."""
    config = _config(tmp_path)
    settings = replace(token_pool.settings, config=config, public_url="https://serve.example")
    with serving(replace(token_pool, settings=settings)) as api:
        document = api.anonymous.get("/.well-known/oauth-protected-resource")
        listing = api.anonymous.get("/api/v1/jobs")
        forged = api.anonymous.get(
            "/api/v1/jobs", headers={"Authorization": f"Bearer {token_pool.foreign}"}
        )
    assert document.status_code == 200
    body = document.json()
    assert body["resource"] == "https://serve.example"
    assert body["authorization_servers"][0] == "https://127.0.0.1:8443"
    assert body["htcondor_idtoken_issuer"] == "pool.example"
    where = 'resource_metadata="https://serve.example/.well-known/oauth-protected-resource"'
    assert listing.status_code == 401
    assert listing.headers["www-authenticate"] == f"Bearer {where}"
    assert forged.status_code == 401
    assert forged.headers["www-authenticate"] == f'Bearer error="invalid_token", {where}'
