"""The pool as IRI resources, observed from the collector's ads; each change of a resource's
status recorded as an event, and each outage as an incident spanning it.

A resource is a schedd (compute), a configured group of execute slots (a constraint on the
startd ads), the collector, the negotiator, and the staging area (storage).  Once seen, a
resource is remembered (in the store), so a daemon whose ad is gone is reported ``down``, not
forgotten.  Observation happens at most every ``CEDAR_SERVE_IRI_POLL`` seconds per process, on
the first request that needs it and from the background loop; every replica writes the same
documents, and each change is recorded once (claimed in the store), so replicas agree.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from cedar.classad_wire import ClassAd
from cedar.errors import CedarError
from cedar.http_api.iri.call import IriState
from cedar.service_core import Caller

COMPUTE = "urn:doe-iri:resource:compute"
STORAGE = "urn:doe-iri:resource:storage"
SERVICE = "urn:doe-iri:service:generic"
STAGING_ID = "storage:staging"
#: The allocation unit of every compute capability (``AccumulatedUsage`` is core-seconds).
CORE_HOURS = "urn:doe-iri:allocation:compute:core-hours"

#: Ad types observed, with the projection read of each.
_DAEMON_ATTRS = ["Name", "MyAddress", "LastHeardFrom", "DaemonStartTime", "UpdateInterval"]
_SLOT_ATTRS = ["Name", "Machine", "LastHeardFrom", "State", "Activity", "Cpus", "Gpus", "Memory"]


def iso(epoch: float) -> str:
    """An epoch time as the spec's date-time (UTC, ``Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _stable_id(*parts: object) -> str:
    """An id every replica computes the same from the same observation."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:24]


def _daemon_status(ad: ClassAd, now: float, stale_after: float) -> str:
    heard = ad.get("LastHeardFrom")
    if isinstance(heard, (int, float)) and now - heard > stale_after:
        return "degraded"
    return "up"


async def _ads(
    state: IriState, kind: str, projection: list[str], constraint: str | None = None
) -> list[ClassAd]:
    collector = state.services.access.collector(Caller.anonymous())
    return await collector.query(kind, constraint, projection)


async def _observe_now(state: IriState) -> dict[str, dict[str, Any]]:
    """Each resource's status now, by id (``unknown`` for those the collector cannot tell)."""
    now = time.time()
    stale = state.settings.stale_after
    seen: dict[str, dict[str, Any]] = {
        STAGING_ID: {
            "name": "staging",
            "description": "per-user staging area of this cedar serve",
            "resource_type": STORAGE,
            "group": "storage",
            "status": "up",
        }
    }
    try:
        collectors = await _ads(state, "collector", _DAEMON_ATTRS)
    except CedarError:
        for record in state.store.list("resource"):
            if record.id != STAGING_ID:
                kind = "down" if record.id.startswith("collector:") else "unknown"
                seen[record.id] = {**record.body, "status": kind}
        return seen
    for kind, ads, rtype, group in [
        ("collector", collectors, SERVICE, "central manager"),
        ("negotiator", await _ads(state, "negotiator", _DAEMON_ATTRS), SERVICE, "central manager"),
        ("schedd", await _ads(state, "schedd", _DAEMON_ATTRS), COMPUTE, "access point"),
    ]:
        for ad in ads:
            name = str(ad.get("Name") or "")
            seen[f"{kind}:{name}"] = {
                "name": name,
                "description": f"HTCondor {kind} {name}",
                "resource_type": rtype,
                "group": group,
                "status": _daemon_status(ad, now, stale),
                "attributes": {"daemon": kind, "address": str(ad.get("MyAddress") or "")},
            }
    for name, constraint in state.settings.slot_groups:
        slots = await _ads(state, "startd", _SLOT_ATTRS, constraint)
        statuses = {_daemon_status(ad, now, stale) for ad in slots}
        status = "down" if not slots else ("degraded" if "degraded" in statuses else "up")
        seen[f"slots:{name}"] = {
            "name": name,
            "description": f"execute slots matching {constraint}",
            "resource_type": COMPUTE,
            "group": "execute",
            "status": status,
            "attributes": {
                "constraint": constraint,
                "slots": len(slots),
                "cpus": sum(int(ad.get("Cpus") or 0) for ad in slots),
                "gpus": sum(int(ad.get("Gpus") or 0) for ad in slots),
                "memory_mib": sum(int(ad.get("Memory") or 0) for ad in slots),
            },
        }
    for record in state.store.list("resource"):
        if record.id not in seen:  # known before, its ad gone now
            seen[record.id] = {**record.body, "status": "down"}
    return seen


async def observe(state: IriState, *, force: bool = False) -> None:
    """Look at the pool (at most every ``poll`` seconds unless ``force``) and record changes."""
    if not force and time.monotonic() - state.observed < state.settings.poll:
        return
    state.observed = time.monotonic()
    now = time.time()
    for rid, body in (await _observe_now(state)).items():
        old = state.store.get("resource", rid)
        before = old.body.get("status") if old else None
        if before == body["status"]:
            continue
        # One replica records each change: the first to claim it (the others saw the same
        # previous document, so they name the same claim).
        since = old.body.get("since") if old else None
        if not state.store.add("transition", _stable_id(rid, since, body["status"]), "", {}):
            continue
        body["since"] = now
        state.store.put("resource", rid, "", body)
        record_change(state, rid, body["name"], before, body["status"], now)


def record_change(
    state: IriState, rid: str, name: str, before: str | None, after: str, now: float
) -> None:
    """An event for a status change; an incident opened when a resource stops being up, closed
    (``end``, ``resolution: completed``) when it is up again."""
    store = state.store
    open_id = f"open:{rid}"
    opened = store.get("open_incident", open_id)
    incident_id = opened.body["incident"] if opened else None
    if after in ("down", "degraded") and incident_id is None and before is not None:
        incident_id = _stable_id("incident", rid, now)
        body: dict[str, Any] = {
            "name": f"{name} {after}",
            "description": f"cedar observed {name} {after} (was {before})",
            "status": after,
            "type": "unplanned",
            "resolution": "unresolved",
            "start": now,
            "end": None,
            "resource_ids": [rid],
            "event_ids": [],
            "modified": now,
        }
        if store.add("incident", incident_id, "", body):
            store.put("open_incident", open_id, "", {"incident": incident_id})
    event_id = _stable_id("event", rid, before, after, now)
    event = {
        "name": f"{name} {after}",
        "description": f"{name}: {before or 'first seen'} -> {after}",
        "status": after,
        "occurred_at": now,
        "resource_id": rid,
        "incident_id": incident_id if before is not None else None,
    }
    store.add("event", event_id, "", event)
    if incident_id is not None and before is not None:
        found = store.get("incident", incident_id)
        if found is not None:
            body = dict(found.body)
            body["event_ids"] = [*body["event_ids"], event_id]
            body["status"] = after
            body["modified"] = now
            if after == "up":
                body["end"], body["resolution"] = now, "completed"
                store.delete("open_incident", open_id)
            store.put("incident", incident_id, "", body)


def resource_json(call_base: str, rid: str, body: dict[str, Any], site_id: str) -> dict[str, Any]:
    """A stored resource as the spec's ``Resource``."""
    api = f"{call_base}/api/v2"
    return {
        "id": rid,
        "name": body["name"],
        "description": body.get("description"),
        "last_modified": iso(body.get("since", 0.0)),
        "group": body.get("group"),
        "current_status": body["status"],
        "resource_type": body["resource_type"],
        "supported_endpoints": [],
        "self_uri": f"{api}/status/resources/{rid}",
        "site_uri": f"{api}/facility/sites/{site_id}",
        "capability_uris": [f"{api}/account/capabilities/{rid}"]
        if body["resource_type"] == COMPUTE
        else [],
        "attributes": body.get("attributes") or None,
    }
