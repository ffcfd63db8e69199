"""The tools that need no job: the pool's ads (advertise_ad), cedar's reference
(describe_*, search_reference) and the history summary.  Rows of the one table in
:mod:`cedar.mcp.tools`."""

from __future__ import annotations

import math
import time

from cedar.classad_wire import ClassAd, parse_one
from cedar.classad_wire.jsonfmt import ad_from_json
from cedar.errors import CedarError
from cedar.mcp import describe
from cedar.mcp.schemas import (
    AdvertiseArgs,
    AdvertiseResult,
    AttributeResult,
    DescribeArgs,
    Distribution,
    HistorySummaryArgs,
    HistorySummaryResult,
    NameArgs,
    ReferenceEntry,
    Result,
    SearchArgs,
    SearchResult,
)
from cedar.mcp.toolbase import ToolCall, ToolFailure, checked_constraint, status_name
from cedar.numbers import AdType

# --------------------------------------------------------------------------- the pool's ads


def _ad_of(text: str) -> ClassAd:
    """A ClassAd from JSON or old-syntax text, parsed by the one reader."""
    try:
        if text.lstrip().startswith("{"):
            return ad_from_json(text)
        return parse_one(text, syntax="auto")
    except (ValueError, CedarError) as exc:
        raise ToolFailure(f"the ad does not parse: {str(exc)[:200]}") from None


async def advertise_ad(call: ToolCall, args: AdvertiseArgs) -> tuple[Result, str]:
    ad = _ad_of(args.ad)
    my_type = ad.get("MyType")
    if not isinstance(my_type, str) or not my_type:
        raise ToolFailure("the ad needs a MyType (a string)")
    name = ad.get("Name")
    name = name if isinstance(name, str) else None
    try:
        kind: AdType | None = AdType.from_name(my_type)
    except (ValueError, CedarError):
        kind = None
    collector = call.collector()  # the caller's identity; the daemon decides
    if args.invalidate:
        if name is None:
            raise ToolFailure("to invalidate, the ad needs the Name of the ad to remove")
        if kind is None or kind.invalidate_command is None:
            await collector.invalidate(AdType.GENERIC, name=name, target_type=my_type)
        else:
            await collector.invalidate(kind, name=name)
        command = "INVALIDATE"
    else:
        chosen = args.command or (
            kind.update_command.name
            if kind is not None and kind.update_command is not None
            else "UPDATE_AD_GENERIC"
        )
        await collector.advertise([ad], chosen)
        command = chosen
    result = AdvertiseResult(
        my_type=my_type, name=name, command=command, invalidated=args.invalidate
    )
    verb = "invalidated" if args.invalidate else "advertised"
    return result, f"{verb} {my_type} ad {name or ''} ({command})".replace("  ", " ")


# --------------------------------------------------------------------------- reference


def _entry(entry: describe.Attribute, kind: str | None = None) -> ReferenceEntry:
    return ReferenceEntry(
        name=entry.name,
        kind=kind or entry.ad,
        type=entry.type,
        meaning=entry.meaning,
        submit_command=entry.submit_command,
    )


def _attribute_result(name: str, entry: describe.Attribute | None) -> tuple[Result, str]:
    if entry is None:
        return AttributeResult(name=name, known=False), f"cedar has no description of {name}"
    result = AttributeResult(
        name=entry.name,
        known=True,
        type=entry.type,
        meaning=entry.meaning,
        submit_command=entry.submit_command,
        values=entry.values,
        ad=entry.ad,
    )
    return result, f"{entry.name} ({entry.type}): {entry.meaning}"


async def describe_attribute(call: ToolCall, args: DescribeArgs) -> tuple[Result, str]:
    return _attribute_result(args.name, describe.describe(args.name))


async def describe_knob(call: ToolCall, args: NameArgs) -> tuple[Result, str]:
    return _attribute_result(args.name, describe.describe_knob(args.name))


async def describe_job_attribute(call: ToolCall, args: NameArgs) -> tuple[Result, str]:
    return _attribute_result(args.name, describe.attribute(args.name, "job"))


async def describe_machine_attribute(call: ToolCall, args: NameArgs) -> tuple[Result, str]:
    return _attribute_result(args.name, describe.attribute(args.name, "machine"))


async def describe_submit_command(call: ToolCall, args: NameArgs) -> tuple[Result, str]:
    return _attribute_result(args.name, describe.BY_SUBMIT_COMMAND.get(args.name.lower()))


async def search_reference(call: ToolCall, args: SearchArgs) -> tuple[Result, str]:
    found = describe.search(args.text, args.limit + 1)
    matches = [_entry(entry) for entry in found[: args.limit]]
    result = SearchResult(matches=matches, truncated=len(found) > args.limit)
    return result, f"{len(matches)} reference entr(y/ies) mention {args.text!r}"


# --------------------------------------------------------------------------- history summary


def quantiles(values: list[float]) -> Distribution:
    """Nearest-rank quantiles of the values (all kept: the scan is bounded)."""
    if not values:
        return Distribution(count=0)
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    return Distribution(
        count=len(ordered),
        min=ordered[0],
        p25=at(0.25),
        median=at(0.5),
        p75=at(0.75),
        p95=at(0.95),
        max=ordered[-1],
    )


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _bump(counts: dict[str, int], key: object) -> None:
    text = str(key)[:200]
    counts[text] = counts.get(text, 0) + 1


#: What summarize_history reads of each record.
_SUMMARY_ATTRS = [
    "ClusterId",
    "ProcId",
    "JobStatus",
    "Owner",
    "ExitCode",
    "ExitBySignal",
    "HoldReason",
    "CompletionDate",
    "JobCurrentStartDate",
    "RemoteWallClockTime",
]


async def summarize_history(call: ToolCall, args: HistorySummaryArgs) -> tuple[Result, str]:
    as_of = int(time.time())
    window = None
    if args.window_hours is not None:
        window = f"CompletionDate >= {as_of - int(args.window_hours * 3600)}"
    constraint = await call.scoped(window, checked_constraint(args.constraint))
    schedd = await call.schedd()
    status: dict[str, int] = {}
    owners: dict[str, int] = {}
    exits: dict[str, int] = {}
    holds: dict[str, int] = {}
    run: list[float] = []
    wall: list[float] = []
    jobs = 0
    async for ad in schedd.history(constraint, _SUMMARY_ATTRS, args.scan_limit + 1):
        jobs += 1
        if jobs > args.scan_limit:
            break
        if jobs % 1000 == 0:
            await call.progress(jobs, None, f"{jobs} records read")
        _bump(status, status_name(ad.get("JobStatus")))
        _bump(owners, ad.get("Owner", "?"))
        if ad.get("ExitBySignal") is not True and ad.get("ExitCode") is not None:
            _bump(exits, ad.get("ExitCode"))
        if isinstance(ad.get("HoldReason"), str):
            _bump(holds, ad.get("HoldReason"))
        end, start = _number(ad.get("CompletionDate")), _number(ad.get("JobCurrentStartDate"))
        if end and start and end >= start:
            run.append(end - start)
        spent = _number(ad.get("RemoteWallClockTime"))
        if spent is not None:
            wall.append(spent)
    truncated = jobs > args.scan_limit
    jobs = min(jobs, args.scan_limit)
    result = HistorySummaryResult(
        as_of=as_of,
        jobs=jobs,
        truncated=truncated,
        by_status=status,
        by_owner=owners,
        by_exit_code=exits,
        by_hold_reason=holds,
        run_time_seconds=quantiles(run),
        wall_time_seconds=quantiles(wall),
    )
    return result, f"{jobs} archived job(s) summarized" + (" (scan limit hit)" if truncated else "")
