"""OAuth 2.0 Protected Resource Metadata (RFC 9728) for every HTTP mouth: what a client (an MCP
host, a script) learns about how to authenticate to ``cedar serve``'s API or ``cedar mcp``'s
endpoint before it has a token.

The authorization servers are the pool's token issuers, read from its configuration: the
SciTokens issuers its ``CERTIFICATE_MAPFILE`` maps (``SCITOKENS ^<issuer>,...`` rules) and
``SEC_SCITOKENS_FOREIGN_TOKEN_ISSUERS`` where the pool sets it (the built-in default, a
development issuer of EGI, is not named), plus any named by ``CEDAR_SERVE_AUTHORIZATION_SERVERS``
(or the older ``CEDAR_MCP_AUTHORIZATION_SERVERS``).  The IDTOKENS issuer is the pool's
``TRUST_DOMAIN`` (default ``UID_DOMAIN``): not a URL, so not an OAuth issuer identifier; it is
named in the extension member ``htcondor_idtoken_issuer``.  Tokens are presented in the
``Authorization`` header only; the scopes are those HTCondor's daemons read from a SciToken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from cedar.config import Config

#: The well-known path (RFC 9728 §3).
WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: Scopes a SciToken carries that HTCondor's daemons turn into authorization levels (spec 04
#: §8.3: ``condor:/<LEVEL>``, and the "foreign" WLCG compute scopes).
SCOPES = (
    "condor:/READ",
    "condor:/WRITE",
    "condor:/ADVERTISE_STARTD",
    "condor:/ADVERTISE_SCHEDD",
    "condor:/ADVERTISE_MASTER",
    "compute.read",
    "compute.create",
    "compute.modify",
    "compute.cancel",
)
#: Issuers read from a map file at most (a huge file names no more than this).
MAX_ISSUERS = 64
_RULE = re.compile(r"^\s*SCITOKENS\s+\"?\^?((?:[^\s,\"\\]|\\.)+),", re.IGNORECASE)


@dataclass(frozen=True)
class TokenIssuers:
    """Who issues the tokens the pool accepts."""

    idtoken: str | None
    scitokens: tuple[str, ...]

    @classmethod
    def from_config(cls, config: Config) -> TokenIssuers:
        """The pool's issuers (see the module doc); a map file that cannot be read names none."""
        found: list[str] = []
        for name in ("CEDAR_SERVE_AUTHORIZATION_SERVERS", "CEDAR_MCP_AUTHORIZATION_SERVERS"):
            found += config.get_list(name)
        mapfile = config.get("CERTIFICATE_MAPFILE")
        if mapfile:
            found += mapped_issuers(mapfile)
        foreign = "SEC_SCITOKENS_FOREIGN_TOKEN_ISSUERS"
        if config.get(foreign) != Config().get(foreign):  # set by the pool, not the built-in
            found += [i for i in config.get_list(foreign) if i != "*"]
        urls = [i for i in dict.fromkeys(found) if i.startswith(("https://", "http://"))]
        trust = config.get("TRUST_DOMAIN") or config.get("UID_DOMAIN")
        return cls(idtoken=trust or None, scitokens=tuple(urls[:MAX_ISSUERS]))


def mapped_issuers(path: str) -> list[str]:
    """The issuers of a map file's ``SCITOKENS`` rules whose pattern starts with a literal
    issuer (``^https\\://issuer\\.example,...``), unescaped."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    issuers = []
    for line in text.splitlines()[:10000]:
        match = _RULE.match(line)
        if match and not re.search(r"(?<!\\)[.*+?()\[\]{}|$]", match.group(1)):
            issuers.append(re.sub(r"\\(.)", r"\1", match.group(1)))
    return issuers[:MAX_ISSUERS]


def metadata_url(resource: str) -> str:
    """Where a resource's metadata is (RFC 9728 §3.1: the well-known path between the host and
    the resource's own path)."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, "", ""))


def protected_resource(resource: str, issuers: TokenIssuers, name: str) -> dict[str, object]:
    """The metadata document of ``resource`` (RFC 9728 §2)."""
    document: dict[str, object] = {
        "resource": resource,
        "resource_name": name,
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(SCOPES),
    }
    if issuers.scitokens:
        document["authorization_servers"] = list(issuers.scitokens)
    if issuers.idtoken:
        document["htcondor_idtoken_issuer"] = issuers.idtoken
    return document


def www_authenticate(resource: str, *, invalid: bool = False) -> str:
    """The ``WWW-Authenticate`` value of a 401 (RFC 9728 §5.1; RFC 6750 §3 ``invalid_token``
    when a token was sent and refused)."""
    error = 'error="invalid_token", ' if invalid else ""
    return f'Bearer {error}resource_metadata="{metadata_url(resource)}"'
