"""Reverse analysis (one slot's Requirements against the jobs) and the per-autocluster summary
of ``-better-analyze:summary`` (spec 08 §7.5), pure."""

from __future__ import annotations

from collections.abc import Sequence

from cedar.analysis.clauses import ClauseTable, analysis_text
from cedar.analysis.detail import matches, target_name
from cedar.analysis.job import analyze_job, clause_results
from cedar.analysis.model import AttributeValue, SlotAnalysis, SummaryRow
from cedar.classad_wire.analysis import external_refs, internal_refs
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import (
    AttrRef,
    Binary,
    Call,
    Elvis,
    Expr,
    Literal,
    Paren,
    Select,
    Subscript,
    Ternary,
    Unary,
    fold,
)
from cedar.classad_wire.unparse import unparse

#: The slot attributes the reverse analysis expands in place, as it names them.
EXPANDED = ("START", "WithinResourceLimits")


def _expand(slot: ClassAd, expr: Expr) -> Expr:
    """``expr`` with ``START``/``WithinResourceLimits`` replaced by their (parenthesised) text."""
    inline = {}
    for name in EXPANDED:
        found = slot.get_expr(name)
        if found is not None and not isinstance(found, Literal):
            inline[fold(name)] = Paren(found)

    def walk(node: Expr) -> Expr:
        if isinstance(node, AttrRef) and not node.absolute and fold(node.name) in inline:
            return inline[fold(node.name)]
        children = node.children()
        if not children:
            return node
        rebuilt = tuple(walk(c) for c in children)
        if all(a is b for a, b in zip(rebuilt, children, strict=True)):
            return node
        return _rebuild(node, rebuilt)

    return walk(expr)


def _rebuild(node: Expr, children: tuple[Expr, ...]) -> Expr:
    if isinstance(node, Binary):
        return Binary(node.op, *children)
    if isinstance(node, Unary):
        return Unary(node.op, children[0])
    if isinstance(node, Paren):
        return Paren(children[0])
    if isinstance(node, Ternary):
        return Ternary(*children)
    if isinstance(node, Elvis):
        return Elvis(*children)
    if isinstance(node, Call):
        return Call(node.name, children)
    if isinstance(node, Select):
        return Select(children[0], node.name)
    if isinstance(node, Subscript):
        return Subscript(*children)
    return node  # lists and records are not expanded into


def slot_expressions(slot: ClassAd) -> list[tuple[str, str]]:
    """``(name, text)`` of the expanded attributes the slot defines, for the reverse text."""
    found = []
    for name in EXPANDED:
        expr = slot.get_expr(name)
        if expr is not None:
            found.append((name, analysis_text(expr)))
    return found


def _job_id(job: ClassAd) -> str:
    return f"{job.get('ClusterId')}.{job.get('ProcId')}"


def analyze_slot(slot: ClassAd, jobs: Sequence[ClassAd], detail: bool = True) -> SlotAnalysis:
    """The slot's Requirements (slot MY, each job TARGET), one job per autocluster."""
    chosen = one_per_autocluster(jobs)
    requirements = slot.get_expr("Requirements") or Literal(True)
    expanded = _expand(slot, requirements)
    table = ClauseTable(slot, expanded)
    table.count(chosen)
    hidden = {fold(n) for n in (*EXPANDED, "Requirements")}
    slot_attributes = tuple(
        AttributeValue(name, analysis_text(slot.lookup(name)))
        for name in sorted(internal_refs(slot, expanded), key=str.lower)
        if fold(name) not in hidden
    )
    job_attributes: tuple[AttributeValue, ...] = ()
    if len(chosen) == 1:
        values: dict[str, AttributeValue] = {}
        for ref in external_refs(slot, expanded):
            name = target_name(ref)
            if name == ref or "." in name or name not in chosen[0]:
                continue
            value = evaluate(AttrRef(name), chosen[0], slot)
            values.setdefault(fold(name), AttributeValue(f"TARGET.{name}", unparse(value, True)))
        job_attributes = tuple(sorted(values.values(), key=lambda a: a.name.lower()))
    slot_ok = sum(1 for job in chosen if matches(slot, job))
    job_ok = sum(1 for job in chosen if matches(job, slot))
    both = sum(1 for job in chosen if matches(slot, job) and matches(job, slot))
    name = str(slot.get("Name") or "?")
    if not chosen:
        explanation = f"There are no jobs to match {name} against."
    elif both:
        explanation = f"{name} and {both} of {len(chosen)} job(s) match each other."
    elif slot_ok:
        explanation = f"{name} accepts {slot_ok} job(s), but their own requirements reject it."
    else:
        explanation = f"{name} rejects all {len(chosen)} job(s) by its own requirements."
    return SlotAnalysis(
        slot=name,
        jobs=len(chosen),
        autoclusters=len({j.get("AutoClusterId", id(j)) for j in chosen}),
        requirements=analysis_text(requirements),
        expanded=tuple(AttributeValue(n, t) for n, t in slot_expressions(slot)),
        clauses=clause_results(table, slot, chosen, detail),
        slot_attributes=slot_attributes,
        job_id=_job_id(chosen[0]) if len(chosen) == 1 else None,
        job_attributes=job_attributes,
        both_match=both,
        slot_matches=slot_ok,
        job_matches=job_ok,
        explanation=explanation,
    )


def _key(job: ClassAd) -> tuple[int, int]:
    cluster, proc = job.get("ClusterId"), job.get("ProcId")
    return (
        cluster if isinstance(cluster, int) else 0,
        proc if isinstance(proc, int) else 0,
    )


def one_per_autocluster(jobs: Sequence[ClassAd]) -> list[ClassAd]:
    """The lowest job id of each autocluster (jobs without one stand alone), by autocluster."""
    groups: dict[object, list[ClassAd]] = {}
    for job in jobs:
        ac = job.get("AutoClusterId")
        groups.setdefault(ac if isinstance(ac, int) else ("job", _key(job)), []).append(job)
    ordered = sorted(
        groups.items(),
        key=lambda kv: (
            not isinstance(kv[0], int),
            kv[0] if isinstance(kv[0], int) else 0,
            _key(kv[1][0]),
        ),
    )
    return [min(members, key=_key) for _, members in ordered]


def summarize(
    jobs: Sequence[ClassAd], slots: Sequence[ClassAd], analyze: ClassAd | None = None
) -> list[SummaryRow]:
    """``-better-analyze:summary``: one row per autocluster, for its lowest job id."""
    groups: dict[object, list[ClassAd]] = {}
    for job in jobs:
        ac = job.get("AutoClusterId")
        groups.setdefault(ac if isinstance(ac, int) else ("job", _key(job)), []).append(job)
    rows = []
    for first in one_per_autocluster(jobs):
        ac = first.get("AutoClusterId")
        members = groups[ac if isinstance(ac, int) else ("job", _key(first))]
        result = analyze_job(first, slots, analyze_summary=analyze, detail=False)
        c = result.counts
        rows.append(
            SummaryRow(
                job_id=_job_id(first),
                members=len(members),
                idle=sum(1 for j in members if j.get("JobStatus") == 1),
                matches_requirements=0 if result.schedd_attribute else c.slots - c.rejected_by_job,
                rejected_by_slots=c.rejecting_job,
                running=sum(1 for j in members if j.get("JobStatus") == 2),
                running_yours=c.running_yours,
                serving_others=c.serving_others,
                available=c.available_now,
                owner=result.owner,
            )
        )
    return rows


__all__ = ["EXPANDED", "analyze_slot", "one_per_autocluster", "slot_expressions", "summarize"]
