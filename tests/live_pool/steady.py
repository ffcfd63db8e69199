"""Comparing cedar's output with a real tool's on a pool that keeps moving.

The real pool re-advertises every few seconds (``UPDATE_INTERVAL = 5``: slot ``LastHeardFrom``,
``MyCurrentTime``, duty cycles) and negotiates every few seconds (an idle job's
``LastRejMatchTime`` moves each cycle), so two runs a second apart may differ without a bug,
and more often on a loaded machine where each run takes longer. :func:`agree` brackets our run
between two runs of the reference: a correct answer equals the reference taken just before or
just after it unless the pool moved in both gaps, and that is retried a few times. A real
difference is the same on every attempt and still fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: How many brackets are tried before the difference counts (each costs three runs).
ATTEMPTS = 5


def agree(ours: Callable[[], T], theirs: Callable[[], T], attempts: int = ATTEMPTS) -> tuple[T, T]:
    """``(ours, theirs)``: equal when our result matched a reference run next to it, else the
    last attempt's (for the assertion's diff)."""
    mine, reference = ours(), theirs()
    for _ in range(attempts - 1):
        if mine == reference:
            break
        before = reference
        mine = ours()
        reference = theirs()
        if mine == before:
            reference = before
            break
    return mine, reference
