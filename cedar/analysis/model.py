"""The structured result of a match analysis: frozen dataclasses with a plain-JSON ``to_json``.

This is what ``cedar q -better-analyze --json``, ``cedar serve``, the MCP tool and the web page
show; the condor_q text (:mod:`cedar.analysis.text`) is rendered from the same objects.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


class _Json:
    def to_json(self) -> dict[str, Any]:
        """Plain JSON (dicts, lists, str, int, float, bool, None)."""
        result = _plain(self)
        assert isinstance(result, dict)
        return result


@dataclass(frozen=True)
class ValueCount(_Json):
    """One bin of a histogram: a slot value (JSON form) and how many slots have it."""

    value: Any
    slots: int


@dataclass(frozen=True)
class Histogram(_Json):
    """The values one clause tests on the slots (most common first; ``other`` = the rest)."""

    attribute: str
    bins: tuple[ValueCount, ...]
    other: int = 0


@dataclass(frozen=True)
class Suggestion(_Json):
    """A request that would make the clause match ``slots`` more slots than now."""

    attribute: str
    value: int | float
    slots: int
    text: str


@dataclass(frozen=True)
class ClauseResult(_Json):
    """One numbered clause of the Requirements expression.

    ``matched`` is the number of slots (targets) the clause is true for; ``matched_if_drained``
    counts the drained overlays of partitionable slots (``None`` without any); ``constant`` is
    ``always``/``never`` (``now``/``not now``) for clauses that do not depend on the slot.
    ``shown`` says whether the pruned table (the one condor_q prints) keeps it.
    """

    step: int
    text: str
    label: str
    kind: str  # "condition", "and", "or"
    operands: tuple[int, ...]
    shown: bool
    matched: int | None
    matched_if_drained: int | None
    constant: str | None
    histograms: tuple[Histogram, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()


@dataclass(frozen=True)
class AttributeValue(_Json):
    """An attribute the analysis shows: name, value as printed, and unit (``mb``/``kb``)."""

    name: str
    value: str
    unit: str | None = None


@dataclass(frozen=True)
class SlotCounts(_Json):
    """The per-slot classification (the "Run analysis summary" numbers, spec 08 §7.1)."""

    slots: int
    machines: int
    rejected_by_job: int
    rejecting_job: int
    running_yours: int
    serving_others: int
    offline: int
    available_now: int
    available_if_drained: int
    job_matches: int
    both_match: int
    running: int
    #: priority mode only: busy slots whose user has a better priority / that will not preempt
    better_priority: int = 0
    will_not_preempt: int = 0


@dataclass(frozen=True)
class MatchHistory(_Json):
    """What the schedd knows about past negotiation for this job and its autocluster."""

    last_match_time: int | None = None
    last_rejection_time: int | None = None
    last_rejection_reason: str | None = None
    last_rejection_negotiator: str | None = None
    autocluster_id: int | None = None
    autocluster_last_match_time: int | None = None
    autocluster_last_rejection_time: int | None = None
    autocluster_last_rejection_reason: str | None = None
    autocluster_last_rejection_negotiator: str | None = None
    autocluster_running: int | None = None
    autocluster_completed: int | None = None
    autocluster_jobs: int | None = None
    autocluster_idle: int | None = None


@dataclass(frozen=True)
class JobAnalysis(_Json):
    """Why a job does (not) run: everything ``condor_q -better-analyze`` computes, and more."""

    job_id: str
    cluster: int
    proc: int
    owner: str | None
    user: str | None
    status: int | None
    universe: int | None
    state: str | None  # "Job is held.\n\nHold reason: ..." as the reference words it
    requirements: str
    clauses: tuple[ClauseResult, ...]
    job_attributes: tuple[AttributeValue, ...]
    counts: SlotCounts
    history: MatchHistory
    explanation: str
    #: the slot's attributes the Requirements reference, when exactly one slot was analysed
    single_slot: str | None = None
    slot_attributes: tuple[AttributeValue, ...] = ()
    drained_columns: bool = False
    submitter: str | None = None
    priority: float | None = None
    nice_user: bool = False
    #: local/scheduler universe: the schedd attribute consulted and its value (None: no ad)
    schedd_attribute: str | None = None
    schedd_allows: bool | None = None

    @property
    def requirements_needed(self) -> bool:
        """Whether plain ``-analyze`` prints the Requirements part (some slot rejected by it)."""
        return self.counts.rejected_by_job > 0


@dataclass(frozen=True)
class SlotAnalysis(_Json):
    """Reverse analysis: a slot's Requirements against the jobs (one per autocluster)."""

    slot: str
    jobs: int
    autoclusters: int
    requirements: str
    expanded: tuple[AttributeValue, ...]  # START, WithinResourceLimits as written
    clauses: tuple[ClauseResult, ...]
    slot_attributes: tuple[AttributeValue, ...]
    job_id: str | None
    job_attributes: tuple[AttributeValue, ...]
    both_match: int
    slot_matches: int
    job_matches: int
    explanation: str


@dataclass(frozen=True)
class SummaryRow(_Json):
    """One row of ``-better-analyze:summary`` (one autocluster, or one job without one)."""

    job_id: str
    members: int
    idle: int
    matches_requirements: int
    rejected_by_slots: int
    running: int
    running_yours: int
    serving_others: int
    available: int
    owner: str | None


__all__ = [
    "AttributeValue",
    "ClauseResult",
    "Histogram",
    "JobAnalysis",
    "MatchHistory",
    "SlotAnalysis",
    "SlotCounts",
    "Suggestion",
    "SummaryRow",
    "ValueCount",
]
