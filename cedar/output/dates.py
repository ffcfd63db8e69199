"""The date and time formats the condor tools print, one function per format, all in local
time (the tools print ``localtime()``; a test fixes ``TZ`` and passes the instant).

Observed on 25.13.2 (condor_q, condor_history, condor_status under ``TZ=`` and ``faketime``,
crafted ``QDate``/``EnteredCurrentStatus``/``CompletionDate``; see ``docs/dates.md``):

- :func:`short_date` -- every table column (SUBMITTED, HELD_SINCE, COMPLETED, LastCycleEnd):
  month right-aligned and day left-aligned in two columns, ``12/7  18:40``, `` 1/1  00:00``,
  ``12/17 18:40``; never zero-padded (``12/07`` is wrong).
- :func:`banner_date` -- the ``-- Schedd: ... @`` and ``-- Jobads: ... @`` banners:
  zero-padded ``12/07/26 18:40:05``.
- :func:`ctime` -- C ``ctime()`` without its newline (-better-analyze's match times):
  ``Mon Dec  7 18:40:05 2026``, the day space-padded.
"""

from __future__ import annotations

import time

__all__ = ["banner_date", "ctime", "short_date"]


def short_date(stamp: float) -> str:
    """``M/D HH:MM`` in 11 columns as the tables print it: ``12/7  18:40``, `` 1/1  00:00``."""
    t = time.localtime(int(stamp))
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"


def banner_date(stamp: float | None = None) -> str:
    """``MM/DD/YY HH:MM:SS`` (zero-padded) of a banner; ``None`` is now."""
    return time.strftime("%m/%d/%y %H:%M:%S", time.localtime(stamp))


def ctime(stamp: float) -> str:
    """C ``ctime()`` without the newline: ``Mon Dec  7 18:40:05 2026``."""
    t = time.localtime(int(stamp))
    return time.strftime("%a %b ", t) + f"{t.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", t)
