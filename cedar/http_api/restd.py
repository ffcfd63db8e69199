"""``/v1``: htcondor-restd's read-only API, unchanged, so its consumers can switch.

Shapes (observed by running restd on the same pool): jobs and history are lists of
``{"jobid": "C.P", "classad": {...}}`` with lower-cased keys (a single attribute: the value
alone); status is a list of ``{"name", "type", "classad"}`` (``type`` = ``MyType``); grouped
forms are ``{value: [...]}``; errors are ``{"message": ...}`` with 400 or 404.  A caller without a
token is an unauthenticated READ client, as restd's consumers are; ``RESTD_HIDE_JOB_ATTRS`` are
shown as ``"<REDACTED>"`` and ``RESTD_MAX_JOBS`` caps job results.  Unlike restd, an unknown
schedd name is a 404 (restd answers with the default schedd's jobs).
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from cedar.classad_wire import ClassAd
from cedar.classad_wire.classad import ad_shape
from cedar.classad_wire.constraints import and_constraints
from cedar.classad_wire.expr import AttrRef, Binary, Expr, Literal
from cedar.commands import AsyncSchedd
from cedar.errors import CedarError, InvalidArgument, ProtocolError
from cedar.http_api.api import CHUNK
from cedar.http_api.context import Services, caller_of, services, services_dep
from cedar.http_api.direct import DirectAPIRoute, direct
from cedar.http_api.streaming import PipelinedResponse
from cedar.numbers import DaemonType
from cedar.service_core import Caller, NotFound, ServiceError
from cedar.service_core.adjson import (
    ad_json_bytes,
    columns_bytes,
    json_writers,
    plain_value,
    primed,
)

router = APIRouter(prefix="/v1", tags=["restd"], route_class=DirectAPIRoute)

CallerDep = Annotated[Caller, Depends(caller_of)]
ServicesDep = Annotated[Services, Depends(services_dep)]
ERRORS: dict[int | str, dict[str, Any]] = {400: {}, 404: {}}

#: restd's ``query=`` choices and the collector ad type each names.
AD_TYPES = {
    "any": "any",
    "startd": "startd",
    "schedd": "schedd",
    "master": "master",
    "submitter": "submitter",
    "negotiator": "negotiator",
    "collector": "collector",
    "credd": "credd",
    "defrag": "defrag",
    "grid": "grid",
    "had": "had",
    "license": "license",
    "accounting": "accounting",
    "generic": "generic",
}


def _hidden(svc: Services) -> tuple[str, ...]:
    return tuple(svc.settings.restd_hide_attrs) + tuple(svc.settings.private_attrs)


async def _schedd(svc: Services, caller: Caller, name: str) -> AsyncSchedd:
    """The schedd a job route reads (every ``/v1`` job, history and grouped route comes here,
    so the anonymous rule is checked once for them all)."""
    svc.check_job_reader(caller)
    if name.upper() == "DEFAULT":
        return await svc.access.schedd(caller, stream=True)
    collector = svc.access.collector(caller)
    try:
        location = await collector.locate(DaemonType.SCHEDD, name)
    except ServiceError:
        raise
    except Exception as exc:
        raise NotFound(f"no schedd named {name!r}: {exc}") from None
    return AsyncSchedd(
        location.address, security=svc.access.security(caller), timeout=svc.settings.timeout
    )


def _job_constraint(
    svc: Services, constraint: str | None, cluster: int | None, proc: int | None
) -> Expr | None:
    # The job's id first: the schedd evaluates the constraint on every job of its queue, and
    # an integer comparison fails sooner than most constraints.
    parts: list[Any] = []
    if cluster is not None:
        parts.append(Binary("==", AttrRef("ClusterId"), Literal(cluster)))
    if proc is not None:
        parts.append(Binary("==", AttrRef("ProcId"), Literal(proc)))
    parts.append(svc.constraint(constraint))
    return and_constraints(parts)  # a tree: the client sends it without parsing it again


async def _jobs(
    svc: Services,
    caller: Caller,
    schedd_name: str,
    history: bool,
    cluster: int | None,
    proc: int | None,
    constraint: str | None,
    names: list[str],
) -> AsyncIterator[ClassAd]:
    """The matching jobs, capped by ``RESTD_MAX_JOBS``; input is checked and the first job read
    before this returns (so errors get their status before any answer starts)."""
    text = _job_constraint(svc, constraint, cluster, proc)
    schedd = await _schedd(svc, caller, schedd_name)
    cap = svc.settings.restd_max_jobs
    source: AsyncIterator[ClassAd]
    if history:
        source = schedd.history(text, names, cap if cap > 0 else -1)
    else:  # one job id is one job at most: the schedd stops scanning at it
        limit = 1 if proc is not None else cap if cap > 0 else -1
        source = schedd.query_iter(text, names, limit)
    return await primed(_capped(source, cap) if cap > 0 else source)  # one layer less per ad


async def _job_chunks(
    svc: Services,
    caller: Caller,
    schedd_name: str,
    history: bool,
    cluster: int | None,
    constraint: str | None,
    names: list[str],
    writers: tuple[ShapedWriter, AdWriter],
) -> AsyncIterator[list[bytes]]:
    """The matching jobs' (or history records') entries (:func:`job_entry_bytes`), in lists of
    about ``CHUNK`` bytes, transcoded from the schedd's messages (``AsyncSchedd.query_chunks``,
    ``history_chunks``: no ad made where the shape recurs, no trip through the driver per ad;
    the job query not even per message), capped by ``RESTD_MAX_JOBS``;
    checked and the first list read before this returns, as :func:`_jobs`.  ``writers``:
    :func:`job_entry_writers`' (or writers that call them); ``names``: the projection."""
    text = _job_constraint(svc, constraint, cluster, None)
    schedd = await _schedd(svc, caller, schedd_name)
    cap = svc.settings.restd_max_jobs
    shaped, other = writers
    limit = cap if cap > 0 else -1
    source: AsyncIterator[list[bytes]]
    if history:
        source = schedd.history_chunks(
            text, names, limit, shaped=shaped, other=other, chunk_size=CHUNK
        )
    else:
        source = schedd.query_chunks(
            text, names, shaped=shaped, other=other, chunk_size=CHUNK, limit=limit
        )
    return await primed(_capped_lists(source, cap) if cap > 0 else source)


async def _capped_lists(source: AsyncIterator[list[bytes]], cap: int) -> AsyncIterator[list[bytes]]:
    """The lists of ``source`` up to ``cap`` items in all (the schedd is asked for no more, but
    a peer that sends more still gets only ``cap`` listed)."""
    left = cap
    async for items in source:
        if len(items) >= left:
            yield items[:left]
            break
        yield items
        left -= len(items)


async def entry_list_bytes(
    lists: AsyncIterator[list[bytes]], counted: list[int] | None = None
) -> AsyncIterator[bytes]:
    """``[entry, ...]`` from lists of entries' JSON, one chunk per list (each is about
    ``CHUNK`` bytes already): :func:`job_list_bytes`'s text for ``query_chunks``'s lists.
    ``counted`` gets the number of entries written."""
    opening, count = b"[", 0
    pending: bytes | None = None
    async for items in lists:
        if not items:
            continue
        if pending is not None:
            yield pending
        pending = opening + b",".join(items)
        opening = b","
        count += len(items)
    if counted is not None:
        counted.append(count)
    yield b"[]" if pending is None else pending + b"]"


async def _capped(source: AsyncIterator[ClassAd], cap: int) -> AsyncIterator[ClassAd]:
    count = 0
    async for ad in source:
        yield ad
        count += 1
        if cap > 0 and count >= cap:
            break


async def job_list_bytes(
    ads: AsyncIterator[ClassAd], hidden: tuple[str, ...], counted: list[int] | None = None
) -> AsyncIterator[bytes]:
    """``[{"jobid": ..., "classad": {...}}, ...]`` written from each ad's received bytes, in
    chunks, as the ads arrive (no text decoded and encoded again, no JSON parsed again, no list
    of every job in memory).  A value that was not UTF-8 on the wire is written back as it came
    instead of failing the answer mid-stream.  ``counted`` gets the number of jobs written.
    The listing of a stream of ads: the routes transcode instead (:func:`entry_list_bytes`,
    the same text), and the tests hold the two to the same bytes."""
    parts, size, count = [b"["], 0, 0
    append = parts.append
    async for ad in ads:
        entry = job_entry_bytes(ad, hidden)
        if count:
            append(b",")
        append(entry)
        size += len(entry)
        count += 1
        if size >= CHUNK:
            yield b"".join(parts)
            parts, size = [], 0
            append = parts.append
    if counted is not None:
        counted.append(count)
    parts.append(b"]")
    yield b"".join(parts)


def job_entry_bytes(
    ad: ClassAd, hidden: tuple[str, ...], dropped: frozenset[str] = frozenset()
) -> bytes:
    """One job entry, ``{"jobid": "C.P", "classad": {...}}``, as UTF-8 JSON: its only writer
    (listings and the grouped forms join these; one job reads it back).  ``dropped``
    (lower-cased): names asked for the job id only, left out of the classad (restd's rule)."""
    if dropped:
        names = ad.raw_values()[0]
        body = ad_json_bytes(ad, hidden, lower=True, only=kept_names(names, dropped))
    else:
        body = ad_json_bytes(ad, hidden, lower=True)
    return b'{"jobid": %s, "classad": %s}' % (_jobid_json(ad), body)


@functools.lru_cache(maxsize=256)
def kept_names(names: tuple[str, ...], dropped: frozenset[str]) -> frozenset[str]:
    """The lower-cased ``names`` but ``dropped`` (one set per shape of ad)."""
    return frozenset(name.lower() for name in names) - dropped


#: What an entry is named by, outside its classad: a job's id, an ad's name and type.
JOB_KEYS = ("ClusterId", "ProcId")
STATUS_KEYS = ("Name", "MyType")


def id_projection(
    names: list[str], *also: str, keys: tuple[str, ...] = JOB_KEYS
) -> tuple[list[str], frozenset[str]]:
    """restd's projection: ``names`` (and ``also``, a group's attribute) with the entry's
    ``keys`` always asked for (a job's id, an ad's name and type are made of them), and those
    the caller did not name (lower-cased), to leave out of the classad.  No projection: all."""
    if not names:
        return names, frozenset()
    asked = {name.lower() for name in (*names, *also)}
    dropped = frozenset(k.lower() for k in keys if k.lower() not in asked)
    return [*names, *also, *(k for k in keys if k.lower() in dropped)], dropped


#: Per shape of ad (its names tuple, kept so that its id stays its own): where ClusterId and
#: ProcId are among its values.
_JOBID_PLANS: dict[int, tuple[tuple[str, ...], int, int]] = {}


def _jobid_json(ad: ClassAd) -> bytes:
    """``"C.P"`` as JSON: from the two received values when they are plain integers (the
    common case, without parsing them), else from their values."""
    names, values = ad.raw_values()
    found = _jobid_raw(names, values)
    if found is not None:
        return found
    return json.dumps(f"{ad.get('ClusterId')}.{ad.get('ProcId')}").encode()


def _jobid_raw(names: tuple[str, ...], values: Sequence[str] | Sequence[bytes]) -> bytes | None:
    """``"C.P"`` from an ad's names and received values when both are plain integers, else
    ``None`` (the caller then reads the values as an ad does)."""
    plan = _JOBID_PLANS.get(id(names))
    if plan is None or plan[0] is not names:
        lowered = [name.lower() for name in names]
        cluster = lowered.index("clusterid") if "clusterid" in lowered else -1
        proc = lowered.index("procid") if "procid" in lowered else -1
        if len(_JOBID_PLANS) >= 256:
            _JOBID_PLANS.clear()
        plan = _JOBID_PLANS[id(names)] = (names, cluster, proc)
    if plan[1] >= 0 and plan[2] >= 0:
        cluster_raw, proc_raw = values[plan[1]], values[plan[2]]
        if cluster_raw.__class__ is bytes and proc_raw.__class__ is bytes:
            if _plain_ints(cluster_raw, proc_raw):
                return b'"%s.%s"' % (cluster_raw, proc_raw)
        elif isinstance(cluster_raw, str) and isinstance(proc_raw, str):
            cluster_bytes, proc_bytes = cluster_raw.encode(), proc_raw.encode()
            if _plain_ints(cluster_bytes, proc_bytes):
                return b'"%s.%s"' % (cluster_bytes, proc_bytes)
    return None


#: The writers ``AsyncSchedd.query_chunks`` takes: an ad never built (its names and received
#: values), any other ad.
ShapedWriter = Callable[[tuple[str, ...], Sequence[bytes]], bytes]
AdWriter = Callable[[ClassAd], bytes]


def job_entry_writers(
    hidden: tuple[str, ...], dropped: frozenset[str] = frozenset()
) -> tuple[ShapedWriter, AdWriter]:
    """:func:`job_entry_bytes` as the two writers of ``AsyncSchedd.query_chunks`` (see
    :func:`cedar.http_api.adjson.json_writers`): the entry of an ad that is never built, from
    its names and received values, and of any other ad.  Same bytes as
    :func:`job_entry_bytes` either way: the job id from the two received values, or from
    them read as an ad when they are not plain integers."""
    shaped_json, _ = json_writers(hidden, lower=True)

    def shaped(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
        jobid = _jobid_raw(names, values)
        if jobid is None:
            jobid = _jobid_json(shaped_ad(names, values))
        if dropped:
            only = kept_names(names, dropped)
            body = columns_bytes(names, values, hidden, lower=True, only=only)
        else:
            body = shaped_json(names, values)
        return b'{"jobid": %s, "classad": %s}' % (jobid, body)

    def other(ad: ClassAd) -> bytes:
        return job_entry_bytes(ad, hidden, dropped)

    return shaped, other


def shaped_ad(names: tuple[str, ...], values: Sequence[bytes]) -> ClassAd:
    """The ad of a shape's names and received values (made only where a value must be read as
    an ad reads it: nothing is parsed until asked)."""
    shape = ad_shape(names)
    if shape is None:  # two names folding alike: the wire reader gives no such shape
        raise ProtocolError("an ad names one attribute twice")
    return ClassAd.from_shape(shape, values)


def _plain_ints(cluster: bytes, proc: bytes) -> bool:
    """Both are canonical non-negative integers' wire texts (written back as their values print);
    one call for the two (twice an ad in a listing)."""
    return (
        cluster.isdigit()
        and proc.isdigit()
        and (cluster[0] != 0x30 or cluster == b"0")
        and (proc[0] != 0x30 or proc == b"0")
    )


def _job_entry(ad: ClassAd, hidden: tuple[str, ...], dropped: frozenset[str]) -> dict[str, Any]:
    return _parsed(job_entry_bytes(ad, hidden, dropped))


def _parsed(body: bytes) -> dict[str, Any]:
    """A JSON object written here, read back (a value not UTF-8 on the wire as U+FFFD)."""
    data: dict[str, Any] = json.loads(body.decode("utf-8", "replace"))
    return data


def group_key(ad: ClassAd, name: str, hidden: tuple[str, ...]) -> str | None:
    """The group an ad falls in: its ``name`` value as its JSON reads back, in text (restd's
    ``str()`` of it; a hidden attribute's mask); None when it has none (undefined or absent):
    restd leaves such an ad out of the grouped answer (observed side by side, 25.13.2)."""
    one = ad_json_bytes(ad, hidden, lower=True, only=frozenset((name.lower(),)))
    value = _parsed(one).get(name.lower()) if one != b"{}" else None
    return None if value is None else str(value)


def grouped_bytes(groups: dict[str, list[bytes]]) -> bytes:
    """``{"value": [entry, ...], ...}`` from the entries' JSON, written as it is (no parse)."""
    return b"{%s}" % b",".join(
        b"%s:[%s]" % (json.dumps(key, ensure_ascii=False).encode(), b",".join(entries))
        for key, entries in groups.items()
    )


async def _job_answer(
    svc: Services,
    caller: Caller,
    schedd: str,
    history: bool,
    cluster: int | None,
    proc: int | None,
    attr: str | None,
    constraint: str | None,
    projection: str | None,
) -> Response:
    hidden = _hidden(svc)
    if attr is not None:
        projection = attr
    names, dropped = id_projection(svc.projection(projection))
    if attr is None and proc is None:  # a listing: the schedd's bytes to JSON
        writers = job_entry_writers(hidden, dropped)
        lists = await _job_chunks(svc, caller, schedd, history, cluster, constraint, names, writers)
        return PipelinedResponse(_counted_lists(svc, lists), media_type="application/json")
    ads = await _jobs(svc, caller, schedd, history, cluster, proc, constraint, names)
    if attr is None:  # one job: 404 when absent, so read it before answering
        entries = [_job_entry(ad, hidden, dropped) async for ad in ads]
        if not entries:
            return JSONResponse({"message": "No matching jobs"}, status_code=404)
        return JSONResponse(entries[0])  # restd: the entry itself, not a list of one
    async for ad in ads:
        values = _parsed(ad_json_bytes(ad, hidden, lower=True))
        if attr.lower() not in values:
            return JSONResponse({"message": "Undefined attribute"}, status_code=404)
        return JSONResponse(values[attr.lower()])
    return JSONResponse({"message": "No matching jobs"}, status_code=404)


async def _counted_lists(svc: Services, lists: AsyncIterator[list[bytes]]) -> AsyncIterator[bytes]:
    counted: list[int] = []
    async for chunk in entry_list_bytes(lists, counted):
        yield chunk
    svc.ads_sent += sum(counted)


def _job_routes(kind: str) -> None:
    history = kind == "history"

    @router.get(f"/{kind}/{{schedd}}", responses=ERRORS, name=f"restd_{kind}")
    async def all_jobs(
        svc: ServicesDep,
        caller: CallerDep,
        schedd: str,
        projection: str | None = None,
        constraint: str | None = None,
    ) -> Response:
        return await _job_answer(
            svc, caller, schedd, history, None, None, None, constraint, projection
        )

    @router.get(f"/{kind}/{{schedd}}/{{cluster}}", responses=ERRORS, name=f"restd_{kind}_cluster")
    async def cluster_jobs(
        svc: ServicesDep,
        caller: CallerDep,
        schedd: str,
        cluster: int,
        projection: str | None = None,
        constraint: str | None = None,
    ) -> Response:
        return await _job_answer(
            svc, caller, schedd, history, cluster, None, None, constraint, projection
        )

    @router.get(
        f"/{kind}/{{schedd}}/{{cluster}}/{{proc}}", responses=ERRORS, name=f"restd_{kind}_job"
    )
    async def one_job(
        svc: ServicesDep,
        caller: CallerDep,
        schedd: str,
        cluster: int,
        proc: int,
        projection: str | None = None,
    ) -> Response:
        return await _job_answer(
            svc, caller, schedd, history, cluster, proc, None, None, projection
        )

    @router.get(
        f"/{kind}/{{schedd}}/{{cluster}}/{{proc}}/{{attr}}",
        responses=ERRORS,
        name=f"restd_{kind}_attr",
    )
    async def job_attr(
        svc: ServicesDep, caller: CallerDep, schedd: str, cluster: int, proc: int, attr: str
    ) -> Response:
        return await _job_answer(svc, caller, schedd, history, cluster, proc, attr, None, None)

    grouped = f"grouped_{'jobs' if kind == 'jobs' else 'history'}"

    async def group(
        svc: Services,
        caller: Caller,
        schedd: str,
        groupby: str,
        cluster: int | None,
        projection: str | None,
        constraint: str | None,
    ) -> Response:
        svc.projection(groupby)
        names, dropped = id_projection(svc.projection(projection), groupby)
        hidden = _hidden(svc)
        groups: dict[str, list[bytes]] = {}
        # the entries transcoded as the listing's, each one's group key beside it
        keys: list[str | None] = []
        shaped_entry, other_entry = job_entry_writers(hidden, dropped)

        def shaped(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
            keys.append(group_key(shaped_ad(names, values), groupby, hidden))
            return shaped_entry(names, values)

        def other(ad: ClassAd) -> bytes:
            keys.append(group_key(ad, groupby, hidden))
            return other_entry(ad)

        lists = await _job_chunks(
            svc, caller, schedd, history, cluster, constraint, names, (shaped, other)
        )
        done = 0  # the writers run in the lists' order: keys[done:] are the next list's
        async for items in lists:
            for key, entry in zip(keys[done : done + len(items)], items, strict=True):
                if key is not None:
                    groups.setdefault(key, []).append(entry)
            done += len(items)
        return Response(grouped_bytes(groups), media_type="application/json")

    @router.get(
        f"/{grouped}/{{schedd}}/{{groupby}}",
        responses=ERRORS,
        name=f"restd_{grouped}",
        response_model=dict[str, list[dict[str, Any]]],
    )
    async def grouped_all(
        svc: ServicesDep,
        caller: CallerDep,
        schedd: str,
        groupby: str,
        projection: str | None = None,
        constraint: str | None = None,
    ) -> Response:
        return await group(svc, caller, schedd, groupby, None, projection, constraint)

    @router.get(
        f"/{grouped}/{{schedd}}/{{groupby}}/{{cluster}}",
        responses=ERRORS,
        name=f"restd_{grouped}_cluster",
        response_model=dict[str, list[dict[str, Any]]],
    )
    async def grouped_cluster(
        svc: ServicesDep,
        caller: CallerDep,
        schedd: str,
        groupby: str,
        cluster: int,
        projection: str | None = None,
        constraint: str | None = None,
    ) -> Response:
        return await group(svc, caller, schedd, groupby, cluster, projection, constraint)


_job_routes("jobs")
_job_routes("history")


@dataclass(frozen=True)
class StatusParams:
    """restd's query parameters of every status route (``?query=&projection=&constraint=``)."""

    query: str = "any"
    projection: str | None = None
    constraint: str | None = None


async def status_params(
    query: str = "any", projection: str | None = None, constraint: str | None = None
) -> StatusParams:
    """The grouped forms' parameters, read by a coroutine: FastAPI runs a class or
    plain-function dependency in a worker thread, a thread hop per request."""
    return StatusParams(query, projection, constraint)


StatusDep = Annotated[StatusParams, Depends(status_params)]


def _bad_query(params: StatusParams) -> Response | None:
    """restd's answer to an unknown ``query=`` (its argument parser's shape: the message is an
    object naming the parameter), or None."""
    if params.query.lower() in AD_TYPES:
        return None
    message = {"query": f"{params.query} is not a valid choice"}
    return JSONResponse({"message": message}, status_code=400)


async def _status_ads(
    svc: Services, caller: Caller, name: str | None, params: StatusParams, *also: str
) -> tuple[list[ClassAd], frozenset[str]]:
    """The ads and the names asked only to name the entries (left out of their classads)."""
    ad_type = AD_TYPES.get(params.query.lower())
    if ad_type is None:
        raise InvalidArgument(f"{params.query} is not a valid choice")
    names, dropped = id_projection(svc.projection(params.projection), *also, keys=STATUS_KEYS)
    parts: list[Any] = [svc.constraint(params.constraint)]
    if name is not None:
        parts.append(Binary("==", AttrRef("Name"), Literal(name)))
    collector = svc.access.collector(caller)
    # a tree: the client sends it without printing and parsing it again
    query = collector.query_iter(ad_type, and_constraints(parts), names or None)
    return [ad async for ad in query], dropped


def status_entry_bytes(
    ad: ClassAd, hidden: tuple[str, ...], dropped: frozenset[str] = frozenset()
) -> bytes:
    """One status entry, ``{"name", "type", "classad"}``, as UTF-8 JSON: its only writer (the
    list and the grouped form join these); ``dropped`` as :func:`job_entry_bytes`'."""
    if dropped:
        only = kept_names(ad.raw_values()[0], dropped)
        body = ad_json_bytes(ad, hidden, lower=True, only=only)
    else:
        body = ad_json_bytes(ad, hidden, lower=True)
    return b'{"name": %s, "type": %s, "classad": %s}' % (
        json.dumps(plain_value(ad.get("Name"))).encode(),
        json.dumps(plain_value(ad.get("MyType"))).encode(),
        body,
    )


async def _status_answer(
    svc: Services, caller: Caller, name: str | None, params: StatusParams
) -> Response:
    """The status list written from the ads' JSON bytes (no dicts built, parsed, validated
    and written again: that was most of a small query's own cost); with
    ``CEDAR_SERVE_STATUS_CACHE``, the caller's same answer of the last seconds."""
    refused = _bad_query(params)
    if refused is not None:
        return refused
    max_age = svc.settings.status_cache
    key = ("v1/status", name, params)
    body = svc.access.recent_answer(caller, key, max_age)
    if body is None:
        hidden = _hidden(svc)
        ads, dropped = await _status_ads(svc, caller, name, params)
        body = b"[%s]" % b", ".join([status_entry_bytes(ad, hidden, dropped) for ad in ads])
        if max_age > 0:
            svc.access.keep_answer(caller, key, body)
    return Response(body, media_type="application/json")


# The two status routes take the request and plain string parameters, and are served directly
# (cedar.http_api.direct, as ``get_job`` in ``api.py``): FastAPI's solving of their parameters was
# a tenth of a status request's own time.  The grouped forms, rarer, keep their dependencies.


async def _status_request(request: Request, name: str | None, params: StatusParams) -> Response:
    caller = await caller_of(request)
    return await _status_answer(services(request), caller, name, params)


@router.get("/status", responses=ERRORS, response_model=list[dict[str, Any]])
@direct
async def status(
    request: Request,
    query: str = "any",
    projection: str | None = None,
    constraint: str | None = None,
) -> Response:
    return await _status_request(request, None, StatusParams(query, projection, constraint))


@router.get("/status/{name}", responses=ERRORS, response_model=list[dict[str, Any]])
@direct
async def status_named(
    request: Request,
    name: str,
    query: str = "any",
    projection: str | None = None,
    constraint: str | None = None,
) -> Response:
    return await _status_request(request, name, StatusParams(query, projection, constraint))


async def _grouped_status(
    svc: Services, caller: Caller, groupby: str, name: str | None, params: StatusParams
) -> Response:
    svc.projection(groupby)
    refused = _bad_query(params)
    if refused is not None:
        return refused
    hidden = _hidden(svc)
    groups: dict[str, list[bytes]] = {}
    ads, dropped = await _status_ads(svc, caller, name, params, groupby)
    for ad in ads:
        key = group_key(ad, groupby, hidden)
        if key is not None:
            groups.setdefault(key, []).append(status_entry_bytes(ad, hidden, dropped))
    return Response(grouped_bytes(groups), media_type="application/json")


GROUPED = dict[str, list[dict[str, Any]]]


@router.get("/grouped_status/{groupby}", responses=ERRORS, response_model=GROUPED)
async def grouped_status(
    svc: ServicesDep, caller: CallerDep, groupby: str, params: StatusDep
) -> Response:
    return await _grouped_status(svc, caller, groupby, None, params)


@router.get("/grouped_status/{groupby}/{name}", responses=ERRORS, response_model=GROUPED)
async def grouped_status_named(
    svc: ServicesDep, caller: CallerDep, groupby: str, name: str, params: StatusDep
) -> Response:
    return await _grouped_status(svc, caller, groupby, name, params)


def _config_values(svc: Services) -> dict[str, Any]:
    """Every knob the reference's ``param`` lists (compiled-in defaults too), in its type, by
    lower-cased name: restd's ``/v1/config`` (975 knobs on the minicondor pool, the same values
    side by side; it listed only the ~100 the files set before)."""
    config = svc.access.config
    out: dict[str, Any] = {}
    for name in config.param_names():
        value = config.typed(name)
        if value is not None:
            out[name.lower()] = value
    return out


#: restd's ``daemon=`` names and the daemon type each locates.
DAEMON_TYPES = {
    "master": DaemonType.MASTER,
    "schedd": DaemonType.SCHEDD,
    "collector": DaemonType.COLLECTOR,
    "negotiator": DaemonType.NEGOTIATOR,
    "startd": DaemonType.STARTD,
}


@router.get("/config", responses=ERRORS)
async def config_all(
    svc: ServicesDep, caller: CallerDep, daemon: str | None = None
) -> dict[str, Any]:
    """The configuration this server reads (every knob; ``daemon=`` needs a knob name)."""
    if daemon:
        raise InvalidArgument("daemon= needs a knob: /v1/config/<name>?daemon=<type>")
    return _config_values(svc)


@router.get("/config/{attr}", responses=ERRORS)
async def config_one(
    svc: ServicesDep, caller: CallerDep, attr: str, daemon: str | None = None
) -> Response:
    """A knob's value here, or in a running daemon of the pool (``daemon=schedd``, ...: asked
    with DC_CONFIG_VAL)."""
    if daemon:
        from cedar.commands._async.config_val import remote_config_value_async

        daemon_type = DAEMON_TYPES.get(daemon.lower())
        if daemon_type is None:
            raise InvalidArgument(f"{daemon} is not a valid choice")
        try:  # the first one (restd asks "a" daemon of the type too)
            locations = await svc.access.collector(caller).locate_all(daemon_type)
        except CedarError as exc:
            raise NotFound(f"no {daemon} found: {exc}") from None
        if not locations:
            raise NotFound(f"no {daemon} in the pool")
        value = await remote_config_value_async(
            locations[0].address,
            attr,
            security=svc.access.security(caller),
            timeout=svc.settings.timeout,
        )
    else:
        value = svc.access.config.get(attr)
    if value is None:
        return JSONResponse({"message": f"Undefined attribute: {attr}"}, status_code=404)
    return JSONResponse(value)
