"""The services' settings: ``CEDAR_SERVE_*`` knobs read through cedar's HTCondor configuration
reader (so ``_condor_CEDAR_SERVE_PORT=...`` and config files both work), overridden by flags.

Two restd knobs are honoured as restd reads them, for the ``/v1`` compatibility API:
``RESTD_HIDE_JOB_ATTRS`` and ``RESTD_MAX_JOBS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cedar.config import Config

#: Attributes redacted by default: credentials and secrets a job ad may carry.
DEFAULT_PRIVATE_ATTRS = ("ClaimId", "ClaimIds", "Capability", "TransferKey", "ChildClaimIds")


def private_attrs_of(config: Config) -> tuple[str, ...]:
    """``CEDAR_SERVE_PRIVATE_ATTRS`` (names, by commas or spaces), else the defaults: the one
    reading of the knob for every mouth (``cedar serve`` and ``cedar mcp`` alike)."""
    value = config.get("CEDAR_SERVE_PRIVATE_ATTRS")
    if value is None or not value.strip():
        return DEFAULT_PRIVATE_ATTRS
    return tuple(n for n in value.replace(",", " ").split() if n)


def admins_of(config: Config) -> frozenset[str]:
    """``CEDAR_SERVE_ADMINS`` and ``CEDAR_MCP_ADMINS`` together: the identities that see every
    job, read once for every mouth (the MCP knob is the older spelling, still honoured)."""
    names = [*config.get_list("CEDAR_SERVE_ADMINS"), *config.get_list("CEDAR_MCP_ADMINS")]
    return frozenset(n for n in names if n)


def is_admin(admins: frozenset[str], identity: str | None) -> bool:
    """The one admin rule: ``identity`` (``user@domain``) is an admin when it, or its user part,
    is listed.  A caller that is no admin is scoped to the jobs whose ``User`` is its identity."""
    if not identity:
        return False
    return identity in admins or identity.split("@", 1)[0] in admins


@dataclass
class ServiceSettings:
    """Everything a service process needs to know; nothing here changes while it runs."""

    host: str = "127.0.0.1"
    port: int = 8080
    #: The pool's collector (``COLLECTOR_HOST``) and optionally a fixed schedd address.
    collector: str | None = None
    schedd: str | None = None
    schedd_name: str | None = None
    #: Per-call deadline towards the daemons, seconds.
    timeout: float = 30.0
    #: Deadline of one streamed listing or history query as a whole (a big queue takes longer).
    stream_timeout: float = 600.0
    #: Jobs per page when the caller gives no limit, and the largest page a caller may ask for.
    page_size: int = 1000
    max_page_size: int = 50000
    #: Largest projection (attribute names) and constraint (characters) accepted.
    max_projection: int = 512
    max_constraint: int = 16384
    #: Largest upload (bytes) of an input sandbox, and of one file in it.
    max_upload: int = 1 << 30
    #: Largest output sandbox fetched for a download.
    max_download: int = 1 << 30
    #: Requests per second and burst per caller (0 = no limit).
    rate: float = 50.0
    burst: int = 100
    #: Distinct tokens whose sessions and identities are kept (oldest dropped first).
    max_callers: int = 1000
    #: Seconds an identity learnt from the daemon is reused for one token (never past the
    #: token's own ``exp``).
    whoami_ttl: float = 60.0
    #: Credentials the daemon refused, per client address: a burst, then this many per second.
    #: Past it a client's new tokens are refused (429) without asking the pool, and a token
    #: once refused is refused again for ``refused_ttl`` seconds without asking it.
    #: Seconds between two readings of the queue for ``/api/v1/jobs/events``.
    events_interval: float = 2.0
    #: Seconds the pool's gauges of ``/metrics`` are reused (one reading an interval).
    metrics_interval: float = 15.0
    failure_burst: int = 10
    failure_rate: float = 0.2
    refused_ttl: float = 300.0
    #: Seconds one caller's ``/v1/status`` answer is reused (0 = never: each request asks the
    #: collector, as restd does).  The collector's ads are themselves minutes old.
    status_cache: float = 0.0
    #: Whether a caller without a token may list jobs, under /api/v1 and restd's /v1 alike
    #: (restd lists them to anyone the pool lets READ; the daemon still decides).  Off by
    #: default: a deployment that wants restd's behaviour turns it on.
    anonymous_jobs: bool = False
    #: Identities that see and touch every job, through every mouth (:func:`is_admin`).
    admins: frozenset[str] = frozenset()
    #: Attributes shown as ``"<REDACTED>"`` (admin-private) in every API.
    private_attrs: tuple[str, ...] = DEFAULT_PRIVATE_ATTRS
    #: restd's knobs, for /v1.
    restd_hide_attrs: tuple[str, ...] = ()
    restd_max_jobs: int = 0
    #: This server's public base URL (``CEDAR_SERVE_URL``): the resource its protected-resource
    #: metadata names (RFC 9728); None = the URL a request reached it by.
    public_url: str | None = None
    #: CORS origins allowed (empty = CORS off).
    cors_origins: tuple[str, ...] = ()
    #: Opt-in token minting for a trusted proxy (see :mod:`cedar.service_core.minting`).
    proxy_header: str | None = None
    proxy_addresses: tuple[str, ...] = ()
    signing_key_file: str | None = None
    minted_lifetime: float = 300.0
    #: condor_shared_port's HTTP forwarding id to answer (SHARED_PORT_HTTP_FORWARDING_ID).
    shared_port_id: str | None = None
    #: TLS for the listener (both or neither).
    tls_cert: str | None = None
    tls_key: str | None = None
    #: The configuration the knobs came from (security knobs of the pool are read from it).
    config: Config | None = field(default=None, repr=False)

    def is_admin(self, identity: str | None) -> bool:
        """Whether ``identity`` is one of :attr:`admins` (:func:`is_admin`)."""
        return is_admin(self.admins, identity)

    @classmethod
    def from_config(cls, config: Config) -> ServiceSettings:
        """The settings a configuration gives (``CEDAR_SERVE_*``, ``RESTD_*``)."""

        def text(name: str) -> str | None:
            value = config.get(f"CEDAR_SERVE_{name}")
            return value.strip() if value and value.strip() else None

        def number(name: str, default: float) -> float:
            value = config.get_float(f"CEDAR_SERVE_{name}")
            return default if value is None else value

        def names(value: str | None) -> tuple[str, ...]:
            return tuple(n for n in (value or "").replace(",", " ").split() if n)

        base = cls()
        return cls(
            host=text("HOST") or base.host,
            port=int(number("PORT", base.port)),
            collector=text("COLLECTOR") or config.get("COLLECTOR_HOST") or None,
            schedd=text("SCHEDD_ADDRESS"),
            schedd_name=text("SCHEDD_NAME"),
            timeout=number("TIMEOUT", base.timeout),
            stream_timeout=number("STREAM_TIMEOUT", base.stream_timeout),
            page_size=int(number("PAGE_SIZE", base.page_size)),
            max_page_size=int(number("MAX_PAGE_SIZE", base.max_page_size)),
            max_projection=int(number("MAX_PROJECTION", base.max_projection)),
            max_constraint=int(number("MAX_CONSTRAINT", base.max_constraint)),
            max_upload=int(number("MAX_UPLOAD", base.max_upload)),
            max_download=int(number("MAX_DOWNLOAD", base.max_download)),
            rate=number("RATE", base.rate),
            burst=int(number("BURST", base.burst)),
            max_callers=int(number("MAX_CALLERS", base.max_callers)),
            whoami_ttl=number("WHOAMI_TTL", base.whoami_ttl),
            metrics_interval=number("METRICS_INTERVAL", base.metrics_interval),
            events_interval=number("EVENTS_INTERVAL", base.events_interval),
            failure_burst=int(number("FAILURE_BURST", base.failure_burst)),
            failure_rate=number("FAILURE_RATE", base.failure_rate),
            refused_ttl=number("REFUSED_TTL", base.refused_ttl),
            status_cache=number("STATUS_CACHE", base.status_cache),
            anonymous_jobs=config.get_bool("CEDAR_SERVE_ANONYMOUS_JOBS", False),
            admins=admins_of(config),
            private_attrs=private_attrs_of(config),
            restd_hide_attrs=names(config.get("RESTD_HIDE_JOB_ATTRS")),
            restd_max_jobs=int(config.get_int("RESTD_MAX_JOBS", 0) or 0),
            public_url=(text("URL") or "").rstrip("/") or None,
            cors_origins=names(text("CORS_ORIGINS")),
            shared_port_id=text("SHARED_PORT_ID"),
            proxy_header=text("PROXY_HEADER"),
            proxy_addresses=names(text("PROXY_ADDRESSES")),
            signing_key_file=text("SIGNING_KEY_FILE"),
            minted_lifetime=number("MINTED_LIFETIME", base.minted_lifetime),
            tls_cert=text("TLS_CERTFILE"),
            tls_key=text("TLS_KEYFILE"),
            config=config,
        )
