"""The mock schedd's job factories (late materialization, docs/late-materialization.md).

A factory cluster is committed with its cluster ad and digest but no proc; the schedd makes
procs from it while fewer than ``JobMaterializeLimit`` are in the queue and (with
``JobMaterializeMaxIdle``) fewer than that many are idle or held, as the real 25.13 schedd
was seen to do.  The cluster ad carries the factory attributes ``condor_q -factory`` shows; it
leaves the queue when every proc has been made and has left, or when the cluster is removed.
Holding the cluster itself pauses the factory, releasing it resumes it (:meth:`Factory.act`).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from cedar.classad_wire import ClassAd
from cedar.daemons.errors import QueueError
from cedar.numbers import JobAction
from cedar.submit_language import SubmitError, SubmitSettings
from cedar.submit_language.factory import digest_queue, materialize, parse_item_bytes

__all__ = [
    "MAX_FACTORY_PROCS",
    "MAX_ITEM_BYTES",
    "Factory",
    "PendingFactory",
    "digest_file",
    "items_file",
]

#: Item rows one SendMaterializeData may carry (bounded memory).
MAX_ITEM_BYTES = 16 * 1024 * 1024
#: The mock builds a factory's procs at commit (~0.3 ms each): it refuses larger factories.
MAX_FACTORY_PROCS = 10_000


def items_file(spool: str, cluster: int) -> str:
    """Where the real schedd keeps a cluster's items (named in the digest's queue line)."""
    return os.path.join(spool, str(cluster), f"condor_submit.{cluster}.items")


def digest_file(spool: str, cluster: int) -> str:
    """The cluster's ``JobMaterializeDigestFile``."""
    return os.path.join(spool, str(cluster), f"condor_submit.{cluster}.digest")


@dataclass
class PendingFactory:
    """What a transaction received for one cluster before its commit."""

    items: bytes | None = None
    items_path: str | None = None
    digest: str | None = None
    maximum: int = 0


@dataclass
class Factory:
    """A committed factory: its procs (made once, from the digest) and how many exist."""

    cluster: int
    limit: int
    max_idle: int | None
    procs: list[dict[str, str]] = field(default_factory=list)
    next_proc: int = 0
    items: int = 0
    #: Set when the cluster's procs were removed: no more procs are made.
    stopped: bool = False
    #: ``JobFactoryPaused``: 1 while the cluster is held (no procs are made), else 0.
    paused: int = 0
    #: ``JobMaterializePauseReason`` while paused (the hold's reason).
    pause_reason: str | None = None
    #: Whether it was ever paused: ``JobMaterializePaused`` exists from then on (0 after).
    ever_paused: bool = False

    @classmethod
    def build(cls, cluster: int, pending: PendingFactory, cluster_ad: dict[str, str]) -> Factory:
        """Check the digest and make every proc's own attributes; a bad digest is EINVAL."""
        if pending.digest is None:
            raise QueueError(errno.EINVAL, f"cluster {cluster} has items but no digest")
        try:
            count, names, path = digest_queue(pending.digest)
            rows = None
            if path is not None:
                if path != pending.items_path or pending.items is None:
                    raise SubmitError(f"the digest reads items from {path}, not sent")
                rows = parse_item_bytes(pending.items, len(names))
            if count * (len(rows) if rows is not None else 1) > MAX_FACTORY_PROCS:
                raise SubmitError(f"more than {MAX_FACTORY_PROCS} procs (the mock's limit)")
            procs = materialize(
                pending.digest, cluster_ad, cluster, rows, settings=SubmitSettings()
            )
        except SubmitError as exc:
            raise QueueError(errno.EINVAL, f"bad factory digest: {exc}") from None
        max_idle = None
        text = cluster_ad.get("JobMaterializeMaxIdle")
        if text is not None:
            try:
                max_idle = max(0, int(text))
            except ValueError:
                max_idle = None
        limit = min(pending.maximum, len(procs)) if pending.maximum > 0 else len(procs)
        return cls(cluster, limit, max_idle, procs, 0, len(rows) if rows else 0)

    @property
    def total(self) -> int:
        return len(self.procs)

    def act(self, action: JobAction, reason: str) -> None:
        """An action that named the cluster itself (its id, or a constraint its cluster ad
        matches; not one of its procs), as the real schedd answers it (25.13.2): removing ends
        the factory; holding pauses it (``JobFactoryPaused = JobMaterializePaused = 1``, the
        hold's reason in ``JobMaterializePauseReason``), releasing resumes it (both 0, the
        reason gone).  A paused factory makes no proc, not even for one removed meanwhile."""
        if action in (JobAction.Remove, JobAction.RemoveX):
            self.stopped = True
        elif action == JobAction.Hold:
            self.paused, self.pause_reason, self.ever_paused = 1, reason, True
        elif action == JobAction.Release:
            self.paused, self.pause_reason = 0, None

    def due(self, present: int, idle: int) -> int:
        """How many procs to make now, given the cluster's procs present and waiting (idle or
        held: the real schedd made no proc for a held one, 40 s observed; running ones do not
        count)."""
        if self.stopped or self.paused:
            return 0
        room = min(self.limit - present, self.total - self.next_proc)
        if self.max_idle is not None:
            room = min(room, self.max_idle - idle)
        return max(0, room)

    def cluster_attributes(self, ad: ClassAd, spool: str, counts: dict[str, int]) -> None:
        """The factory attributes of the cluster ad (as ``condor_q -factory -long`` shows)."""
        ad["JobFactoryId"] = self.cluster
        ad["JobFactoryPaused"] = self.paused
        if self.ever_paused:
            ad["JobMaterializePaused"] = self.paused
        if self.pause_reason is not None:
            ad["JobMaterializePauseReason"] = self.pause_reason
        else:
            ad.pop("JobMaterializePauseReason", None)
        ad["JobFactoryTotalProcs"] = self.total
        ad["JobFactoryItemCount"] = self.items
        ad["JobFactoryItemReaderDone"] = True
        ad["JobFactoryStepSize"] = self.total // self.items if self.items else self.total
        ad["JobMaterializeDigestFile"] = digest_file(spool, self.cluster)
        if self.items:
            ad["JobMaterializeItemsFile"] = items_file(spool, self.cluster)
            ad["JobMaterializeNextRow"] = self.next_proc
        ad["JobMaterializeLimit"] = self.limit
        ad["JobMaterializeNextProcId"] = self.next_proc
        ad["TotalSubmitProcs"] = self.total
        ad["ClusterSize"] = counts.get("present", 0)
        ad["JobsPresent"] = counts.get("present", 0)
        ad["JobsIdle"] = counts.get("idle", 0)
        ad["JobsRunning"] = counts.get("running", 0)
        ad["JobsHeld"] = counts.get("held", 0)
