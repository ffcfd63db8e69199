"""What an operator can set for ``cedar mcp``: from the HTCondor configuration, then flags.

The knobs are read from the same configuration the ``cedar`` tools read (so a pool's admins
put them next to the rest of its policy); command-line flags override them.

``CEDAR_MCP_ADMINS`` (or ``CEDAR_SERVE_ADMINS``)
    identities (``user@domain`` or ``user``) that see and touch every job; everyone else is
    scoped to their own jobs (the service core's one rule,
    :func:`cedar.service_core.settings.is_admin`).
``CEDAR_MCP_READ_ONLY``
    true: the destructive tools (submit, edit, hold, release, remove) are not offered.
``CEDAR_SERVE_URL``
    the base URL of a running ``cedar serve``: large job outputs are given as links there.
``CEDAR_MCP_AUTHORIZATION_SERVERS``
    the OAuth authorization servers (token issuers) named in the HTTP server's protected
    resource metadata (RFC 9728).
``CEDAR_MCP_RESOURCE_URL``
    this server's public URL (the resource identifier in that metadata).
``CEDAR_SERVE_PRIVATE_ATTRS``
    attributes shown as ``"<REDACTED>"`` in every ad a tool or resource returns, as in
    ``cedar serve`` (the same knob, read by :func:`cedar.service_core.settings.private_attrs_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cedar.service_core.settings import (
    DEFAULT_PRIVATE_ATTRS,
    ServiceSettings,
    admins_of,
    private_attrs_of,
)

if TYPE_CHECKING:
    from cedar.config import Config

#: Callers (tokens) whose sessions and identity are kept at once; the oldest is dropped.
MAX_CALLERS = 256

#: Bytes of one output file given inline in a tool result; larger ones become links (or are cut).
INLINE_LIMIT = 64 * 1024
#: Bytes of all input files given inline to ``submit_job``.
INPUT_LIMIT = 1024 * 1024
#: Seconds one tool call may take, whatever it does.
TOOL_TIMEOUT = 60.0
#: Job ads one listing returns at most (a tool result is read by a model: keep it small).
MAX_JOBS = 500


@dataclass
class McpSettings:
    """The server's policy and where the pool is; see the module docstring for the knobs."""

    pool: str | None = None  #: collector ``host[:port]``; None = the configured one
    schedd_name: str | None = None  #: None = the local schedd
    schedd_address: str | None = None  #: a fixed schedd address (sinful), when known
    admins: frozenset[str] = frozenset()
    read_only: bool = False
    serve_url: str | None = None
    authorization_servers: tuple[str, ...] = ()
    resource_url: str | None = None
    timeout: float = TOOL_TIMEOUT  #: bounds each tool call as a whole
    daemon_timeout: float = 20.0  #: bounds each daemon command inside a call
    inline_limit: int = INLINE_LIMIT
    input_limit: int = INPUT_LIMIT
    max_jobs: int = MAX_JOBS
    private_attrs: tuple[str, ...] = DEFAULT_PRIVATE_ATTRS
    extra: dict[str, str] = field(default_factory=dict)
    #: The configuration the knobs came from (the pool's security knobs are read from it).
    config: Config | None = field(default=None, repr=False)

    @classmethod
    def from_config(cls, config: Config, **overrides: object) -> McpSettings:
        """The knobs of ``config``, then ``overrides`` (flags; ``None`` values are ignored)."""
        settings = cls(
            admins=admins_of(config),
            read_only=config.get_bool("CEDAR_MCP_READ_ONLY", False),
            serve_url=config.get("CEDAR_SERVE_URL") or None,
            authorization_servers=tuple(config.get_list("CEDAR_MCP_AUTHORIZATION_SERVERS")),
            resource_url=config.get("CEDAR_MCP_RESOURCE_URL") or None,
            private_attrs=private_attrs_of(config),
            config=config,
        )
        for name, value in overrides.items():
            if value is None:
                continue
            if not hasattr(settings, name):
                raise TypeError(f"unknown setting {name!r}")
            setattr(settings, name, value)
        return settings

    def service_settings(self) -> ServiceSettings:
        """The service core's settings for these (pool, schedd, admins, redaction, deadline)."""
        from cedar.config import default_config

        return ServiceSettings(
            collector=self.pool,
            schedd=self.schedd_address,
            schedd_name=self.schedd_name,
            timeout=self.daemon_timeout,
            max_callers=MAX_CALLERS,
            admins=self.admins,
            private_attrs=self.private_attrs,
            config=self.config or default_config(),
        )
