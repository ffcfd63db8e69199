"""What every cedar service shares (the HTTP API, the MCP server, the web page).

- :class:`Caller`: a request's bearer token (IDTOKEN or SciToken) or none; never shown.
- :class:`PoolAccess`: per-process; gives a caller's :class:`~cedar.AsyncSchedd` /
  :class:`~cedar.AsyncCollector` whose only credential is that caller's token, with a bounded
  session cache per token, and :meth:`PoolAccess.whoami` = what the daemon authenticated.
- :func:`scoped_constraint`: owner scoping by parsed trees (:func:`scoped_job`: one job's, one
  tree kept per job and user); :func:`redact`: admin-private attributes.
- :class:`RateLimiter`: per-caller token buckets; :func:`status_of`: one error -> status table.
- :class:`ServiceSettings`: the ``CEDAR_SERVE_*`` knobs.
- :func:`typed_values`: a caller's JSON values as ClassAd text (one rule for every service).

Stateless by design: nothing kept here is needed by another replica or after a restart.
"""

from cedar.service_core.access import ANONYMOUS, Identity, PoolAccess
from cedar.service_core.caller import Caller
from cedar.service_core.errors import BadCredential, NotFound, RateLimited, ServiceError, status_of
from cedar.service_core.limits import RateLimiter
from cedar.service_core.scope import (
    REDACTED,
    check_constraint,
    job_constraint,
    owner_scope,
    redact,
    scoped_constraint,
    scoped_job,
)
from cedar.service_core.settings import ServiceSettings
from cedar.service_core.values import typed_values

__all__ = [
    "ANONYMOUS",
    "REDACTED",
    "BadCredential",
    "Caller",
    "Identity",
    "NotFound",
    "PoolAccess",
    "RateLimited",
    "RateLimiter",
    "ServiceError",
    "ServiceSettings",
    "check_constraint",
    "job_constraint",
    "owner_scope",
    "redact",
    "scoped_constraint",
    "scoped_job",
    "status_of",
    "typed_values",
]
