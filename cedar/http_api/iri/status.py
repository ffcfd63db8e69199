"""Incidents and events: what cedar recorded while observing the pool (see ``resources``),
filtered by the spec's query parameters (time window, status, type, resolution, paging)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.facility import page
from cedar.http_api.iri.problem import Problem
from cedar.http_api.iri.resources import iso, observe
from cedar.http_api.iri.spec import parse_date_time
from cedar.http_api.iri.store import Record


def _moment(call: Call, name: str) -> float | None:
    text = call.query.get(name)
    found = parse_date_time(text) if isinstance(text, str) else None
    return None if found is None else found.timestamp()


def _incident(call: Call, record: Record) -> dict[str, Any]:
    body = record.body
    return {
        "id": record.id,
        "name": body["name"],
        "description": body["description"],
        "last_modified": iso(body["modified"]),
        "status": body["status"],
        "start": iso(body["start"]),
        "end": None if body["end"] is None else iso(body["end"]),
        "type": body["type"],
        "resolution": body["resolution"],
        "self_uri": call.uri(f"status/incidents/{record.id}"),
        "event_uris": [call.uri(f"status/events/{e}") for e in body["event_ids"]],
        "resource_uris": [call.uri(f"status/resources/{r}") for r in body["resource_ids"]],
    }


def _event(call: Call, record: Record) -> dict[str, Any]:
    body = record.body
    incident = body.get("incident_id")
    return {
        "id": record.id,
        "name": body["name"],
        "description": body["description"],
        "last_modified": iso(body["occurred_at"]),
        "occurred_at": iso(body["occurred_at"]),
        "status": body["status"],
        "self_uri": call.uri(f"status/events/{record.id}"),
        "resource_uri": call.uri(f"status/resources/{body['resource_id']}"),
        "incident_uri": None if incident is None else call.uri(f"status/incidents/{incident}"),
    }


def _matches(call: Call, item: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """The item has the queried ``name``, ``description`` (a part of it) and ``keys``."""
    q = call.query
    if q.get("name") is not None and q["name"] != item["name"]:
        return False
    if q.get("description") is not None and q["description"] not in (item["description"] or ""):
        return False
    return all(q.get(k) is None or q[k] == item[k] for k in keys)


async def _listing(
    call: Call,
    kind: str,
    shape: Callable[[Call, Record], dict[str, Any]],
    keys: tuple[str, ...],
    keep: Callable[[dict[str, Any]], bool],
) -> Any:
    """The recorded documents of ``kind`` the query selects, shaped and paged."""
    await observe(call.state)
    found = []
    for record in call.store.list(kind):
        if keep(record.body) and _matches(call, item := shape(call, record), keys):
            found.append(item)
    return page(call, found)


def _one(call: Call, kind: str, key: str, shape: Callable[[Call, Record], dict[str, Any]]) -> Any:
    record = call.store.get(kind, call.path[key])
    if record is None:
        raise Problem(404, f"no such {kind}")
    return shape(call, record)


@handler("getIncidents")
async def get_incidents(call: Call) -> Any:
    start, end, at = _moment(call, "from"), _moment(call, "to"), _moment(call, "time")
    since, rid = _moment(call, "modified_since"), call.query.get("resource_id")

    def keep(body: dict[str, Any]) -> bool:
        ended = body["end"]
        return not (
            (start is not None and ended is not None and ended < start)
            or (end is not None and body["start"] > end)
            or (at is not None and not (body["start"] <= at and (ended is None or at <= ended)))
            or (since is not None and body["modified"] <= since)
            or (rid is not None and rid not in body["resource_ids"])
        )

    return await _listing(call, "incident", _incident, ("status", "type", "resolution"), keep)


@handler("getIncident")
async def get_incident(call: Call) -> Any:
    return _one(call, "incident", "incident_id", _incident)


@handler("getEventsByIncident")
async def get_events(call: Call) -> Any:
    start, end, at = _moment(call, "from"), _moment(call, "to"), _moment(call, "time")
    since = _moment(call, "modified_since")
    incident, rid = call.query.get("incident_id"), call.query.get("resource_id")

    def keep(body: dict[str, Any]) -> bool:
        moment = body["occurred_at"]
        return not (
            (start is not None and moment < start)
            or (end is not None and moment > end)
            or (at is not None and moment != at)
            or (since is not None and moment <= since)
            or (incident is not None and body.get("incident_id") != incident)
            or (rid is not None and body["resource_id"] != rid)
        )

    return await _listing(call, "event", _event, ("status",), keep)


@handler("getEventByIncident")
async def get_event(call: Call) -> Any:
    return _one(call, "event", "event_id", _event)
