"""``/api/v1`` routes on the pool and its daemons: the collector's ads (query, advertise), who
the schedd says you are, ping, versions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query

from cedar.classad_wire import expr as cx
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.jsonfmt import ad_from_json_object
from cedar.http_api import models as m
from cedar.http_api.api.common import ERRORS, CallerDep, ServicesDep, new_router
from cedar.service_core.adjson import ad_dict
from cedar.version import VERSION_STRING

router = new_router()


@router.get("/collector/ads", response_model=m.AdList, responses=ERRORS, summary="Collector ads")
async def collector_ads(
    svc: ServicesDep,
    caller: CallerDep,
    type: str = "any",
    name: str | None = None,
    constraint: str | None = None,
    projection: str | None = None,
    limit: Annotated[int | None, Query(ge=1)] = None,
) -> m.AdList:
    names = svc.projection(projection)
    text = _and_expr(svc.constraint(constraint), None)  # the collector client takes text
    if name is not None:
        text = _and_expr(text, cx.Binary("==", cx.AttrRef("Name"), cx.Literal(name)))
    collector = svc.access.collector(caller)
    private = svc.settings.private_attrs
    ads = [
        ad_dict(ad, private) async for ad in collector.query_iter(type, text, names or None, limit)
    ]
    return m.AdList(ads=ads, total_returned=len(ads))


def _and_expr(text: str | Expr | None, node: Any) -> str | None:
    from cedar.classad_wire.constraints import constraint_text

    return constraint_text([node, text])


@router.post(
    "/collector/ads", response_model=m.AdvertiseResponse, responses=ERRORS, summary="Advertise"
)
async def advertise(
    svc: ServicesDep, caller: CallerDep, body: m.AdvertiseRequest
) -> m.AdvertiseResponse:
    """Send ads to the collector with the caller's token (the collector authorizes)."""
    await svc.identity(caller)
    ads = [ad_from_json_object(ad) for ad in body.ads]
    await svc.access.collector(caller).advertise(ads, body.command)
    return m.AdvertiseResponse(advertised=len(ads))


# --------------------------------------------------------------------------- daemons


@router.get(
    "/whoami", response_model=m.WhoAmI, responses=ERRORS, summary="Who the schedd says you are"
)
async def whoami(svc: ServicesDep, caller: CallerDep) -> m.WhoAmI:
    identity = await svc.identity(caller)
    return m.WhoAmI(
        authenticated=identity.authenticated, user=identity.user, method=identity.method
    )


@router.get("/ping", response_model=m.PingResponse, responses=ERRORS)
async def ping(
    svc: ServicesDep,
    caller: CallerDep,
    daemon: Literal["schedd", "collector"] = "schedd",
    level: str = "READ",
) -> m.PingResponse:
    """DC_SEC_QUERY: whether you are authorized at ``level``, and as whom, by which method."""
    if daemon == "schedd":
        address = await svc.access.schedd_address(caller)
    else:
        address = svc.access.collector(caller).addresses[0]
    result = await svc.access.ping(caller, level, address)
    return m.PingResponse(
        daemon=daemon,
        address=address,
        level=result.level,
        authorized=result.authorized,
        user=result.user,
        method=result.method,
        encrypted=result.encrypted,
        remote_version=result.remote_version,
        error=result.error,
    )


@router.get("/version", response_model=m.VersionResponse)
async def version() -> m.VersionResponse:
    from cedar.http_api.models import package_version

    __version__ = package_version()

    return m.VersionResponse(cedar=__version__, condor_version=VERSION_STRING)
