"""The old ``htcondor`` module (removed from the 25.x wheel) on cedar, as far as real programs
use it: everything of :mod:`cedar.compat.htcondor2` plus ``Schedd.transaction()``,
``Submit.queue(txn, count)``, ``Schedd.xquery``, iterator-returning ``history``, and the
``HTCondor*Error`` classes.

Known difference: a ``transaction()`` block does not hold one schedd transaction open across
Python statements.  Each ``Submit.queue(txn)`` is its own atomic submit (so it can return the
cluster id at once, as programs expect); when the block raises, the clusters queued in it are
removed again, which leaves the queue as an aborted transaction would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType

from cedar.compat import htcondor2 as _h2
from cedar.compat.classad2 import ClassAd, ExprTree
from cedar.compat.errors import (
    HTCondorEnumError,
    HTCondorException,
    HTCondorInternalError,
    HTCondorIOError,
    HTCondorLocateError,
    HTCondorReplyError,
    HTCondorTypeError,
    HTCondorValueError,
)
from cedar.compat.htcondor2 import *  # noqa: F403
from cedar.compat.htcondor2 import __all__ as _h2_all

VacateTypes = _h2.VacateType


class Transaction:
    """What ``Schedd.transaction()`` yields; ``Submit.queue(txn)`` submits through it."""

    def __init__(self, schedd: Schedd) -> None:
        self._schedd = schedd
        self.clusters: list[int] = []

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is not None and self.clusters:
            with contextlib.suppress(HTCondorException):
                spec = [str(cluster) for cluster in self.clusters]  # the one job-id grammar
                self._schedd.act(_h2.JobAction.Remove, spec, "transaction aborted")


class Schedd(_h2.Schedd):  # type: ignore[no-redef]
    """``htcondor.Schedd`` with the pre-10 methods programs still call."""

    def transaction(self, flags: int = 0, continue_txn: bool = False) -> Transaction:
        """A context for ``Submit.queue(txn)`` calls (see the module docstring)."""
        return Transaction(self)

    def xquery(
        self,
        constraint: str | ExprTree = "true",
        projection: list[str] | None = None,
        limit: int = -1,
        opts: int = 0,
        name: str | None = None,
        *,
        requirements: str | ExprTree | None = None,
    ) -> Iterator[ClassAd]:
        """An iterator over matching job ads (``requirements=`` is the old keyword)."""
        if requirements is not None:
            constraint = requirements
        return self._query_iter(constraint, projection, limit, opts)

    def history(  # type: ignore[override]
        self,
        constraint: str | ExprTree | None = None,
        projection: list[str] | None = None,
        match: int = -1,
        since: int | str | ExprTree | None = None,
    ) -> Iterator[ClassAd]:
        """Completed jobs, newest first, as an iterator."""
        return iter(super().history(constraint, projection, match, since))


class Submit(_h2.Submit):  # type: ignore[no-redef]
    """``htcondor.Submit`` with the pre-10 ``queue(txn, count)``."""

    def queue(
        self, txn: Transaction, count: int = 0, ad_results: list[ClassAd] | None = None
    ) -> int:
        """Submit ``count`` jobs (the description's own count when 0); the cluster id."""
        result = txn._schedd.submit(self, count=count)
        txn.clusters.append(result.cluster())
        if ad_results is not None:
            ad_results.append(result.clusterad())
        return result.cluster()

    def queue_with_itemdata(
        self, txn: Transaction, count: int = 1, itemdata: Iterator[object] | None = None
    ) -> _h2.SubmitResult:
        """Submit with item data; the result."""
        result = txn._schedd.submit(self, count=count, itemdata=itemdata)  # type: ignore[arg-type]
        txn.clusters.append(result.cluster())
        return result


__all__ = [
    *_h2_all,
    "HTCondorEnumError",
    "HTCondorIOError",
    "HTCondorInternalError",
    "HTCondorLocateError",
    "HTCondorReplyError",
    "HTCondorTypeError",
    "HTCondorValueError",
    "Transaction",
    "VacateTypes",
]
