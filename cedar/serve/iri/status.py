"""Incidents and events: what cedar recorded while observing the pool (see ``resources``),
filtered by the spec's query parameters (time window, status, type, resolution, paging)."""

from __future__ import annotations

from typing import Any

from cedar.serve.iri.call import Call, handler
from cedar.serve.iri.facility import page
from cedar.serve.iri.problem import Problem
from cedar.serve.iri.resources import iso, observe
from cedar.serve.iri.spec import parse_date_time
from cedar.serve.iri.store import Record


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


def _texts(call: Call, item: dict[str, Any]) -> bool:
    q = call.query
    if q.get("name") is not None and q["name"] != item["name"]:
        return False
    return q.get("description") is None or q["description"] in (item["description"] or "")


@handler("getIncidents")
async def get_incidents(call: Call) -> Any:
    await observe(call.state)
    q = call.query
    start, end, at = _moment(call, "from"), _moment(call, "to"), _moment(call, "time")
    since = _moment(call, "modified_since")
    found = []
    for record in call.store.list("incident"):
        body = record.body
        if start is not None and body["end"] is not None and body["end"] < start:
            continue
        if end is not None and body["start"] > end:
            continue
        if at is not None and not (
            body["start"] <= at and (body["end"] is None or at <= body["end"])
        ):
            continue
        if since is not None and body["modified"] <= since:
            continue
        item = _incident(call, record)
        if not _texts(call, item):
            continue
        if any(q.get(k) is not None and q[k] != item[k] for k in ("status", "type", "resolution")):
            continue
        rid = q.get("resource_id")
        if rid is not None and rid not in body["resource_ids"]:
            continue
        found.append(item)
    return page(call, found)


@handler("getIncident")
async def get_incident(call: Call) -> Any:
    record = call.store.get("incident", call.path["incident_id"])
    if record is None:
        raise Problem(404, "no such incident")
    return _incident(call, record)


@handler("getEventsByIncident")
async def get_events(call: Call) -> Any:
    await observe(call.state)
    q = call.query
    start, end, at = _moment(call, "from"), _moment(call, "to"), _moment(call, "time")
    since = _moment(call, "modified_since")
    found = []
    for record in call.store.list("event"):
        body = record.body
        moment = body["occurred_at"]
        if (start is not None and moment < start) or (end is not None and moment > end):
            continue
        if at is not None and moment != at:
            continue
        if since is not None and moment <= since:
            continue
        if q.get("incident_id") is not None and body.get("incident_id") != q["incident_id"]:
            continue
        if q.get("resource_id") is not None and body["resource_id"] != q["resource_id"]:
            continue
        item = _event(call, record)
        if not _texts(call, item) or (
            q.get("status") is not None and q["status"] != item["status"]
        ):
            continue
        found.append(item)
    return page(call, found)


@handler("getEventByIncident")
async def get_event(call: Call) -> Any:
    record = call.store.get("event", call.path["event_id"])
    if record is None:
        raise Problem(404, "no such event")
    return _event(call, record)
