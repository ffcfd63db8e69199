"""A mock schedd: an in-memory job queue behind the schedd's commands (spec 05 §3–§6).

:class:`JobQueue` is the pure part: jobs, transactions (atomic commit, abort on error or
disconnect), ownership checks, the job state machine and the history.  :class:`MockSchedd`
serves it: QUERY_JOB_ADS(_WITH_AUTH), QMGMT_WRITE_CMD, ACT_ON_JOBS, QUERY_SCHEDD_HISTORY and
RESCHEDULE.  Execution is simulated by :meth:`JobQueue.step`, called by a timer in the daemon
(or directly by tests, which must not depend on timing).
"""

from __future__ import annotations

import errno
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import trio

from cedar.auth.server_policy import ServerPolicy
from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import Expr, fold
from cedar.commands.numbers import Command, QmgmtCall
from cedar.commands.schedd import JobAction
from cedar.errors import CedarError, ClassAdError
from cedar.server.collector import QueryAnswer, is_match, write_answer
from cedar.server.daemon import CommandRequest, Daemon
from cedar.server.spool import (
    SpoolArea,
    commit_spooled,
    drop_cluster_hold,
    handle_spool,
    handle_transfer_data,
    leave_in_queue,
    simulate_output,
)
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger(__name__)


IDLE, RUNNING, REMOVED, COMPLETED, HELD, TRANSFERRING, SUSPENDED = 1, 2, 3, 4, 5, 6, 7
IMMUTABLE = {"clusterid", "procid", "owner", "user", "myjobs"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SPLIT = re.compile(r"[\s,]+")
#: Hard caps so a client cannot grow the queue without bound.
MAX_JOBS = 100_000
MAX_ATTRS_PER_JOB = 2_000
#: Attribute edits of existing jobs one transaction may hold before it is refused.
MAX_TXN_EDITS = 200_000

# ACT_ON_JOBS state filters (spec 05 §5.3) as predicates on (status, ad).
_ACTION_FILTER: dict[JobAction, Callable[[int, ClassAd], bool]] = {
    JobAction.Remove: lambda s, ad: s != REMOVED,
    JobAction.TransferAndRemove: lambda s, ad: s != REMOVED,
    JobAction.RemoveX: lambda s, ad: s == REMOVED,
    JobAction.Hold: lambda s, ad: s not in (REMOVED, COMPLETED),
    JobAction.Release: lambda s, ad: s == HELD,
    JobAction.Suspend: lambda s, ad: s in (RUNNING, TRANSFERRING),
    JobAction.Vacate: lambda s, ad: s in (RUNNING, TRANSFERRING),
    JobAction.VacateFast: lambda s, ad: s in (RUNNING, TRANSFERRING),
    JobAction.Continue: lambda s, ad: s == SUSPENDED,
}


class QueueError(Exception):
    """A refused queue operation; ``errno`` is what the schedd sends."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.errno = code


def owner_of(user: str | None) -> str | None:
    """``testuser@domain`` → ``testuser`` (the Owner attribute)."""
    return user.split("@", 1)[0] if user else None


def _set(ad: ClassAd, name: str, text: str) -> None:
    """Store expression text; an unparsable value becomes ``undefined`` (spec 05 §4.3)."""
    try:
        ad.set_expr(name, parse_expr(text, old=True))
    except ClassAdError:
        ad.set_expr(name, parse_expr("undefined"))


def _int(ad: ClassAd, name: str, default: int = 0) -> int:
    try:
        value = ad.get(name)
    except ClassAdError:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def matches(expr: Expr | None, ad: ClassAd) -> bool:
    """Whether a constraint is true (or a non-zero number) for ``ad``."""
    if expr is None:
        return True
    try:
        value = evaluate(expr, ad)
    except CedarError:
        return False
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value != 0


@dataclass
class Job:
    """One proc: its own attributes (the cluster ad holds the shared ones)."""

    cluster: int
    proc: int
    ad: ClassAd


@dataclass
class Transaction:
    """Uncommitted changes of one QMGMT connection, applied atomically by :meth:`commit`."""

    queue: JobQueue
    user: str | None
    new_clusters: dict[int, ClassAd] = field(default_factory=dict)
    new_jobs: dict[tuple[int, int], ClassAd] = field(default_factory=dict)
    edits: dict[tuple[int, int], dict[str, str | None]] = field(default_factory=dict)
    deferred: QueueError | None = None
    my_cluster: int | None = None
    edit_count: int = 0

    # --- reads through the overlay ---------------------------------------------------------

    def job_ad(self, cluster: int, proc: int) -> ClassAd | None:
        """The merged ad as this transaction sees it."""
        q = self.queue
        if proc < 0:
            base = self.new_clusters.get(cluster) or q.clusters.get(cluster)
            ad = base.copy() if base is not None else None
        else:
            ad = q.merged(cluster, proc)
            if ad is None and (cluster, proc) in self.new_jobs:
                ad = (self.new_clusters.get(cluster) or ClassAd()).copy()
                ad.update(self.new_jobs[(cluster, proc)])
                for name in self.new_jobs[(cluster, proc)]:
                    ad.set_expr(name, self.new_jobs[(cluster, proc)].lookup(name))
        if ad is None:
            return None
        for key in ((cluster, -1), (cluster, proc)):
            for name, text in self.edits.get(key, {}).items():
                if text is None:
                    ad.pop(name, None)
                else:
                    _set(ad, name, text)
        return ad

    # --- writes ------------------------------------------------------------------------------

    def new_cluster(self) -> int:
        with self.queue.lock:
            cluster = self.queue.next_cluster
            self.queue.next_cluster += 1
        previous = self.my_cluster
        if previous is not None and not any(c == previous for c, _ in self.new_jobs):
            # A cluster without procs leaves nothing at commit: do not keep one per call.
            self.new_clusters.pop(previous, None)
        self.new_clusters[cluster] = ClassAd()
        self.my_cluster = cluster
        return cluster

    def new_proc(self, cluster: int) -> int:
        if cluster != self.my_cluster or cluster not in self.new_clusters:
            raise QueueError(errno.EACCES, f"NewProc for cluster {cluster} of another connection")
        if len(self.queue.jobs) + len(self.new_jobs) >= MAX_JOBS:
            raise QueueError(errno.EAGAIN, "MAX_JOBS_SUBMITTED exceeded")
        proc = sum(1 for c, _ in self.new_jobs if c == cluster)
        self.new_jobs[(cluster, proc)] = ClassAd()
        return proc

    def set_attribute(self, cluster: int, proc: int, name: str, value: str) -> None:
        if not _NAME.match(name) or not value or "\n" in value or "\r" in value:
            raise QueueError(errno.EINVAL, f"invalid attribute {name!r} or value")
        own = owner_of(self.user)
        low = fold(name)
        new = cluster in self.new_clusters
        if new:
            if proc >= 0 and (cluster, proc) not in self.new_jobs:
                raise QueueError(errno.ENOENT, f"no job {cluster}.{proc}")
            if low == "owner":
                if proc > 0:
                    return
                if value.strip() not in ("undefined", f'"{own}"'):
                    raise QueueError(
                        errno.EACCES,
                        f"Setting owner to {value.strip(chr(34))} when active owner is {own} "
                        "is not permitted",
                    )
                value = f'"{own}"'
                proc = -1
            target = self.new_clusters[cluster] if proc < 0 else self.new_jobs[(cluster, proc)]
            if len(target) >= MAX_ATTRS_PER_JOB:
                raise QueueError(errno.EINVAL, "too many attributes")
            _set(target, name, value)
            return
        self._check_existing(cluster, proc, low)
        self._edit((cluster, proc), name, value)

    def _edit(self, key: tuple[int, int], name: str, value: str | None) -> None:
        """Record one edit of an existing job, within :data:`MAX_TXN_EDITS`."""
        edits = self.edits.setdefault(key, {})
        if name not in edits:
            if self.edit_count >= MAX_TXN_EDITS:
                raise QueueError(errno.EINVAL, "too many edits in one transaction")
            self.edit_count += 1
        edits[name] = value

    def _check_existing(self, cluster: int, proc: int, low: str) -> None:
        q = self.queue
        if proc < 0:
            ad = q.clusters.get(cluster)
        else:
            job = q.jobs.get((cluster, proc))
            ad = None if job is None else job.ad
        if ad is None:
            raise QueueError(errno.ENOENT, f"no job {cluster}.{proc}")
        if low in IMMUTABLE:
            raise QueueError(errno.EACCES, f"attribute {low} of job {cluster}.{proc} is immutable")
        if not q.may_edit(self.user, cluster):
            raise QueueError(errno.EACCES, f"{self.user} does not own job {cluster}.{proc}")

    def set_by_constraint(self, constraint: str, name: str, value: str, flags: int) -> int:
        try:
            expr = parse_expr(constraint, old=True)
        except ClassAdError:
            raise QueueError(errno.EINVAL, f"unparsable constraint {constraint!r}") from None
        targets: list[tuple[int, int]] = []
        with self.queue.lock:
            for c, p in list(self.queue.jobs):
                ad = self.queue.merged(c, p)
                if ad is not None and matches(expr, ad):
                    if flags & 0x10 and not self.queue.may_edit(self.user, c):
                        continue
                    targets.append((c, p))
        if not targets:
            raise QueueError(errno.ENOENT, "no job matched")
        for c, p in targets:
            self._check_existing(c, p, fold(name))
        if not flags & 0x20:
            for c, p in targets:
                self._edit((c, p), name, value)
            if flags & 0x80:
                for c in {c for c, _ in targets}:
                    self._edit((c, -1), name, value)
        return len(targets)

    def delete_attribute(self, cluster: int, proc: int, name: str) -> None:
        if cluster in self.new_clusters:
            target = self.new_clusters[cluster] if proc < 0 else self.new_jobs.get((cluster, proc))
            if target is not None:
                target.pop(name, None)
            return
        self._check_existing(cluster, proc, fold(name))
        self._edit((cluster, proc), name, None)

    def commit(self) -> None:
        if self.deferred is not None:
            raise self.deferred
        self.queue.apply(self)
        self.clear()

    def clear(self) -> None:
        self.new_clusters.clear()
        self.new_jobs.clear()
        self.edits.clear()
        self.deferred = None
        self.my_cluster = None
        self.edit_count = 0


class JobQueue:
    """The jobs, the history and the state machine; thread-safe."""

    def __init__(
        self,
        *,
        name: str = "mock-schedd",
        superusers: Iterable[str] = (),
        run_time: float = 2.0,
        clock: Callable[[], float] = time.time,
        spool_dir: str | None = None,
    ) -> None:
        self.name = name
        self.spool = SpoolArea(spool_dir)
        self.clusters: dict[int, ClassAd] = {}
        self.jobs: dict[tuple[int, int], Job] = {}
        self.history: list[ClassAd] = []  # oldest first
        self.next_cluster = 1
        self.lock = threading.RLock()
        self.superusers = {owner_of(u) for u in superusers}
        self.run_time = run_time
        self.clock = clock
        self.started: dict[tuple[int, int], float] = {}

    # --- reading -------------------------------------------------------------------------

    def merged(self, cluster: int, proc: int) -> ClassAd | None:
        """Cluster ad overlaid with the proc ad (no duplicate names)."""
        job = self.jobs.get((cluster, proc))
        if job is None:
            return None
        ad = self.clusters.get(cluster, ClassAd()).copy()
        for name in job.ad:
            ad.set_expr(name, job.ad.lookup(name))
        return ad

    def all_jobs(self) -> list[ClassAd]:
        """Every job's merged ad, in id order."""
        with self.lock:
            return [ad for key in sorted(self.jobs) if (ad := self.merged(*key)) is not None]

    def may_edit(self, user: str | None, cluster: int) -> bool:
        """The job's owner or a queue superuser."""
        own = owner_of(user)
        if own is None:
            return False
        if own in self.superusers:
            return True
        cluster_ad = self.clusters.get(cluster)
        return cluster_ad is not None and cluster_ad.get("Owner") == own

    # --- writing -------------------------------------------------------------------------

    def apply(self, txn: Transaction) -> None:
        """Commit a transaction atomically (all or nothing)."""
        now = int(self.clock())
        with self.lock:
            for key in txn.edits:
                c, p = key
                if p < 0 and c not in self.clusters or p >= 0 and key not in self.jobs:
                    raise QueueError(errno.ENOENT, f"job {c}.{p} left the queue")
            for cluster, cad in txn.new_clusters.items():
                procs = sorted(p for c, p in txn.new_jobs if c == cluster)
                if not procs:
                    continue  # a cluster without procs leaves no visible job
                cad = cad.copy()
                own = owner_of(txn.user) or "nobody"
                cad["Owner"] = own
                cad["User"] = txn.user or f"{own}@localhost"
                cad["ClusterId"] = cluster
                cad.setdefault("MyType", "Job")
                cad.setdefault("TargetType", "Machine")
                cad["TotalSubmitProcs"] = len(procs)
                self.clusters[cluster] = cad
                spooled = False
                for proc in procs:
                    pad = txn.new_jobs[(cluster, proc)].copy()
                    pad["ProcId"] = proc
                    if "JobStatus" not in pad:
                        pad["JobStatus"] = IDLE
                    pad["GlobalJobId"] = f"{self.name}#{cluster}.{proc}#{now}"
                    pad.setdefault("EnteredCurrentStatus", now)
                    spooled = commit_spooled(self.spool, cad, pad, cluster, proc) or spooled
                    self.jobs[(cluster, proc)] = Job(cluster, proc, pad)
                if spooled:
                    drop_cluster_hold(cad)
            for (c, p), edits in txn.edits.items():
                target = self.clusters[c] if p < 0 else self.jobs[(c, p)].ad
                for name, text in edits.items():
                    if text is None:
                        target.pop(name, None)
                    else:
                        _set(target, name, text)

    def act(
        self, user: str | None, action: JobAction, request: ClassAd
    ) -> tuple[dict[tuple[int, int], int], Callable[[], None]]:
        """Result code per job and a function that applies the change (after the client's
        confirmation).  Follows spec 05 §5.3."""
        own = owner_of(user)
        reason_attr = {
            JobAction.Hold: "HoldReason",
            JobAction.Release: "ReleaseReason",
            JobAction.Remove: "RemoveReason",
            JobAction.RemoveX: "RemoveReason",
            JobAction.TransferAndRemove: "RemoveReason",
        }.get(action)
        reason = None
        if reason_attr:
            try:
                value = request.get(reason_attr)
            except ClassAdError:
                value = None
            if isinstance(value, str) and value:
                reason = f"{value} (by user {own})"
        subcode = _int(request, "HoldReasonSubCode", 0)
        results: dict[tuple[int, int], int] = {}
        with self.lock:
            if "ActionIds" in request:
                ids_text = request.get("ActionIds")
                if not isinstance(ids_text, str):
                    raise QueueError(errno.EINVAL, "ActionIds is not a string")
                for item in _SPLIT.split(ids_text.strip()):
                    m = re.fullmatch(r"(\d+)\.(\d+)", item)
                    if m is None:
                        continue
                    key = (int(m.group(1)), int(m.group(2)))
                    results[key] = self._act_code(key, own, action, explicit=True)
            else:
                expr = request.get_expr("ActionConstraint")
                filt = _ACTION_FILTER.get(action, lambda s, ad: True)
                for key in sorted(self.jobs):
                    ad = self.merged(*key)
                    if ad is None:
                        continue
                    if filt(_int(ad, "JobStatus"), ad) and matches(expr, ad):
                        results[key] = self._act_code(key, own, action, explicit=False)
        todo = [k for k, code in results.items() if code == 1]

        def apply() -> None:
            now = int(self.clock())
            with self.lock:
                for key in todo:
                    job = self.jobs.get(key)
                    if job is None:
                        continue
                    self._apply_action(job, action, reason, subcode, now)

        return results, apply

    def _act_code(
        self, key: tuple[int, int], own: str | None, action: JobAction, *, explicit: bool
    ) -> int:
        ad = self.merged(*key)
        if ad is None:
            return 2
        if own not in self.superusers and ad.get("Owner") != own:
            return 5
        status = _int(ad, "JobStatus")
        if action == JobAction.Hold:
            if status == HELD:
                return 4
            if status in (REMOVED, COMPLETED):
                return 5
            return 1
        if action == JobAction.Remove or action == JobAction.TransferAndRemove:
            return 4 if status == REMOVED else 1
        if action == JobAction.RemoveX:
            return 1 if status == REMOVED else 3
        if action == JobAction.Release:
            return 1 if status == HELD else 3
        if action in (JobAction.Vacate, JobAction.VacateFast, JobAction.Suspend):
            return 1 if status in (RUNNING, TRANSFERRING) else 3
        if action == JobAction.Continue:
            return 1 if status == SUSPENDED else 3
        return 1

    def _apply_action(
        self, job: Job, action: JobAction, reason: str | None, subcode: int, now: int
    ) -> None:
        ad = job.ad
        status = _int(self.merged(job.cluster, job.proc) or ClassAd(), "JobStatus")
        key = (job.cluster, job.proc)
        if action == JobAction.Hold:
            ad["JobStatusOnRelease"] = status if status != RUNNING else IDLE
            ad["JobStatus"] = HELD
            ad["HoldReason"] = reason or "via cedar"
            ad["HoldReasonCode"] = 1
            ad["HoldReasonSubCode"] = subcode
            ad["NumHolds"] = _int(ad, "NumHolds") + 1
            self.started.pop(key, None)
        elif action == JobAction.Release:
            ad["JobStatus"] = _int(ad, "JobStatusOnRelease", IDLE) or IDLE
            for name in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode", "JobStatusOnRelease"):
                ad.pop(name, None)
            if reason:
                ad["ReleaseReason"] = reason
        elif action in (JobAction.Remove, JobAction.TransferAndRemove, JobAction.RemoveX):
            ad["JobStatus"] = REMOVED
            if reason:
                ad["RemoveReason"] = reason
            ad["EnteredCurrentStatus"] = now
            self._retire(key, now)
            return
        elif action in (JobAction.Vacate, JobAction.VacateFast):
            ad["JobStatus"] = IDLE
            self.started.pop(key, None)
        elif action == JobAction.Suspend:
            ad["JobStatus"] = SUSPENDED
        elif action == JobAction.Continue:
            ad["JobStatus"] = RUNNING
        ad["EnteredCurrentStatus"] = now

    def _retire(self, key: tuple[int, int], now: int) -> None:
        """Move a finished job to the history (and drop an emptied cluster)."""
        ad = self.merged(*key)
        del self.jobs[key]
        self.started.pop(key, None)
        self.spool.remove_job(*key)
        if ad is not None:
            ad["CompletionDate"] = now if _int(ad, "JobStatus") == COMPLETED else 0
            self.history.append(ad)
        if not any(c == key[0] for c, _ in self.jobs):
            self.clusters.pop(key[0], None)

    # --- the simulated execution -----------------------------------------------------------

    def step(self, now: float | None = None) -> None:
        """Advance the state machine: Idle → Running, Running for ``run_time`` → Completed
        (then into the history).  Held/removed jobs are left alone."""
        now = self.clock() if now is None else now
        with self.lock:
            for key in sorted(self.jobs):
                job = self.jobs[key]
                status = _int(self.merged(*key) or ClassAd(), "JobStatus")
                if status == IDLE:
                    job.ad["JobStatus"] = RUNNING
                    job.ad["EnteredCurrentStatus"] = int(now)
                    job.ad["JobCurrentStartDate"] = int(now)
                    job.ad["NumJobStarts"] = _int(job.ad, "NumJobStarts") + 1
                    self.started[key] = now
                elif status == RUNNING:
                    began = self.started.setdefault(key, now)
                    if now - began >= self.run_time:
                        job.ad["JobStatus"] = COMPLETED
                        job.ad["ExitCode"] = 0
                        job.ad["ExitBySignal"] = False
                        job.ad["RemoteWallClockTime"] = float(now - began)
                        job.ad["EnteredCurrentStatus"] = int(now)
                        job.ad["NumJobCompletions"] = _int(job.ad, "NumJobCompletions") + 1
                        merged = self.merged(*key) or job.ad
                        if "SUBMIT_Iwd" in merged:
                            simulate_output(self.spool, merged, *key)
                            if "SpooledOutputFiles" in merged:
                                job.ad["SpooledOutputFiles"] = merged["SpooledOutputFiles"]
                        job.ad["CompletionDate"] = int(now)
                        if not leave_in_queue(self.merged(*key) or job.ad):
                            self._retire(key, int(now))
                elif status in (COMPLETED, REMOVED) and not leave_in_queue(
                    self.merged(*key) or job.ad
                ):
                    self._retire(key, int(now))


# --------------------------------------------------------------------------- wire handlers

_COUNTERS = {
    IDLE: "Idle",
    RUNNING: "Running",
    TRANSFERRING: "Running",
    REMOVED: "Removed",
    COMPLETED: "Completed",
    8: "Completed",
    HELD: "Held",
    SUSPENDED: "Suspended",
}
_SUMMARY_ORDER = [
    "Held",
    "Idle",
    "Jobs",
    "Owner",
    "MyType",
    "Removed",
    "Running",
    "Completed",
    "ErrorCode",
    "Suspended",
    "ServerTime",
    "AllusersHeld",
    "AllusersIdle",
    "AllusersJobs",
    "SchedulerHeld",
    "SchedulerIdle",
    "SchedulerJobs",
    "AllusersRemoved",
    "AllusersRunning",
    "SchedulerRemoved",
    "SchedulerRunning",
    "AllusersCompleted",
    "AllusersSuspended",
    "SchedulerCompleted",
    "AllusersSchedulerHeld",
    "AllusersSchedulerIdle",
    "AllusersSchedulerJobs",
    "AllusersSchedulerRemoved",
    "AllusersSchedulerRunning",
    "AllusersSchedulerCompleted",
]  # noqa: SIM905


def _count(counts: dict[str, int], prefix: str, ad: ClassAd) -> None:
    status = _int(ad, "JobStatus")
    sched = "Scheduler" if _int(ad, "JobUniverse") == 7 else ""
    counts[f"{prefix}{sched}Jobs"] = counts.get(f"{prefix}{sched}Jobs", 0) + 1
    name = _COUNTERS.get(status)
    if name and not (sched and name == "Suspended"):
        counts[f"{prefix}{sched}{name}"] = counts.get(f"{prefix}{sched}{name}", 0) + 1


def _error_ad(code: int, text: str, key: str = "ErrorString") -> ClassAd:
    ad = ClassAd()
    ad["Owner"] = 0
    ad["ErrorCode"] = code
    ad[key] = text
    return ad


def _projection(request: ClassAd) -> list[str] | None | int:
    """Projection names; None = all; an int error code (2/3) on a bad projection."""
    if "Projection" not in request:
        return None
    try:
        value = request.get("Projection")
    except ClassAdError:
        return 2
    if isinstance(value, str):
        names = [n for n in _SPLIT.split(value) if n]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        names = [n for n in value if n]
    else:
        return 3
    return names or None


class MockSchedd(Daemon):
    """A schedd for tests, the demo and ``cedar pool`` (see the module docstring)."""

    def __init__(
        self,
        name: str = "mock-schedd",
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        queue: JobQueue | None = None,
        simulate: bool = False,
        tick: float = 1.0,
    ) -> None:
        super().__init__(name, "SCHEDD", policy=policy, host=host, port=port)
        self.queue = queue or JobQueue(name=name)
        self.simulate = simulate
        self.tick = tick
        self.register(Command.QUERY_JOB_ADS, self._handle_query, permission="READ")
        # 519, 1112 and 478 force authentication by default (FORCE_AUTHENTICATION).
        self.register(Command.QUERY_JOB_ADS_WITH_AUTH, self._handle_query, permission="READ")
        self.register(Command.QMGMT_WRITE_CMD, self._handle_qmgmt, permission="WRITE")
        self.register(Command.ACT_ON_JOBS, self._handle_act, permission="WRITE")
        self.register(Command.QUERY_SCHEDD_HISTORY, self._handle_history, permission="READ")
        self.register(Command.RESCHEDULE, self._handle_reschedule, permission="WRITE")
        # 488/489 force authentication (FORCE_AUTHENTICATION); spec 07 §4.1
        self.register(
            Command.SPOOL_JOB_FILES_WITH_PERMS,
            lambda request: handle_spool(self.queue, self.queue.spool, request),
            permission="WRITE",
        )
        self.register(
            Command.TRANSFER_DATA_WITH_PERMS,
            lambda request: handle_transfer_data(self.queue, self.queue.spool, request),
            permission="WRITE",
        )
        for command in (
            Command.QUERY_SCHEDD_ADS,
            Command.QUERY_SUBMITTOR_ADS,
            Command.QUERY_STARTD_ADS,
        ):
            self.register(command, self._handle_direct_query, permission="READ")

    def schedd_ad(self) -> ClassAd:
        """The ad this schedd advertises to a collector."""
        ad = ClassAd()
        ad["MyType"] = "Scheduler"
        ad["Name"] = self.name
        ad["Machine"] = self.host
        ad["MyAddress"] = self.address
        ad["ScheddIpAddr"] = self.address
        ad["CondorVersion"] = CEDAR_VERSION_STRING
        ad["CondorPlatform"] = CEDAR_PLATFORM_STRING
        counts: dict[str, int] = {}
        for job in self.queue.all_jobs():
            _count(counts, "", job)
        ad["TotalIdleJobs"] = counts.get("Idle", 0)
        ad["TotalRunningJobs"] = counts.get("Running", 0)
        ad["TotalHeldJobs"] = counts.get("Held", 0)
        ad["TotalJobAds"] = counts.get("Jobs", 0)
        return ad

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve, and run the state machine every ``tick`` seconds when simulating."""
        async with trio.open_nursery() as nursery:
            if self.simulate:
                nursery.start_soon(self._ticker)
            await nursery.start(super().serve)
            task_status.started(self)

    async def _ticker(self) -> None:
        while True:
            await trio.sleep(self.tick)
            self.queue.step()

    def submitter_ads(self) -> list[ClassAd]:
        """One ``Submitter`` ad per owner with jobs in the queue, with its job counts."""
        by_owner: dict[str, dict[str, int]] = {}
        for job in self.queue.all_jobs():
            owner = job.get("Owner")
            if isinstance(owner, str):
                _count(by_owner.setdefault(owner, {}), "", job)
        ads = []
        for owner, counts in sorted(by_owner.items()):
            ad = ClassAd()
            ad["MyType"] = "Submitter"
            ad["Name"] = f"{owner}@{self.host}"
            ad["ScheddName"] = self.name
            ad["MyAddress"] = self.address
            ad["IdleJobs"] = counts.get("Idle", 0)
            ad["RunningJobs"] = counts.get("Running", 0)
            ad["HeldJobs"] = counts.get("Held", 0)
            ads.append(ad)
        return ads

    # --- direct daemon queries ---------------------------------------------------------------

    def _handle_direct_query(self, request: CommandRequest) -> Protocol[None]:
        """Spec 05 §2.7: the schedd's own or submitter ads, filtered by ``Requirements`` only.

        Like the real schedd it ignores ``Projection`` and ``LimitResults``; it holds no
        claimed slots, so a slot query (5) gets the empty result.
        """
        reader = yield from request.read_payload()
        try:
            query = get_classad(reader, strict=True)
        except CedarError as exc:
            log.info("%s: unreadable direct query (%s); closing", self.name, exc)
            return
        if request.command == Command.QUERY_SCHEDD_ADS:
            candidates = [self.schedd_ad()]
        elif request.command == Command.QUERY_SUBMITTOR_ADS:
            candidates = self.submitter_ads()
        else:
            candidates = []
        requirements = query.get_expr("Requirements")
        answer = QueryAnswer(
            results=[
                (ad, None)
                for ad in candidates
                if requirements is None or is_match(evaluate(requirements, ad, query))
            ]
        )
        yield Send(write_answer(request.writer(), answer))

    # --- job queries -----------------------------------------------------------------------

    def _handle_query(self, request: CommandRequest) -> Protocol[None]:
        reader = yield from request.read_payload()
        try:
            query = get_classad(reader, strict=True)
        except CedarError as exc:
            log.info("%s: unreadable job query (%s); closing", self.name, exc)
            return
        projection = _projection(query)
        if isinstance(projection, int):
            yield Send(
                self._ad(
                    request,
                    _error_ad(projection, "Unable to convert projection list to string list"),
                )
            )
            return
        requirements = query.get_expr("Requirements")
        limit = _int(query, "LimitResults", -1) if "LimitResults" in query else -1
        send_time = query.get("SendServerTime") is not False
        summary_only = query.get("SummaryOnly") is True
        my_name = self._my_name(request, query)
        now = int(time.time())
        allusers: dict[str, int] = {}
        counts: dict[str, int] = {}
        mine: dict[str, int] = {}
        sent = 0
        for ad in self.queue.all_jobs():
            _count(allusers, "Allusers", ad)
            if my_name is not None:
                key = "User" if "@" in my_name else "Owner"
                if ad.get(key) != my_name:
                    continue
                _count(mine, "My", ad)
            if not matches(requirements, ad):
                continue
            if limit >= 0 and sent >= limit:
                continue
            _count(counts, "", ad)
            sent += 1
            if summary_only:
                continue
            writer = request.writer()
            put_classad(
                writer,
                ad,
                projection=projection,
                server_time=now if send_time else None,
                exclude_private=True,
            )
            yield Send(writer)
        summary = ClassAd()
        for name in _SUMMARY_ORDER:
            if name == "Owner":
                summary["Owner"] = 0
            elif name == "MyType":
                summary["MyType"] = "Summary"
            elif name == "ErrorCode":
                summary["ErrorCode"] = 0
            elif name == "ServerTime":
                summary["ServerTime"] = now
            elif name.startswith("Allusers"):
                summary[name] = allusers.get(name, 0)
            else:
                summary[name] = counts.get(name, 0)
        if my_name is not None:
            for name in _SUMMARY_ORDER:
                if name in ("Owner", "MyType", "ErrorCode", "ServerTime") or name.startswith(
                    "Allusers"
                ):
                    continue
                summary["My" + name] = mine.get("My" + name, 0)
            summary["MyName"] = my_name
        yield Send(self._ad(request, summary))

    def _my_name(self, request: CommandRequest, query: ClassAd) -> str | None:
        if "MyJobs" not in query:
            return None
        value = query.get("MyJobs")
        if value is False:
            return None
        if value is True:
            return request.user
        if request.authenticated and request.user:
            return request.user
        me = query.get("Me")
        return me if isinstance(me, str) else None

    @staticmethod
    def _ad(request: CommandRequest, ad: ClassAd) -> Any:
        writer = request.writer()
        put_classad(writer, ad)
        return writer

    # --- queue management ------------------------------------------------------------------

    def _handle_qmgmt(self, request: CommandRequest) -> Protocol[None]:
        """The RPC loop; an unknown call or wire error closes (aborting the transaction)."""
        txn = Transaction(self.queue, request.user)
        auto = False  # after a commit, changes apply one by one (spec 05 §4.1)
        first = request._first is not None
        while True:
            try:
                if first:
                    reader = yield from request.read_payload()
                    first = False
                    if reader.at_end():
                        reader = yield Receive()
                else:
                    reader = yield Receive()
                call = reader.get_int()
            except CedarError:
                return  # disconnect: the transaction is dropped (aborted)
            try:
                reply = self._rpc(request, txn, call, reader)
            except CedarError as exc:
                log.info("%s: bad QMGMT request (%s); closing", self.name, exc)
                return
            if reply is None:
                return
            if reply is _NO_REPLY:
                if auto and call in (QmgmtCall.SetAttribute2, QmgmtCall.SetAttribute):
                    self._auto_commit(txn)
                continue
            if call in (QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags):
                auto = True
            elif call == QmgmtCall.BeginTransaction:
                auto = False
            elif auto and call in _WRITES:
                self._auto_commit(txn)
            yield Send(reply)

    @staticmethod
    def _auto_commit(txn: Transaction) -> None:
        try:
            txn.commit()
        except QueueError:
            txn.clear()

    def _rpc(self, request: CommandRequest, txn: Transaction, call: int, r: MessageReader) -> Any:
        w = request.writer
        if call == QmgmtCall.CloseSocket:
            return None
        if call == QmgmtCall.GetCapabilities:
            r.get_int()
            caps = ClassAd()
            caps["UseJobsets"] = False
            caps["LateMaterialize"] = False
            caps["LateMaterializeVersion"] = 2
            return self._ad(request, caps)
        try:
            if call == QmgmtCall.NewCluster:
                if not request.authenticated:
                    raise QueueError(errno.EACCES, "anonymous users may not submit")
                return w().put_int(txn.new_cluster())
            if call == QmgmtCall.NewProc:
                return w().put_int(txn.new_proc(r.get_int()))
            if call in (QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2):
                cluster, proc = r.get_int(), r.get_int()
                value, name = r.get_string(), r.get_string()
                flags = r.get_char() if call == QmgmtCall.SetAttribute2 else 0
                if flags & 0x02:
                    if txn.deferred is None:
                        try:
                            txn.set_attribute(cluster, proc, name, value)
                        except QueueError as exc:
                            txn.deferred = exc
                    return _NO_REPLY
                txn.set_attribute(cluster, proc, name, value)
                return w().put_int(0)
            if call in (QmgmtCall.SetAttributeByConstraint, QmgmtCall.SetAttributeByConstraint2):
                constraint, value, name = r.get_string(), r.get_string(), r.get_string()
                flags = r.get_char() if call == QmgmtCall.SetAttributeByConstraint2 else 0
                if not _NAME.match(name) or not value or "\n" in value or "\r" in value:
                    raise QueueError(errno.EINVAL, "invalid attribute or value")
                return w().put_int(txn.set_by_constraint(constraint, name, value, flags))
            if call == QmgmtCall.DeleteAttribute:
                cluster, proc, name = r.get_int(), r.get_int(), r.get_string()
                txn.delete_attribute(cluster, proc, name)
                return w().put_int(1)
            if call in (
                QmgmtCall.GetAttributeInt,
                QmgmtCall.GetAttributeFloat,
                QmgmtCall.GetAttributeString,
                QmgmtCall.GetAttributeExpr,
            ):
                return self._get_attribute(request, txn, call, r)
            if call == QmgmtCall.GetJobAd:
                cluster, proc = r.get_int(), r.get_int()
                ad = txn.job_ad(cluster, proc)
                if ad is None:
                    return w().put_int(-1).put_int(0)
                writer = w().put_int(0)
                put_classad(writer, ad, exclude_private=True)
                return writer
            if call == QmgmtCall.GetAllJobsByConstraint:
                constraint, projection = r.get_string(), r.get_string()
                expr = parse_expr(constraint or "true", old=True)
                writer = w()
                names = [n for n in _SPLIT.split(projection) if n] or None
                for ad in self.queue.all_jobs():
                    if matches(expr, ad):
                        writer.put_int(0)
                        put_classad(writer, ad, projection=names, server_time=int(time.time()))
                return writer.put_int(-1).put_int(0)
            if call == QmgmtCall.BeginTransaction:
                txn.clear()
                return w().put_int(0)
            if call == QmgmtCall.AbortTransaction:
                txn.clear()
                return w().put_int(0)
            if call in (QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags):
                if call == QmgmtCall.CommitTransaction:
                    r.get_int()
                try:
                    txn.commit()
                except QueueError as exc:
                    txn.clear()
                    writer = w().put_int(-1).put_int(-exc.errno)
                    put_classad(writer, _error_ad(2, str(exc), "ErrorReason"))
                    return writer
                writer = w().put_int(0)
                put_classad(writer, ClassAd())
                return writer
            if call == QmgmtCall.SetEffectiveOwner:
                owner = r.get_string()
                if owner and owner_of(owner) == owner_of(request.user):
                    return w().put_int(0)
                raise QueueError(errno.EACCES, "SetEffectiveOwner refused")
            if call == QmgmtCall.DestroyCluster:
                r.get_int()
                return w().put_int(-1).put_int(0)
        except QueueError as exc:
            writer = w().put_int(-1).put_int(exc.errno)
            if call == QmgmtCall.NewCluster:
                put_classad(writer, _error_ad(exc.errno, str(exc), "ErrorReason"))
            return writer
        except ClassAdError:
            return w().put_int(-1).put_int(errno.EINVAL)
        log.info("%s: unknown QMGMT call %d; closing", self.name, call)
        return None

    def _get_attribute(
        self, request: CommandRequest, txn: Transaction, call: int, r: MessageReader
    ) -> Any:
        cluster, proc, name = r.get_int(), r.get_int(), r.get_string()
        ad = txn.job_ad(cluster, proc)
        w = request.writer()
        if ad is None:
            return w.put_int(-1).put_int(errno.ENOENT)
        if name not in ad:
            return w.put_int(-1).put_int(errno.EINVAL)
        pending = (cluster, proc) in txn.edits or cluster in txn.new_clusters
        rval = 1 if pending else 0
        if call == QmgmtCall.GetAttributeExpr:
            return w.put_int(rval).put_string(ad.raw_text(name))
        try:
            value = evaluate(ad.lookup(name), ad)
        except CedarError:
            value = None
        if call == QmgmtCall.GetAttributeString:
            if not isinstance(value, str):
                return w.put_int(-1).put_int(errno.EINVAL)
            return w.put_int(rval).put_string(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return w.put_int(-1).put_int(errno.EINVAL)
        if call == QmgmtCall.GetAttributeInt:
            if not isinstance(value, int):
                return w.put_int(-1).put_int(errno.EINVAL)
            return w.put_int(rval).put_int(value)
        return w.put_int(rval).put_double(float(value))

    # --- actions ---------------------------------------------------------------------------

    def _handle_act(self, request: CommandRequest) -> Protocol[None]:
        reader = yield from request.read_payload()
        refuse = request.writer().put_int(0)
        try:
            ad = get_classad(reader, strict=True)
            action = JobAction(_int(ad, "JobAction", -1))
        except (CedarError, ValueError):
            yield Send(refuse)
            return
        if "ActionIds" in ad and "ActionConstraint" in ad or not request.authenticated:
            yield Send(refuse)
            return
        try:
            results, apply = self.queue.act(request.user, action, ad)
        except QueueError:
            yield Send(refuse)
            return
        long = _int(ad, "ActionResultType", 2) == 1
        result = ClassAd()
        if long:
            for (c, p), code in results.items():
                result[f"job_{c}_{p}"] = code
        result["JobAction"] = int(action)
        result["TotalJobAds"] = len(self.queue.jobs)
        ok = any(code == 1 for code in results.values())
        result["ActionResult"] = 1 if ok else 0
        if not long:
            for code in range(7):
                result[f"result_total_{code}"] = sum(1 for v in results.values() if v == code)
        result["ActionResultType"] = 1 if long else 2
        result["IsQueueSuperUser"] = owner_of(request.user) in self.queue.superusers
        yield Send(self._ad(request, result))
        if not ok:
            return
        try:
            confirm = yield Receive()
            if confirm.get_int() != 1:
                return
        except CedarError:
            return
        apply()
        yield Send(request.writer().put_int(1))

    # --- history ---------------------------------------------------------------------------

    def _handle_history(self, request: CommandRequest) -> Protocol[None]:
        reader = yield from request.read_payload()
        try:
            query = get_classad(reader, strict=True)
        except CedarError as exc:
            log.info("%s: unreadable history query (%s); closing", self.name, exc)
            return
        projection = _projection(query)
        if isinstance(projection, int):
            yield Send(self._ad(request, _error_ad(projection, "bad projection")))
            return
        requirements = query.get_expr("Requirements")
        since = query.get_expr("Since")
        limit = _int(query, "NumJobMatches", -1)
        scan_limit = _int(query, "ScanLimit", -1)
        stream = query.get("StreamResults") is True
        with self.queue.lock:
            records = list(self.queue.history)
        if query.get("HistoryReadForwards") is not True:
            records.reverse()
        writer = request.writer()
        if stream:
            header = ClassAd()
            header["Owner"] = 1
            header["StreamResults"] = True
            put_classad(writer, header)
            yield Send(writer)
            writer = request.writer()
        scanned = sent = 0
        for ad in records:
            if 0 <= scan_limit <= scanned or 0 <= limit <= sent:
                break
            scanned += 1
            if since is not None and matches(since, ad):
                break
            if not matches(requirements, ad):
                continue
            put_classad(writer, ad, projection=projection, exclude_private=True)
            sent += 1
            if stream:
                yield Send(writer)
                writer = request.writer()
        final = ClassAd()
        final["Owner"] = 0
        final["AdCount"] = scanned
        final["MalformedAds"] = 0
        final["NumJobMatches"] = sent
        put_classad(writer, final)
        yield Send(writer)

    def _handle_reschedule(self, request: CommandRequest) -> Protocol[None]:
        if request._first is not None:
            yield from request.read_payload()
        if self.simulate:
            self.queue.step()


_NO_REPLY = object()
_WRITES = {
    QmgmtCall.SetAttribute,
    QmgmtCall.SetAttributeByConstraint,
    QmgmtCall.SetAttributeByConstraint2,
    QmgmtCall.DeleteAttribute,
}
