"""Forward analysis: one job against the slot ads (spec 08 §7.1-§7.2), pure.

:func:`analyze_job` classifies every slot the way ``condor_q -better-analyze`` does, counts
the job's Requirements clause by clause, and returns a :class:`~cedar.analysis.model.JobAnalysis`.
No I/O: the caller brings the job ad, the slot ads and optionally the schedd's ``Analyze``
summary, the priority table and the schedd's own ad (see :mod:`cedar.analysis.fetch`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from cedar.analysis.clauses import ClauseTable, analysis_text, truthy
from cedar.analysis.detail import (
    RequirementsMemo,
    explain,
    explain_blocker,
    histogram,
    matches,
    suggestions,
    target_name,
)
from cedar.analysis.gcpause import with_paused_gc
from cedar.analysis.model import (
    AttributeValue,
    ClauseResult,
    JobAnalysis,
    MatchHistory,
    SlotCounts,
)
from cedar.classad_wire.analysis import external_refs, internal_refs
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import AttrRef, Literal, fold
from cedar.classad_wire.unparse import unparse
from cedar.errors import InvalidArgument

LOCAL_UNIVERSES = {12: "StartLocalUniverse", 7: "StartSchedulerUniverse"}
_JOB_UNITS = {"requestdisk": "kb", "requestmemory": "mb"}
_SLOT_UNITS = {"disk": "kb", "memory": "mb"}
_DEFAULT_RESOURCES = "Cpus Memory Disk"


def _int(ad: ClassAd | None, name: str) -> int | None:
    if ad is None:
        return None
    value = ad.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(ad: ClassAd | None, name: str) -> str | None:
    if ad is None:
        return None
    value = ad.get(name)
    return value if isinstance(value, str) else None


def _flag(ad: ClassAd, name: str) -> bool:
    return truthy(ad.eval(name)) if name in ad else False


def job_state(job: ClassAd, now: int | None = None) -> str | None:
    """The reference's status sentence (``Job is held.`` + hold reason, ...) or None."""
    status = _int(job, "JobStatus")
    if status in (2, 6, 7):
        return "Job is running."
    if status == 5:
        reason = _str(job, "HoldReason")
        return "Job is held." + (f"\n\nHold reason: {reason}" if reason else "")
    if status == 3:
        return "Job is removed."
    if status == 4:
        return "Job is completed."
    if status == 1:
        cool = _int(job, "JobCoolDownExpiration")
        server = _int(job, "ServerTime") or now or int(time.time())
        if cool is not None and cool > server:
            return "Job is in cool down."
    return None


def slot_order_key(slot: ClassAd, sequence: int) -> str:
    """The reference's slot order: ``<Machine>/<SlotID>[.<DSlotId>]/<Name>/<sequence>``."""
    key = f"{_str(slot, 'Machine') or ''}/{_int(slot, 'SlotID') or 0:03d}"
    dslot = _int(slot, "DSlotId")
    if dslot is not None:
        key += f".{dslot:03d}"
    return f"{key}/{_str(slot, 'Name') or ''}/{sequence:010d}"


def drained_overlay(slot: ClassAd) -> ClassAd:
    """A partitionable slot as it would be with nothing carved out of it."""
    overlay = slot.copy()
    names = _str(slot, "MachineResources") or _DEFAULT_RESOURCES
    for name in names.split():
        total = slot.get_expr(f"TotalSlot{name}")
        if total is not None:
            overlay.set_expr(name, total)
    return overlay


def submitter_name(job: ClassAd, uid_domain: str | None = None) -> str | None:
    """The accounting name the negotiator uses for the job's submitter."""
    user = _str(job, "User")
    if user is None:
        return None
    if "@" not in user and uid_domain:
        user = f"{user}@{uid_domain}"
    return ("nice-user." + user) if _flag(job, "NiceUser") else user


class _Counter:
    """The classification counters of spec 08 §7.1 for one job."""

    def __init__(self) -> None:
        self.values: dict[str, int] = dict.fromkeys(
            (
                "slots",
                "rejected_by_job",
                "rejecting_job",
                "running_yours",
                "running",
                "offline",
                "available_now",
                "available_if_drained",
                "job_matches",
                "both_match",
                "better_priority",
                "will_not_preempt",
            ),
            0,
        )

    def add(self, name: str) -> None:
        self.values[name] += 1

    def counts(self, machines: int) -> SlotCounts:
        v = self.values
        return SlotCounts(
            slots=v["slots"],
            machines=machines,
            rejected_by_job=v["rejected_by_job"],
            rejecting_job=v["rejecting_job"],
            running_yours=v["running_yours"],
            serving_others=v["running"] - v["running_yours"],
            offline=v["offline"],
            available_now=v["available_now"],
            available_if_drained=v["available_if_drained"],
            job_matches=v["job_matches"],
            both_match=v["both_match"],
            running=v["running"],
            better_priority=v["better_priority"],
            will_not_preempt=v["will_not_preempt"],
        )


def _classify(
    job: ClassAd,
    table: ClauseTable,
    slots: Sequence[ClassAd],
    priorities: Mapping[str, float] | None,
    preemption_requirements: str | None,
    uid_domain: str | None,
) -> tuple[SlotCounts, list[ClassAd], list[ClassAd], float | None, str | None]:
    """Count the slots; return the counts, the clause targets, the drained overlays, and the
    submitter's priority (priority mode)."""
    fetched = list(slots)
    partitionable = [s for s in fetched if _flag(s, "PartitionableSlot")]
    dynamic = [s for s in fetched if _flag(s, "DynamicSlot")]
    pslot_mode = not (len(dynamic) > 1 and not partitionable)
    order = sorted(range(len(fetched)), key=lambda i: slot_order_key(fetched[i], i))
    user = _str(job, "User")
    submitter = submitter_name(job, uid_domain)
    priority = priorities.get(submitter) if priorities is not None and submitter else None
    prio_job = job
    if priority is not None:
        prio_job = job.copy()
        prio_job["SubmittorPrio"] = float(priority)
    counter = _Counter()
    seen: dict[tuple[tuple[str, str], ...], bool] = {}  # job matches, by slot signature

    def job_matches(slot: ClassAd) -> bool:
        key = table.signature(slot)
        if key is None:
            return matches(job, slot)
        found = seen.get(key)
        if found is None:
            found = seen[key] = matches(job, slot)
        return found

    slot_side = RequirementsMemo(prio_job if priority is not None else job)
    machines: set[object] = set()
    targets: list[ClassAd] = []
    overlays: list[ClassAd] = []
    for index in order:
        slot = fetched[index]
        machines.add(slot.get("Machine"))
        is_dynamic = pslot_mode and _flag(slot, "DynamicSlot")
        if not (is_dynamic and len(fetched) > 1):
            targets.append(slot)
        if is_dynamic:
            continue
        use, drained = slot, False
        if _flag(slot, "PartitionableSlot") and not truthy(slot.eval("WithinResourceLimits", job)):
            overlay = drained_overlay(slot)
            if truthy(overlay.eval("WithinResourceLimits", job)):
                use, drained = overlay, True
                overlays.append(overlay)
        counter.add("slots")
        if not job_matches(use):
            counter.add("rejected_by_job")
            continue
        counter.add("job_matches")
        if not slot_side.matches(use):
            counter.add("rejecting_job")
            continue
        counter.add("both_match")
        if _flag(use, "Offline"):
            counter.add("offline")
        remote = use.get("RemoteUser")
        if remote is None:
            counter.add("available_if_drained" if drained else "available_now")
            continue
        counter.add("running")
        if priority is None or priorities is None:
            if remote == user:
                counter.add("running_yours")
            continue
        if remote in (user, submitter):
            counter.add("running_yours")
            continue
        busy = use.copy()
        remote_prio = priorities.get(str(remote))
        if remote_prio is not None:
            busy["RemoteUserPrio"] = float(remote_prio)
        if not truthy(evaluate("MY.RemoteUserPrio > TARGET.SubmittorPrio + 0.5", busy, prio_job)):
            counter.add("better_priority")
        elif truthy(evaluate("MY.Rank >= MY.CurrentRank", busy, prio_job)) and not truthy(
            evaluate(preemption_requirements or "false", busy, prio_job)
        ):
            counter.add("will_not_preempt")
        else:
            counter.add("available_if_drained" if drained else "available_now")
    return counter.counts(len(machines)), targets, overlays, priority, submitter


def _history(job: ClassAd, analyze: ClassAd | None) -> MatchHistory:
    ac_id = _int(job, "AutoClusterId")
    sub: ClassAd | None = None
    if analyze is not None and ac_id is not None:
        found = analyze.get(f"ac{ac_id}")
        sub = found if isinstance(found, ClassAd) else None
    return MatchHistory(
        last_match_time=_int(job, "LastMatchTime"),
        last_rejection_time=_int(job, "LastRejMatchTime"),
        last_rejection_reason=_str(job, "LastRejMatchReason"),
        last_rejection_negotiator=_str(job, "LastRejMatchNegotiator"),
        autocluster_id=ac_id,
        autocluster_last_match_time=_int(sub, "LastMatchTime"),
        autocluster_last_rejection_time=_int(sub, "LastRejMatchTime"),
        autocluster_last_rejection_reason=_str(sub, "LastRejMatchReason"),
        autocluster_last_rejection_negotiator=_str(sub, "LastRejMatchNegotiator"),
        autocluster_running=_int(sub, "NumRunning"),
        autocluster_completed=_int(sub, "NumCompleted"),
        autocluster_jobs=_int(sub, "NumJobs"),
        autocluster_idle=_int(sub, "NumIdle"),
    )


def clause_results(
    table: ClauseTable,
    my: ClassAd,
    slots: Sequence[ClassAd],
    detail: bool,
) -> tuple[ClauseResult, ...]:
    """The clause table as result objects (with histograms and suggestions when ``detail``)."""
    results = []
    for clause in table.clauses:
        kind = {"&&": "and", "||": "or"}.get(clause.op or "", "condition")
        operands = tuple(n for n in (clause.left, clause.right) if n is not None)
        word = table.constant_word(clause)
        matched = None if word is not None else table.total(clause)
        drained = None
        if table.columns == 2 and word is None:
            matched, drained = clause.counts[0], clause.counts[1]
        hists: tuple[Any, ...] = ()
        ideas: tuple[Any, ...] = ()
        if detail and kind == "condition" and word is None:
            names = [target_name(r) for r in external_refs(my, clause.expr)]
            hists = tuple(histogram(name, slots, my) for name in names if "." not in name)
            ideas = suggestions(clause.expr, my, slots)
        results.append(
            ClauseResult(
                step=clause.number,
                text=clause.text,
                label=table.label(clause),
                kind=kind,
                operands=operands,
                shown=table.shown(clause),
                matched=matched,
                matched_if_drained=drained,
                constant=word,
                histograms=hists,
                suggestions=ideas,
            )
        )
    return tuple(results)


def _job_attributes(job: ClassAd, requirements: Any) -> tuple[AttributeValue, ...]:
    names = sorted(internal_refs(job, requirements), key=str.lower)
    return tuple(
        AttributeValue(name, analysis_text(job.lookup(name)), _JOB_UNITS.get(fold(name)))
        for name in names
    )


def _slot_attributes(job: ClassAd, slot: ClassAd, requirements: Any) -> tuple[AttributeValue, ...]:
    found: dict[str, AttributeValue] = {}
    for ref in external_refs(job, requirements):
        name = target_name(ref)
        if "." in name or name not in slot:
            continue
        value = evaluate(AttrRef(name), job, slot)
        found.setdefault(
            fold(name),
            AttributeValue(f"TARGET.{name}", unparse(value, old=True), _SLOT_UNITS.get(fold(name))),
        )
    return tuple(sorted(found.values(), key=lambda a: a.name.lower()))


def _blocker(table: ClauseTable, job: ClassAd, slots: Sequence[ClassAd]) -> str | None:
    """Plain words for the first shown clause that no slot passes."""
    for clause in table.clauses:
        shown = table.shown(clause) and not clause.logic and clause.counted
        if shown and table.total(clause) == 0:
            return explain_blocker(clause.expr, clause.text, job, slots)
    for clause in table.clauses:  # a constant false clause
        if table.shown(clause) and clause.constant and not clause.value:
            return f"the condition {clause.text} is never true"
    return None


@with_paused_gc  # many slot ads, no cycles: see cedar.analysis.gcpause
def analyze_job(
    job: ClassAd,
    slots: Sequence[ClassAd],
    *,
    analyze_summary: ClassAd | None = None,
    priorities: Mapping[str, float] | None = None,
    schedd_ad: ClassAd | None = None,
    preemption_requirements: str | None = None,
    uid_domain: str | None = None,
    single_slot: bool | None = None,
    detail: bool = True,
    now: int | None = None,
) -> JobAnalysis:
    """Analyse why ``job`` does (not) match ``slots``.

    Args:
        job: the whole job ad (``Projection = ""``).
        slots: the slot ads (static, partitionable and dynamic, as the collector sent them).
        analyze_summary: the ``Analyze`` sub-ad of the schedd's query summary (spec 08 §6.2).
        priorities: submitter name -> priority (GET_PRIORITY), for the priority mode.
        schedd_ad: the schedd's own ad, for local and scheduler universe jobs.
        preemption_requirements: the tool's ``PREEMPTION_REQUIREMENTS`` (default false).
        uid_domain: appended to a ``User`` without ``@`` to find the submitter.
        single_slot: show the slot's attributes (``-machine``); default: exactly one slot.
        detail: compute histograms and suggestions (costs one evaluation per slot and name).
        now: the clock for the cool-down test (default: the job's ``ServerTime``, then now).

    Returns:
        The :class:`JobAnalysis`.

    Raises:
        InvalidArgument: the job ad has no ``ClusterId``/``ProcId``.
    """
    cluster, proc = _int(job, "ClusterId"), _int(job, "ProcId")
    if cluster is None or proc is None:
        raise InvalidArgument("the job ad has no ClusterId/ProcId")
    requirements = job.get_expr("Requirements") or Literal(True)
    state = job_state(job, now)
    universe = _int(job, "JobUniverse")
    table = ClauseTable(job, requirements)
    counts, targets, overlays, priority, submitter = _classify(
        job, table, slots, priorities, preemption_requirements, uid_domain
    )
    table.count(targets, overlays)
    clauses = clause_results(table, job, targets, detail)
    schedd_attribute = LOCAL_UNIVERSES.get(universe or 0)
    schedd_policy = None
    if schedd_attribute is not None:
        # observed: the slots are not counted; the summary shows one "slot" on no machine
        counts = SlotCounts(1, 0, 0, 0, 0, 0, 0, 0, 0, job_matches=1, both_match=0, running=0)
        schedd_policy = "no ad"
        if schedd_ad is not None:
            value = schedd_ad.eval(schedd_attribute, job)
            schedd_policy = str(value).lower() if isinstance(value, bool) else "failed"
    one = len(slots) == 1 if single_slot is None else single_slot
    slot_name = _str(slots[0], "Name") if one and slots else None
    explanation = explain(
        counts, state, _blocker(table, job, targets), schedd_attribute, schedd_policy
    )
    return JobAnalysis(
        job_id=f"{cluster}.{proc}",
        cluster=cluster,
        proc=proc,
        owner=_str(job, "Owner"),
        user=_str(job, "User"),
        status=_int(job, "JobStatus"),
        universe=universe,
        state=state,
        requirements=analysis_text(requirements),
        clauses=clauses,
        job_attributes=_job_attributes(job, requirements),
        counts=counts,
        history=_history(job, analyze_summary),
        explanation=explanation,
        single_slot=slot_name,
        slot_attributes=_slot_attributes(job, slots[0], requirements) if slot_name else (),
        drained_columns=bool(overlays),
        submitter=submitter,
        priority=priority,
        nice_user=_flag(job, "NiceUser"),
        schedd_attribute=schedd_attribute,
        schedd_policy=schedd_policy,
    )


__all__ = [
    "LOCAL_UNIVERSES",
    "analyze_job",
    "clause_results",
    "drained_overlay",
    "job_state",
    "slot_order_key",
    "submitter_name",
]
