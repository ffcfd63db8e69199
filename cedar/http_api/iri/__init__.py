"""The DOE IRI Facility API v2 in ``cedar serve`` (issue 35): the official document's 47
operations under ``{CEDAR_SERVE_IRI_PREFIX}/api/v2`` (default ``/iri``), its document as
``{prefix}/openapi.json``, on the same pool access, identities and scoping as ``/api/v1``.
See ``docs/iri.md``.  Needs the ``serve`` extra (and ``psycopg`` for a PostgreSQL database).
"""

from __future__ import annotations

from typing import Any

from cedar.errors import ConfigError
from cedar.service_core import ServiceSettings


def mount(app: Any, settings: ServiceSettings) -> None:
    """Mount the IRI API into ``app`` (a ``cedar serve`` app) unless its prefix is off; the
    state is kept as ``app.state.iri`` (the server starts its watcher)."""
    from cedar.http_api.iri.app import IriApp, check_document
    from cedar.http_api.iri.call import IriState
    from cedar.http_api.iri.settings import IriSettings
    from cedar.http_api.iri.store import Store

    iri = IriSettings.from_config(settings.config)
    if not iri.prefix:
        app.state.iri = None
        return
    try:
        import jsonschema  # noqa: F401 (checked here: a request would fail later)
    except ImportError:
        raise ConfigError(
            "the IRI API needs jsonschema (pip install 'htc-cedar[serve]'), "
            "or set CEDAR_SERVE_IRI_PREFIX = off"
        ) from None
    check_document()
    state = IriState(iri, Store(iri.database), app.state.services)
    app.state.iri = state
    app.add_middleware(IriApp, state=state)
