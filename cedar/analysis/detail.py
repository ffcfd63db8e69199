"""What the library adds to the reference's analysis: value histograms, "ask for less"
suggestions and a one-sentence explanation in plain words.  Pure functions of ads and counts.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from cedar.analysis.clauses import truthy
from cedar.analysis.model import Histogram, SlotCounts, Suggestion, ValueCount
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import AttrRef, Binary, Expr, Select, fold
from cedar.classad_wire.jsonfmt import ad_to_json
from cedar.classad_wire.values import UndefinedType

#: Bins kept per histogram; the rest is summed in ``other``.
MAX_BINS = 12
MAX_SUGGESTIONS = 3
_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}
#: Units of the machine attributes a request is compared with (HTCondor's conventions).
_UNITS = {"memory": "MB", "disk": "KB", "requestmemory": "MB", "requestdisk": "KB"}
_WORDS = {"memory": "memory", "disk": "disk space", "cpus": "CPUs", "gpus": "GPUs"}


def json_value(value: Any) -> Any:
    """A ClassAd value as plain JSON, through the one ClassAd<->JSON mapping."""
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, UndefinedType):
        return None
    try:
        ad = ClassAd()
        ad["v"] = value
        return json.loads(ad_to_json(ad))["v"]
    except (TypeError, ValueError):
        return str(value)


def target_name(ref: str) -> str:
    """``TARGET.Memory`` -> ``Memory``; a bare name stays."""
    head, dot, tail = ref.partition(".")
    return tail if dot and fold(head) in ("target", "other") else ref


def histogram(attribute: str, slots: Sequence[ClassAd], job: ClassAd) -> Histogram:
    """How many slots have each value of ``attribute`` (evaluated in the slot, job as TARGET)."""
    counter: Counter[tuple[str, str]] = Counter()
    sample: dict[tuple[str, str], Any] = {}
    for slot in slots:
        value = slot.eval(attribute, job)
        key = (type(value).__name__, repr(value))
        counter[key] += 1
        sample.setdefault(key, value)
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    bins = tuple(ValueCount(json_value(sample[key]), n) for key, n in ranked[:MAX_BINS])
    return Histogram(attribute, bins, sum(n for _, n in ranked[MAX_BINS:]))


def _job_attribute(node: Expr, job: ClassAd) -> str | None:
    if isinstance(node, AttrRef) and not node.absolute and job.get_expr(node.name) is not None:
        return node.name
    if (
        isinstance(node, Select)
        and isinstance(node.base, AttrRef)
        and fold(node.base.name) == "my"
        and job.get_expr(node.name) is not None
    ):
        return node.name
    return None


def _target_attribute(node: Expr, job: ClassAd) -> str | None:
    if (
        isinstance(node, Select)
        and isinstance(node.base, AttrRef)
        and fold(node.base.name) in ("target", "other")
    ):
        return node.name
    if isinstance(node, AttrRef) and not node.absolute and job.get_expr(node.name) is None:
        return node.name
    return None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def resource_shape(expr: Expr, job: ClassAd) -> tuple[str, str, str] | None:
    """``(slot attribute, op, job attribute)`` for ``TARGET.X >= MY.RequestX`` and its mirror
    images, normalised so that the slot side is on the left; None for other shapes."""
    if not isinstance(expr, Binary) or expr.op not in _FLIP:
        return None
    left_t, right_j = _target_attribute(expr.left, job), _job_attribute(expr.right, job)
    if left_t and right_j:
        return left_t, expr.op, right_j
    left_j, right_t = _job_attribute(expr.left, job), _target_attribute(expr.right, job)
    if left_j and right_t:
        return right_t, _FLIP[expr.op], left_j
    return None


def suggestions(expr: Expr, job: ClassAd, slots: Sequence[ClassAd]) -> tuple[Suggestion, ...]:
    """For ``slot.X >= job.RequestX``: the largest requests that would match more slots."""
    shape = resource_shape(expr, job)
    if shape is None or not slots:
        return ()
    slot_attr, op, job_attr = shape
    if op not in (">=", ">"):  # the job asks for at most something: lowering does not help
        return ()
    request = _number(job.eval(job_attr))
    if request is None:
        return ()
    values = [_number(slot.eval(slot_attr, job)) for slot in slots]
    have = [v for v in values if v is not None]
    strict = op == ">"

    def fits(value: float, asked: float) -> bool:
        return value > asked if strict else value >= asked

    now = sum(1 for v in have if fits(v, request))
    found: list[Suggestion] = []
    for candidate in sorted({v for v in have if not fits(v, request)}, reverse=True):
        asked: float | int = candidate
        if strict:
            if not isinstance(candidate, int):
                break
            asked = candidate - 1
        more = sum(1 for v in have if fits(v, asked)) - now
        if more <= 0:
            continue
        plural = "slot" if more == 1 else "slots"
        extra = " more" if now else ""
        text = f"lower {job_attr} to {_plain_number(asked)} to match {more}{extra} {plural}"
        found.append(Suggestion(job_attr, asked, more, text))
        if len(found) >= MAX_SUGGESTIONS:
            break
    return tuple(found)


def _plain_number(value: float | int) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def amount(value: float | int, unit: str | None) -> str:
    """A resource amount for people: ``10 GB``, ``1.75 GB``, ``512 MB``."""
    if unit is None:
        return _plain_number(value)
    scale = ["KB", "MB", "GB", "TB", "PB"]
    step = scale.index(unit)
    while abs(value) >= 1024 and step < len(scale) - 1:
        value /= 1024
        step += 1
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text} {scale[step]}"


def explain_blocker(expr: Expr, text: str, job: ClassAd, slots: Sequence[ClassAd]) -> str:
    """Why no slot passes one clause, in plain words."""
    n = len(slots)
    every = "the only slot" if n == 1 else f"all {n} slots"
    shape = resource_shape(expr, job)
    if shape is not None and shape[1] in (">=", ">"):
        slot_attr, _, job_attr = shape
        request = _number(job.eval(job_attr))
        values = [v for v in (_number(s.eval(slot_attr, job)) for s in slots) if v is not None]
        if request is not None and values:
            unit = _UNITS.get(fold(slot_attr)) or _UNITS.get(fold(job_attr))
            word = _WORDS.get(fold(slot_attr), slot_attr)
            verb = "has" if n == 1 else "have"
            best = "it has" if n == 1 else "the largest has"
            return (
                f"{every} {verb} less {word} than the {amount(request, unit)} you asked for "
                f"({job_attr}); {best} {amount(max(values), unit)}"
            )
    return f"none of the {n} slots satisfies {text}" if n != 1 else f"the slot fails {text}"


def explain(
    counts: SlotCounts,
    state: str | None,
    blocker: str | None,
    schedd_attribute: str | None = None,
    schedd_allows: bool | None = None,
) -> str:
    """One sentence (or two) saying why the job is (not) running."""
    text = _explain(counts, state, blocker, schedd_attribute, schedd_allows)
    return text[:1].upper() + text[1:]


def _explain(
    counts: SlotCounts,
    state: str | None,
    blocker: str | None,
    schedd_attribute: str | None,
    schedd_allows: bool | None,
) -> str:
    prefix = ""
    if state:
        first = state.split("\n\n")[0].rstrip(".")
        reason = state.split("Hold reason: ", 1)[1] if "Hold reason: " in state else ""
        prefix = f"{first}{' (' + reason + ')' if reason else ''}. "
        if first == "Job is running":
            return "The job is running."
    if schedd_attribute is not None:
        if schedd_allows is None:
            return prefix + "No schedd ad was available to check whether it may start the job."
        verdict = "allows" if schedd_allows else "does not allow"
        return prefix + f"The schedd's {schedd_attribute} {verdict} this job."
    if counts.slots == 0:
        return prefix + "There are no slots in the pool to match against."
    if counts.job_matches == 0:
        return prefix + (blocker or "No slot satisfies the job's requirements") + "."
    if counts.both_match == 0:
        return prefix + (
            f"{counts.job_matches} slot(s) satisfy your requirements, but all of them reject "
            "the job by their own requirements (START or resource limits)."
        )
    usable = counts.available_now + counts.available_if_drained
    if usable:
        now = f"{counts.available_now} slot(s) can run it now" if counts.available_now else ""
        drained = (
            f"{counts.available_if_drained} partitionable slot(s) could once drained"
            if counts.available_if_drained
            else ""
        )
        parts = " and ".join(p for p in (now, drained) if p)
        return prefix + f"{parts}; it should start at a coming negotiation cycle."
    busy = []
    if counts.running_yours:
        busy.append(f"{counts.running_yours} run your other jobs")
    if counts.serving_others:
        busy.append(f"{counts.serving_others} serve other users")
    if counts.offline:
        busy.append(f"{counts.offline} are offline")
    detail = ", ".join(busy) or "none is free"
    return prefix + f"{counts.both_match} slot(s) match, but all are busy: {detail}."


def matches(my: ClassAd, target: ClassAd) -> bool:
    """``my``'s Requirements holds with ``my`` as MY and ``target`` as TARGET."""
    expr = my.get_expr("Requirements")
    return expr is not None and truthy(evaluate(expr, my, target))


__all__ = [
    "amount",
    "explain",
    "explain_blocker",
    "histogram",
    "json_value",
    "resource_shape",
    "matches",
    "suggestions",
    "target_name",
]
