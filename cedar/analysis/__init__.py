"""Match analysis ("why is my job idle"): ``condor_q -analyze``/``-better-analyze`` as a library.

:func:`analyze_job` (one job against slot ads), :func:`analyze_slot` (reverse: one slot against
jobs) and :func:`summarize` (one row per autocluster) are pure; they return frozen dataclasses
(:mod:`cedar.analysis.model`) with ``to_json()``.  :mod:`cedar.analysis.text` renders the
reference's text from them; :mod:`cedar.analysis.fetch` gets the ads with cedar's clients.
"""

from cedar.analysis.job import analyze_job
from cedar.analysis.model import (
    AttributeValue,
    ClauseResult,
    Histogram,
    JobAnalysis,
    MatchHistory,
    SlotAnalysis,
    SlotCounts,
    Suggestion,
    SummaryRow,
    ValueCount,
)

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
    "analyze_job",
]
