"""Why a job does or does not match the pool's slots (a thin analysis for ``analyze_job_match``).

Each top-level ``&&`` part of the job's ``Requirements`` is evaluated against every slot ad; a
part no slot satisfies is the explanation, and for the resource requests (memory, CPUs, disk)
the largest value a slot offers is the request that would fit.  The match-analysis library
(``cedar.analysis``, branch ``analysis``) replaces this once it lands; the result's shape stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cedar.classad_wire import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import Binary, Expr, Paren
from cedar.classad_wire.unparse import unparse
from cedar.errors import CedarError

#: (job request, slot attribute, unit) for the resources a request can be too large for.
RESOURCES = (
    ("RequestMemory", "Memory", "MiB"),
    ("RequestCpus", "Cpus", "cores"),
    ("RequestDisk", "Disk", "KiB"),
)


@dataclass
class Analysis:
    """The outcome: per-clause slot counts, sentences, and requests that would fit."""

    slots_total: int
    slots_matching: int
    clauses: list[tuple[str, int]]
    explanation: list[str]
    suggestions: list[tuple[str, str, str]] = field(default_factory=list)


def conjuncts(expr: Expr) -> list[Expr]:
    """The top-level ``&&`` parts of ``expr`` (parentheses around a part are looked through)."""
    while isinstance(expr, Paren):
        expr = expr.inner
    if isinstance(expr, Binary) and expr.op == "&&":
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def _holds(expr: Expr, my: ClassAd, target: ClassAd) -> bool:
    try:
        return evaluate(expr, my, target) is True
    except CedarError:
        return False


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def analyze(job: ClassAd, slots: list[ClassAd]) -> Analysis:
    """Match ``job`` against ``slots`` both ways and say what stands in the way."""
    requirements = job.get_expr("Requirements")
    parts = conjuncts(requirements) if requirements is not None else []
    clauses = [(unparse(part), sum(_holds(part, job, slot) for slot in slots)) for part in parts]
    job_ok = [requirements is None or _holds(requirements, job, slot) for slot in slots]
    slot_ok = [
        slot.get_expr("Requirements") is None or _holds(slot.lookup("Requirements"), slot, job)
        for slot in slots
    ]
    matching = sum(1 for a, b in zip(job_ok, slot_ok, strict=True) if a and b)
    explanation: list[str] = []
    suggestions: list[tuple[str, str, str]] = []
    if not slots:
        explanation.append("the collector knows no slots: no machine is in the pool")
    for text, count in clauses:
        if count == 0 and slots:
            explanation.append(f"no slot satisfies {text}")
    for request, offer, unit in RESOURCES:
        asked = _number(job.eval(request))
        offers = [v for v in (_number(slot.eval(offer)) for slot in slots) if v is not None]
        if asked is None or not offers:
            continue
        largest = max(offers)
        if asked > largest:
            explanation.append(
                f"the job asks for {request} = {asked:g} {unit}; the largest slot offers "
                f"{offer} = {largest:g} {unit}"
            )
            suggestions.append(
                (request, f"{int(largest)}", f"the largest {offer} a slot offers ({unit})")
            )
    if slots and matching == 0 and not explanation:
        rejected = sum(1 for ok in slot_ok if not ok)
        explanation.append(f"{rejected} slot(s) refuse the job by their own requirements")
    if matching:
        explanation.append(f"{matching} slot(s) can run the job")
    return Analysis(len(slots), matching, clauses, explanation, suggestions)


def analysis_text(job_id: str, result: Analysis) -> str:
    """The analysis as condor_q -better-analyze style text."""
    lines = [
        f"Job {job_id}: {result.slots_matching} of {result.slots_total} slots match.",
        "",
        "Slots  Requirement",
    ]
    lines += [f"{count:5d}  {text}" for text, count in result.clauses]
    lines.append("")
    lines += result.explanation
    lines += [f"suggestion: {a} = {v} ({why})" for a, v, why in result.suggestions]
    return "\n".join(lines)
