"""Getting what an analysis needs, with cedar's clients (spec 08 §6): the slot ads from the
collector, the whole job ads plus the schedd's ``Analyze`` summary (``ForAnalysis``), and for
local/scheduler universe jobs the schedd's own ad.  The only I/O of :mod:`cedar.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cedar.analysis.gcpause import paused_gc
from cedar.analysis.job import analyze_job
from cedar.analysis.model import JobAnalysis
from cedar.auth.client import CommandSession
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.constraints import constraint_text
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.unparse import quote_string
from cedar.classad_wire.wire import get_classad
from cedar.commands import AsyncCollector, AsyncJobQuery, AsyncSchedd, run_command_async
from cedar.commands.schedd import job_query_command, query_request
from cedar.errors import CedarError
from cedar.numbers import AdType, Command, DaemonType
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive

#: Slot attributes whose mention in a slot constraint keeps dynamic slots in the query.
_SLOT_KIND_NAMES = ("partitionableslot", "dynamicslot", "slottype", "dslotid")
NOT_DYNAMIC = "!(DynamicSlot ?: false)"


@dataclass(frozen=True)
class AnalysisInputs:
    """Everything the pure analysis takes, as fetched."""

    jobs: tuple[ClassAd, ...]
    slots: tuple[ClassAd, ...]
    analyze: ClassAd | None = None
    schedd_ad: ClassAd | None = None
    schedd_name: str | None = None
    schedd_address: str | None = None
    priorities: dict[str, float] | None = field(default=None)


def slot_constraint(machine: str | None = None, constraint: str | None = None) -> str | None:
    """The collector constraint ``condor_q -analyze`` sends (spec 08 §6.1)."""
    parts: list[str | None] = [constraint]
    if machine is not None:
        name = quote_string(machine, old=True)
        parts.append(f"(Name == {name} || Machine == {name})")
    mentions = (constraint or "").lower()
    keep_dynamic = (machine is not None and "@" in machine) or any(
        n in mentions for n in _SLOT_KIND_NAMES
    )
    if not keep_dynamic:
        parts.append(NOT_DYNAMIC)
    return constraint_text(parts)


async def fetch_slots(
    collector: AsyncCollector, machine: str | None = None, constraint: str | None = None
) -> list[ClassAd]:
    """Whole slot ads (no projection), as the analysis needs every attribute."""
    with paused_gc():  # many long-lived ads, no cycles: see cedar.analysis.gcpause
        return await collector.query(AdType.STARTD, slot_constraint(machine, constraint))


async def fetch_jobs(
    schedd: AsyncSchedd,
    constraint: str | Expr | None,
    *,
    my_jobs: str | None = None,
    with_auth: bool = False,
) -> tuple[list[ClassAd], ClassAd | None]:
    """Whole job ads and the ``Analyze`` sub-ad of the summary (``ForAnalysis = true``)."""
    request = query_request(constraint, (), -1, my_jobs=my_jobs, send_server_time=False)
    request["ForAnalysis"] = True
    query = AsyncJobQuery(schedd, job_query_command(with_auth), request)
    jobs = [ad async for ad in query]
    analyze = query.summary.get("Analyze") if query.summary is not None else None
    return jobs, analyze if isinstance(analyze, ClassAd) else None


def priority_table(ad: ClassAd) -> dict[str, float]:
    """``NameN``/``PriorityN`` pairs (N from 1 until a name is missing) as name -> priority."""
    table: dict[str, float] = {}
    for n in range(1, len(ad) + 1):
        name, priority = ad.get(f"Name{n}"), ad.get(f"Priority{n}")
        if not isinstance(name, str):
            break
        if isinstance(priority, int | float) and not isinstance(priority, bool):
            table[name] = float(priority)
    return table


def priority_body(session: CommandSession) -> Protocol[dict[str, float]]:
    """GET_PRIORITY (451): no payload; the reply is one ad without its two type strings
    (spec 08 §6.1)."""
    yield from session.send_empty_payload()
    reply: MessageReader = yield Receive()
    ad = get_classad(reply, types=False)
    reply.end_of_message()
    return priority_table(ad)


async def fetch_priorities(collector: AsyncCollector) -> dict[str, float]:
    """The negotiator's priority table (located through the collector)."""
    location = await collector.locate(DaemonType.NEGOTIATOR)
    table: dict[str, float] = await run_command_async(
        location.address,
        Command.GET_PRIORITY,
        priority_body,
        security=collector.security,
        timeout=collector.timeout,
    )
    return table


async def fetch_inputs(
    schedd: AsyncSchedd,
    collector: AsyncCollector,
    constraint: str | Expr | None,
    *,
    machine: str | None = None,
    slot_filter: str | None = None,
    my_jobs: str | None = None,
    with_auth: bool = False,
    schedd_name: str | None = None,
    collector_schedd_ad: bool = False,
    priorities: bool = False,
) -> AnalysisInputs:
    """Slots, then jobs (the reference's order), then the schedd's ad when a job needs it.

    Raises the clients' :class:`~cedar.errors.CedarError` when a daemon cannot be reached; a
    missing schedd ad is not an error (the analysis then says it could not check).
    """
    slots = await fetch_slots(collector, machine, slot_filter)
    jobs, analyze = await fetch_jobs(schedd, constraint, my_jobs=my_jobs, with_auth=with_auth)
    address = await schedd.locate()
    schedd_ad: ClassAd | None = None
    try:
        location = await collector.locate(DaemonType.SCHEDD, schedd_name)
        schedd_name = schedd_name or location.name
        # Observed: condor_q with the local schedd (address file) evaluates the start policy
        # in an ad without it ("failed to evalute"); the collector's ad only when asked.
        schedd_ad = location.ad if collector_schedd_ad else ClassAd({"Name": schedd_name or ""})
    except CedarError:
        pass
    table = await fetch_priorities(collector) if priorities else None
    return AnalysisInputs(
        priorities=table,
        jobs=tuple(jobs),
        slots=tuple(slots),
        analyze=analyze,
        schedd_ad=schedd_ad,
        schedd_name=schedd_name,
        schedd_address=address,
    )


async def analyze_async(
    schedd: AsyncSchedd,
    collector: AsyncCollector,
    constraint: str | Expr | None,
    *,
    machine: str | None = None,
    my_jobs: str | None = None,
    with_auth: bool = False,
    priorities: bool = False,
    detail: bool = True,
) -> list[JobAnalysis]:
    """Fetch and analyse every job ``constraint`` selects (ordered by id): the one call a
    service needs.  ``my_jobs``/``with_auth`` as for the schedd's job query."""
    inputs = await fetch_inputs(
        schedd,
        collector,
        constraint,
        machine=machine,
        my_jobs=my_jobs,
        with_auth=with_auth,
        priorities=priorities,
    )
    jobs = sorted(inputs.jobs, key=lambda j: (j.get("ClusterId", 0), j.get("ProcId", 0)))
    return [
        analyze_job(
            job,
            inputs.slots,
            analyze_summary=inputs.analyze,
            priorities=inputs.priorities,
            schedd_ad=inputs.schedd_ad,
            single_slot=True if machine else None,
            detail=detail,
        )
        for job in jobs
    ]


__all__ = [
    "NOT_DYNAMIC",
    "analyze_async",
    "AnalysisInputs",
    "fetch_inputs",
    "fetch_jobs",
    "fetch_priorities",
    "fetch_slots",
    "priority_body",
    "priority_table",
]
