"""facility, sites, status (resources, incidents, events) and the resource lists of compute
and filesystem: public, as the spec says (no ``security`` on these operations)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from starlette.responses import Response

from cedar.errors import CedarError
from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.problem import Problem
from cedar.http_api.iri.resources import COMPUTE, CORE_HOURS, STORAGE, iso, observe, resource_json
from cedar.http_api.iri.spec import parse_date_time
from cedar.service_core import Caller


async def _collector_ad(call: Call) -> dict[str, Any]:
    """The collector's name and start time (the facility's identity and last change)."""
    cached = call.state.extra.get("collector")
    if cached is not None:
        return dict(cached)
    collector = call.services.access.collector(Caller.anonymous())
    try:
        ads = await collector.query("collector", None, ["Name", "DaemonStartTime"])
    except CedarError as exc:
        raise Problem(503, f"the pool's collector does not answer: {exc}") from None
    ad = ads[0] if ads else {}
    found = {"name": str(ad.get("Name") or "pool"), "start": float(ad.get("DaemonStartTime") or 0)}
    call.state.extra["collector"] = found
    return found


def _since(call: Call) -> float | None:
    text = call.query.get("modified_since")
    moment = parse_date_time(text) if isinstance(text, str) else None
    return None if moment is None else moment.timestamp()


def page(call: Call, items: list[Any]) -> list[Any]:
    """``offset``/``limit`` of the query applied (the spec's defaults: 0 and 100)."""
    offset = int(call.query.get("offset") or 0)
    limit = call.query.get("limit")
    limit = 100 if limit is None else int(limit)
    return items[offset : offset + limit]


async def sites(call: Call) -> list[dict[str, Any]]:
    """The configured sites, or one site named after the pool's collector."""
    settings = call.state.settings
    collector = await _collector_ad(call)
    modified = iso(collector["start"])
    resources = [f"{call.uri('status/resources')}/{r.id}" for r in call.store.list("resource")]
    found = []
    configured = settings.sites or ()
    names = [s.name for s in configured] or [collector["name"]]
    for index, name in enumerate(names):
        fields: dict[str, Any] = dict(configured[index].fields) if configured else {}
        for number in ("latitude", "longitude", "altitude"):
            if number in fields:
                try:
                    fields[number] = float(fields[number])
                except ValueError:
                    del fields[number]
        sid = f"site:{name}"
        found.append(
            {
                "id": sid,
                "name": name,
                "last_modified": modified,
                "operating_organization": settings.organization,
                **fields,
                "self_uri": call.uri(f"facility/sites/{sid}"),
                "resource_uris": resources if index == 0 else [],
            }
        )
    return found


@handler("getFacility")
async def get_facility(call: Call) -> Any:
    settings = call.state.settings
    collector = await _collector_ad(call)
    since = _since(call)
    if since is not None and collector["start"] <= since:
        return Response(status_code=304)
    name = settings.facility_name or collector["name"]
    return {
        "id": f"facility:{collector['name']}",
        "name": name,
        "short_name": name,
        "description": settings.description or f"the HTCondor pool of {collector['name']}",
        "last_modified": iso(collector["start"]),
        "organization_name": settings.organization,
        "support_uri": settings.support_uri,
        "self_uri": call.uri("facility"),
        "site_uris": [s["self_uri"] for s in await sites(call)],
    }


def _since_filter(call: Call, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    since = _since(call)
    if since is None:
        return items
    return [i for i in items if _epoch(i["last_modified"]) > since]


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@handler("getSites")
async def get_sites(call: Call) -> Any:
    found = _since_filter(call, await sites(call))
    for key in ("name", "short_name"):
        if call.query.get(key) is not None:
            found = [s for s in found if s.get(key, s["name"]) == call.query[key]]
    return page(call, found)


@handler("getSite")
async def get_site(call: Call) -> Any:
    for site in await sites(call):
        if site["id"] == call.path["site_id"]:
            since = _since(call)
            if since is not None and _epoch(site["last_modified"]) <= since:
                return Response(status_code=304)
            return site
    raise Problem(404, "no such site")


async def all_resources(call: Call) -> list[dict[str, Any]]:
    """Every known resource as the spec's ``Resource`` (after a fresh enough observation)."""
    await observe(call.state)
    site_id = (await sites(call))[0]["id"]
    base = call.base
    return [resource_json(base, r.id, r.body, site_id) for r in call.store.list("resource")]


async def resource(call: Call, rid: str, kind: str | None = None) -> dict[str, Any]:
    """One resource (of ``kind``: ``compute`` = a schedd, ``storage``), else 404."""
    for found in await all_resources(call):
        if found["id"] != rid:
            continue
        if kind == "compute" and not rid.startswith("schedd:"):
            break
        if kind == "storage" and found["resource_type"] != STORAGE:
            break
        return found
    raise Problem(404, f"no {kind or ''} resource {rid[:200]!r}".replace("  ", " "))


@handler("getResources")
async def get_resources(call: Call) -> Any:
    found = _since_filter(call, await all_resources(call))
    q = call.query
    for key, field in (("name", "name"), ("group", "group"), ("current_status", "current_status")):
        if q.get(key) is not None:
            found = [r for r in found if r.get(field) == q[key]]
    if q.get("description") is not None:
        found = [r for r in found if q["description"] in (r.get("description") or "")]
    if q.get("resource_type") is not None:
        found = [r for r in found if r["resource_type"].startswith(q["resource_type"])]
    if q.get("capability") is not None:  # allocation units: a compute resource's is core-hours
        found = [r for r in found if r["capability_uris"] and CORE_HOURS in q["capability"]]
    return page(call, found)


@handler("getResource")
async def get_resource(call: Call) -> Any:
    return await resource(call, call.path["resource_id"])


@handler("getComputeResources")
async def get_compute_resources(call: Call) -> Any:
    return [r for r in await all_resources(call) if r["id"].startswith("schedd:")]


@handler("getFilesystemResources")
async def get_filesystem_resources(call: Call) -> Any:
    return [r for r in await all_resources(call) if r["resource_type"] == STORAGE]


def _capability(call: Call, found: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": found["id"],
        "name": found["name"],
        "description": f"compute on {found['name']}",
        "last_modified": found["last_modified"],
        "units": [CORE_HOURS],
        "self_uri": call.uri(f"account/capabilities/{found['id']}"),
        "attributes": found.get("attributes"),
    }


@handler("getCapabilities")
async def get_capabilities(call: Call) -> Any:
    found = [
        _capability(call, r) for r in await all_resources(call) if r["resource_type"] == COMPUTE
    ]
    found = _since_filter(call, found)
    if call.query.get("name") is not None:
        found = [c for c in found if c["name"] == call.query["name"]]
    return page(call, found)


@handler("getCapability")
async def get_capability(call: Call) -> Any:
    found = await resource(call, call.path["capability_id"])
    if found["resource_type"] != COMPUTE:
        raise Problem(404, "no such capability")
    capability = _capability(call, found)
    since = _since(call)
    if since is not None and _epoch(capability["last_modified"]) <= since:
        return Response(status_code=304)
    return capability
