"""``/api/v1``: the jobs, history, collector and daemon routes (the Go server's shapes).

Each route checks its input, calls the library once as the caller (the caller's token is the
only credential; the schedd authorizes) and shapes the answer with the one ClassAd<->JSON
mapping.  Job views are scoped to the identity the daemon authenticated, by parsed trees.

The routes live in one module per seam (:mod:`.listings`, :mod:`.jobs`, :mod:`.sandboxes`,
:mod:`.pool`, :mod:`.running`; what they share in :mod:`.common`); :data:`router` joins them in
this order, which is the order routes match in (``/jobs/archive`` before ``/jobs/{job}``) and
the order of the OpenAPI document.
"""

from __future__ import annotations

from cedar.http_api.api import jobs, listings, pool, running, sandboxes
from cedar.http_api.api.common import CHUNK, job_id, new_router, one_job
from cedar.http_api.api.jobs import get_job

__all__ = ["CHUNK", "get_job", "job_id", "one_job", "router"]

#: Every ``/api/v1`` route, in matching order. The parts' route objects themselves, not an
#: ``include_router`` (which may keep a router inside a router): ``router.routes`` lists them.
router = new_router()
for _part in (listings, jobs, sandboxes, pool, running):
    router.routes.extend(_part.router.routes)
