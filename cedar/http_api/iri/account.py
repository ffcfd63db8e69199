"""account: projects are the pool's accounting groups, their allocations and usage come from
the accountant's ads (the negotiator's ``Accounting`` ads in the collector), one allocation per
project on the pool's compute capability.  A caller sees the projects it submitted under.

Units: core-hours (``AccumulatedUsage`` is in core-seconds); a group's allocation is its quota
(``EffectiveQuota`` cores) over a day, 0 when it has no quota.
"""

from __future__ import annotations

from typing import Any

from cedar.errors import CedarError
from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.problem import Problem
from cedar.http_api.iri.resources import CORE_HOURS, iso
from cedar.service_core import Caller

UNIT = CORE_HOURS
ALLOCATION = "usage"
_ATTRS = [
    "Name", "IsAccountingGroup", "AccountingGroup", "AccumulatedUsage", "EffectiveQuota",
    "ConfigQuota", "LastUpdate", "BeginUsageTime", "LastUsageTime",
]  # fmt: skip


async def _groups(call: Call) -> dict[str, dict[str, Any]]:
    """Each accounting group: its ad's values and its users' ads."""
    collector = call.services.access.collector(Caller.anonymous())
    try:
        ads = await collector.query("accounting", None, _ATTRS)
    except CedarError as exc:
        raise Problem(503, f"the pool's collector does not answer: {exc}") from None
    groups: dict[str, dict[str, Any]] = {}
    for ad in ads:
        if ad.get("IsAccountingGroup"):
            name = str(ad.get("Name"))
            groups.setdefault(name, {"users": {}})["ad"] = ad
    for ad in ads:
        group = ad.get("AccountingGroup")
        if not ad.get("IsAccountingGroup") and isinstance(group, str) and group in groups:
            user = str(ad.get("Name")).removeprefix(group + ".")
            groups[group]["users"][user] = ad
    return {name: g for name, g in groups.items() if "ad" in g and name != "<none>"}


def _hours(ad: Any) -> float:
    usage = ad.get("AccumulatedUsage")
    return float(usage) / 3600.0 if isinstance(usage, (int, float)) else 0.0


def _entry(ad: Any) -> dict[str, Any]:
    quota = ad.get("EffectiveQuota")
    allocation = float(quota) * 24.0 if isinstance(quota, (int, float)) else 0.0
    return {"allocation": allocation, "usage": _hours(ad), "unit": UNIT}


async def _mine(call: Call) -> dict[str, dict[str, Any]]:
    user = await call.user()
    return {n: g for n, g in (await _groups(call)).items() if user in g["users"]}


def _project(call: Call, name: str, group: dict[str, Any]) -> dict[str, Any]:
    updated = group["ad"].get("LastUpdate")
    return {
        "id": name,
        "name": name,
        "description": f"HTCondor accounting group {name}",
        "user_ids": sorted(group["users"]),
        "last_modified": iso(float(updated) if isinstance(updated, (int, float)) else 0.0),
        "self_uri": call.uri(f"account/projects/{name}"),
    }


async def _one(call: Call) -> tuple[str, dict[str, Any]]:
    name = call.path["project_id"]
    group = (await _mine(call)).get(name)
    if group is None:
        raise Problem(404, "no such project of yours")
    return name, group


def _allocation(call: Call, name: str, group: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": ALLOCATION,
        "entries": [_entry(group["ad"])],
        "project_uri": call.uri(f"account/projects/{name}"),
        "capability_uri": call.uri("account/capabilities"),
    }


def _user_allocation(call: Call, name: str, user: str, ad: Any) -> dict[str, Any]:
    return {
        "id": user,
        "user_id": user,
        "entries": [{"allocation": 0.0, "usage": _hours(ad), "unit": UNIT}],
        "project_allocation_uri": call.uri(
            f"account/projects/{name}/project_allocations/{ALLOCATION}"
        ),
    }


@handler("getProjects")
async def get_projects(call: Call) -> Any:
    return [_project(call, n, g) for n, g in sorted((await _mine(call)).items())]


@handler("getProject")
async def get_project(call: Call) -> Any:
    return _project(call, *await _one(call))


@handler("getProjectAllocationsByProject")
async def get_allocations(call: Call) -> Any:
    return [_allocation(call, *await _one(call))]


def _check_allocation(call: Call) -> None:
    if call.path["project_allocation_id"] != ALLOCATION:
        raise Problem(404, "no such allocation")


@handler("getProjectAllocationByProject")
async def get_allocation(call: Call) -> Any:
    name, group = await _one(call)
    _check_allocation(call)
    return _allocation(call, name, group)


@handler("getUserAllocationsByProjectAllocation")
async def get_user_allocations(call: Call) -> Any:
    name, group = await _one(call)
    _check_allocation(call)
    return [_user_allocation(call, name, u, ad) for u, ad in sorted(group["users"].items())]


@handler("getUserAllocationByProjectAllocation")
async def get_user_allocation(call: Call) -> Any:
    name, group = await _one(call)
    _check_allocation(call)
    user = call.path["user_allocation_id"]
    if user not in group["users"]:
        raise Problem(404, "no such user allocation")
    return _user_allocation(call, name, user, group["users"][user])
