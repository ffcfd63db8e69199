"""The IRI API's knobs (``CEDAR_SERVE_IRI_*`` in the pool's configuration), read once."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

from cedar.config import Config


@dataclass(frozen=True)
class SiteSettings:
    """One configured site (``CEDAR_SERVE_IRI_SITE_<NAME>_<FIELD>``)."""

    name: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class IriSettings:
    """Where the API is mounted, what the facility says of itself, where its state lives."""

    #: Mount point: ``{prefix}/api/v2/...`` and ``{prefix}/openapi.json`` ("" = off).
    prefix: str = "/iri"
    facility_name: str | None = None
    organization: str | None = None
    support_uri: str | None = None
    description: str | None = None
    sites: tuple[SiteSettings, ...] = ()
    #: Groups of execute slots, each a resource: (name, ClassAd constraint).
    slot_groups: tuple[tuple[str, str], ...] = (("slots", "true"),)
    #: Where state lives: an SQLite file, or a ``postgresql://`` URL.
    database: str = ""
    #: Root of the per-user staging areas.
    staging_root: str = ""
    #: Seconds after which a daemon's ad counts as stale (the resource is then degraded).
    stale_after: float = 900.0
    #: Seconds between two observations of the daemons' ads.
    poll: float = 30.0
    #: Largest JSON request body, and largest upload, in bytes.
    max_body: int = 1 << 20
    max_upload: int = 1 << 28

    @classmethod
    def from_config(cls, config: Config | None) -> IriSettings:
        config = config or Config()

        def text(name: str) -> str | None:
            value = config.get(f"CEDAR_SERVE_IRI_{name}")
            return value.strip() if value and value.strip() else None

        def number(name: str, default: float) -> float:
            value = config.get_float(f"CEDAR_SERVE_IRI_{name}")
            return default if value is None else value

        state = text("STATE_DIR") or os.path.join(
            config.get("LOCAL_DIR") or tempfile.gettempdir(), f"cedar-serve-iri-{os.getuid()}"
        )
        sites = tuple(
            SiteSettings(
                name,
                {
                    key.lower(): value
                    for key in SITE_FIELDS
                    if (value := text(f"SITE_{name.upper()}_{key}")) is not None
                },
            )
            for name in (text("SITES") or "").replace(",", " ").split()
        )
        groups = tuple(
            (name, text(f"SLOT_GROUP_{name.upper()}") or "true")
            for name in (text("SLOT_GROUPS") or "slots").replace(",", " ").split()
        )
        base = cls()
        prefix = text("PREFIX")
        return cls(
            prefix=base.prefix if prefix is None else ("" if prefix == "off" else prefix),
            facility_name=text("FACILITY_NAME"),
            organization=text("ORGANIZATION"),
            support_uri=text("SUPPORT_URI"),
            description=text("DESCRIPTION"),
            sites=sites,
            slot_groups=groups,
            database=text("DATABASE") or os.path.join(state, "state.sqlite"),
            staging_root=text("STAGING_ROOT") or os.path.join(state, "staging"),
            stale_after=number("STALE_AFTER", base.stale_after),
            poll=number("POLL", base.poll),
            max_body=int(number("MAX_BODY", base.max_body)),
            max_upload=int(number("MAX_UPLOAD", base.max_upload)),
        )


#: The location fields a configured site may give (the spec's ``Site`` properties).
SITE_FIELDS = (
    "SHORT_NAME",
    "DESCRIPTION",
    "OPERATING_ORGANIZATION",
    "COUNTRY_NAME",
    "LOCALITY_NAME",
    "STATE_OR_PROVINCE_NAME",
    "STREET_ADDRESS",
    "UNLOCODE",
    "LATITUDE",
    "LONGITUDE",
    "ALTITUDE",
)
