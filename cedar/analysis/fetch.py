"""Getting what an analysis needs, with cedar's clients (spec 08 §6): the slot ads from the
collector, the whole job ads plus the schedd's ``Analyze`` summary (``ForAnalysis``), and for
local/scheduler universe jobs the schedd's own ad.  The only I/O of :mod:`cedar.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.constraints import constraint_text
from cedar.classad_wire.unparse import quote_string
from cedar.commands import AsyncCollector, AsyncJobQuery, AsyncSchedd
from cedar.commands.schedd import job_query_command, query_request
from cedar.errors import CedarError
from cedar.numbers import AdType, DaemonType

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
    return await collector.query(AdType.STARTD, slot_constraint(machine, constraint))


async def fetch_jobs(
    schedd: AsyncSchedd,
    constraint: str | None,
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


async def fetch_inputs(
    schedd: AsyncSchedd,
    collector: AsyncCollector,
    constraint: str | None,
    *,
    machine: str | None = None,
    slot_filter: str | None = None,
    my_jobs: str | None = None,
    with_auth: bool = False,
    schedd_name: str | None = None,
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
        schedd_ad = location.ad
        schedd_name = schedd_name or location.name
    except CedarError:
        pass
    return AnalysisInputs(
        jobs=tuple(jobs),
        slots=tuple(slots),
        analyze=analyze,
        schedd_ad=schedd_ad,
        schedd_name=schedd_name,
        schedd_address=address,
    )


__all__ = ["NOT_DYNAMIC", "AnalysisInputs", "fetch_inputs", "fetch_jobs", "fetch_slots"]
