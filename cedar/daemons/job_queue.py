"""The schedd's job queue as a pure model: no sockets, no wire formats, no Trio.

:class:`JobQueue` holds the jobs, the history and the job state machine (:meth:`JobQueue.step`
simulates execution; tests call it directly and never depend on timing).  :class:`Transaction`
holds one QMGMT connection's uncommitted changes and applies them atomically
(:meth:`Transaction.commit`); dropping it aborts them.  Ownership and protected attributes are
checked here, so every front end (the network handlers in :mod:`cedar.daemons.schedd`, replayed
captures, tests) gets the same rules.  Raises :class:`QueueError` (carrying the errno a schedd
sends); never does I/O.
"""

from __future__ import annotations

import errno
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cedar.classad_wire import ClassAd, parse_expr
from cedar.classad_wire.constraints import matches
from cedar.classad_wire.evaluate import Budget
from cedar.classad_wire.expr import fold
from cedar.daemons.errors import QueueError
from cedar.daemons.factories import (
    MAX_ITEM_BYTES,
    Factory,
    PendingFactory,
    items_file,
)
from cedar.daemons.spool_area import (
    TERMINATED,
    SpoolArea,
    commit_spooled,
    drop_cluster_hold,
    leave_in_queue,
    log_event,
    one_line,
    simulate_output,
)
from cedar.errors import ClassAdError, InvalidArgument
from cedar.jobid import match_job_id
from cedar.numbers import ACTION_REASON_ATTRIBUTE, JobAction, JobStatus, SetAttributeFlags

IDLE, RUNNING, REMOVED, COMPLETED = (
    JobStatus.IDLE,
    JobStatus.RUNNING,
    JobStatus.REMOVED,
    JobStatus.COMPLETED,
)
HELD, TRANSFERRING, SUSPENDED = JobStatus.HELD, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED
#: Attributes no edit may change (a real schedd's ``SYSTEM_IMMUTABLE_JOB_ATTRS``, + MyJobs).
IMMUTABLE = {
    "owner",
    "clusterid",
    "jobuniverse",
    "procid",
    "mytype",
    "targettype",
    "user",
    "osuser",
    "myjobs",
}
#: Attributes the schedd sets itself: a client's value at submit is ignored (the real
#: ``SYSTEM_SECURE_JOB_ATTRS`` + the job ids, with ``IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS``).
SECURE = {
    "clusterid",
    "procid",
    "user",
    "osuser",
    "globaljobid",
    "totalsubmitprocs",
    "x509userproxysubject",
    "x509userproxyemail",
    "x509userproxyvoname",
    "x509userproxyfirstfqan",
    "x509userproxyfqan",
    "authtokensubject",
    "authtokenissuer",
    "authtokengroups",
    "authtokenid",
    "authtokenscopes",
    "authtokenproject",
}
ATTRIBUTE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LIST_SEPARATORS = re.compile(r"[\s,]+")
#: Hard caps so a client cannot grow the queue without bound.
MAX_JOBS = 100_000
MAX_ATTRS_PER_JOB = 2_000
#: Longest attribute value (expression text, bytes) accepted at submit or edit.
MAX_ATTRIBUTE_SIZE = 1 << 20
#: Largest job (cluster + proc attributes, names and values) a transaction may build: keeps
#: one job from pushing every user's query past the message size limit.
MAX_JOB_AD_SIZE = 4 << 20
#: Attribute edits of existing jobs one transaction may hold before it is refused.
MAX_TXN_EDITS = 200_000


# ACT_ON_JOBS state filters (spec 05 §5.3) as predicates on (status, ad).
def _any_status(status: int, ad: ClassAd) -> bool:
    return True


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


def owner_of(user: str | None) -> str | None:
    """``testuser@domain`` → ``testuser`` (the Owner attribute)."""
    return user.split("@", 1)[0] if user else None


def _set(ad: ClassAd, name: str, text: str) -> None:
    """Store expression text; an unparsable value becomes ``undefined`` (spec 05 §4.3)."""
    try:
        ad.set_expr(name, parse_expr(text, old=True))
    except ClassAdError:
        ad.set_expr(name, parse_expr("undefined"))


def int_attr(ad: ClassAd, name: str, default: int = 0) -> int:
    try:
        value = ad.get(name)
    except ClassAdError:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) else default


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
    #: Bytes of attribute text this transaction added per (cluster, proc), for MAX_JOB_AD_SIZE.
    sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    #: Late materialization: the items and digest sent for a new cluster (factories.py).
    factories: dict[int, PendingFactory] = field(default_factory=dict)

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
        keep = previous in self.factories or any(c == previous for c, _ in self.new_jobs)
        if previous is not None and not keep:
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

    def _pending_factory(self, cluster: int) -> PendingFactory:
        if cluster != self.my_cluster or cluster not in self.new_clusters:
            raise QueueError(errno.EACCES, f"no new cluster {cluster} in this transaction")
        if any(c == cluster for c, _ in self.new_jobs):
            raise QueueError(errno.EINVAL, f"cluster {cluster} already has procs")
        return self.factories.setdefault(cluster, PendingFactory())

    def send_materialize_data(self, cluster: int, data: bytes, spool: str) -> tuple[str, int]:
        """SendMaterializeData: keep the item rows; answer the file the digest names."""
        pending = self._pending_factory(cluster)
        if len(data) > MAX_ITEM_BYTES:
            raise QueueError(errno.E2BIG, "item data over the schedd's limit")
        pending.items = data
        pending.items_path = items_file(spool, cluster)
        return pending.items_path, data.count(b"\n")

    def set_job_factory(self, cluster: int, maximum: int, digest: str) -> None:
        """SetJobFactory: keep the digest; the procs are made at commit."""
        pending = self._pending_factory(cluster)
        if not digest or len(digest) > MAX_ATTRIBUTE_SIZE:
            raise QueueError(errno.EINVAL, "empty or oversized factory digest")
        pending.digest = digest
        pending.maximum = maximum

    def set_attribute(self, cluster: int, proc: int, name: str, value: str) -> None:
        if not ATTRIBUTE_NAME.match(name) or not value or "\n" in value or "\r" in value:
            raise QueueError(errno.EINVAL, f"invalid attribute {name!r} or value")
        self._check_size(cluster, proc, name, value)
        own = owner_of(self.user)
        low = fold(name)
        new = cluster in self.new_clusters
        if new:
            if proc >= 0 and (cluster, proc) not in self.new_jobs:
                raise QueueError(errno.ENOENT, f"no job {cluster}.{proc}")
            if low in SECURE:
                return  # the schedd sets these itself at commit (see JobQueue.apply)
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

    def _check_size(self, cluster: int, proc: int, name: str, value: str) -> None:
        """Refuse a value over MAX_ATTRIBUTE_SIZE, or one that grows a job past MAX_JOB_AD_SIZE."""
        if len(value) > MAX_ATTRIBUTE_SIZE:
            raise QueueError(
                errno.E2BIG,
                f"value too large: {name} is {len(value)} bytes, over the schedd's "
                f"MAX_ATTRIBUTE_SIZE of {MAX_ATTRIBUTE_SIZE}",
            )
        key = (cluster, max(proc, -1))
        if key not in self.sizes:
            self.sizes[key] = self.queue.ad_size(*key)
        total = self.sizes[key] + len(name) + len(value)
        if total + (self.sizes.get((cluster, -1), 0) if proc >= 0 else 0) > MAX_JOB_AD_SIZE:
            raise QueueError(
                errno.E2BIG,
                f"value too large: job {cluster}.{proc} would exceed the schedd's "
                f"MAX_JOB_AD_SIZE of {MAX_JOB_AD_SIZE} bytes",
            )
        self.sizes[key] = total

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

    def set_by_constraint(
        self, constraint: str, name: str, value: str, flags: int, budget: Budget | None = None
    ) -> int:
        try:
            expr = parse_expr(constraint, old=True)
        except ClassAdError:
            raise QueueError(errno.EINVAL, f"unparsable constraint {constraint!r}") from None
        targets: list[tuple[int, int]] = []
        with self.queue.lock:
            for c, p in list(self.queue.jobs):
                ad = self.queue.merged(c, p)
                if ad is not None and matches(expr, ad, budget):
                    mine_only = flags & SetAttributeFlags.ONLY_MY_JOBS
                    if mine_only and not self.queue.may_edit(self.user, c):
                        continue
                    targets.append((c, p))
        if not targets:
            raise QueueError(errno.ENOENT, "no job matched")
        for c, p in targets:
            self._check_existing(c, p, fold(name))
        if not flags & SetAttributeFlags.QUERY_ONLY:
            for c, p in targets:
                self._check_size(c, p, name, value)
            for c, p in targets:
                self._edit((c, p), name, value)
            if flags & SetAttributeFlags.POST_SUBMIT_CLUSTER_CHANGE:
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
        self.sizes.clear()
        self.factories.clear()


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
        factory_spool: str = "/var/lib/condor/spool",
    ) -> None:
        self.name = name
        self.spool = SpoolArea(spool_dir)
        #: The directory named in factory items/digest file names (nothing is written there).
        self.factory_spool = factory_spool
        self.factories: dict[int, Factory] = {}
        self.clusters: dict[int, ClassAd] = {}
        self.jobs: dict[tuple[int, int], Job] = {}
        self.history: list[ClassAd] = []  # oldest first
        #: The epoch history (spec 08 §5), oldest first: SPAWN when a run starts, EPOCH when it
        #: ends (exit, hold, vacate, removal), INPUT/OUTPUT for URL transfers; each record
        #: carries its type in ``EpochAdType``.
        self.epochs: list[ClassAd] = []
        self.next_cluster = 1
        self.lock = threading.RLock()
        self.superusers = {owner_of(u) for u in superusers}
        self.run_time = run_time
        self.clock = clock
        #: When set, the simulation starts an idle job only if this says a slot would take it
        #: (``cedar serve --demo`` matches the job against its advertised slots).
        self.can_start: Callable[[ClassAd], bool] | None = None
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

    def ad_size(self, cluster: int, proc: int) -> int:
        """Bytes of attribute text a stored cluster (``proc`` < 0) or proc ad holds (0: none)."""
        with self.lock:
            if proc < 0:
                ad = self.clusters.get(cluster)
            else:
                job = self.jobs.get((cluster, proc))
                ad = None if job is None else job.ad
            if ad is None:
                return 0
            return sum(len(name) + len(ad.raw_text(name)) for name in ad)

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
            factories: dict[int, Factory] = {}
            for cluster, pending in txn.factories.items():
                cad = txn.new_clusters.get(cluster, ClassAd())
                texts = {name: cad.raw_text(name) for name in cad}
                factories[cluster] = Factory.build(cluster, pending, texts)  # may raise QueueError
            for cluster, cad in txn.new_clusters.items():
                procs = sorted(p for c, p in txn.new_jobs if c == cluster)
                if not procs and cluster not in factories:
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
                if cluster in factories:
                    cad["JobStatus"] = IDLE
                    self.factories[cluster] = factories[cluster]
            for (c, p), edits in txn.edits.items():
                target = self.clusters[c] if p < 0 else self.jobs[(c, p)].ad
                for name, text in edits.items():
                    if text is None:
                        target.pop(name, None)
                    else:
                        _set(target, name, text)
            if factories:
                self.materialize(now)

    def factory_ads(self) -> list[ClassAd]:
        """The cluster ads of the factories (a query with ``IncludeClusterAd`` adds them)."""
        with self.lock:
            return [self.clusters[c].copy() for c in sorted(self.factories) if c in self.clusters]

    def materialize(self, now: float | None = None) -> None:
        """Make the procs each factory is due (limit, max idle); drop a factory whose procs
        have all been made and have left, with its cluster."""
        stamp = int(self.clock() if now is None else now)
        with self.lock:
            for cluster, factory in list(self.factories.items()):
                cad = self.clusters.get(cluster)
                if cad is None:
                    del self.factories[cluster]
                    continue
                counts = self._factory_counts(cluster)
                waiting = counts["idle"] + counts["held"]
                for _ in range(factory.due(counts["present"], waiting)):
                    proc = factory.next_proc
                    pad = ClassAd()
                    for name, text in factory.procs[proc].items():
                        _set(pad, name, text)
                    pad["ProcId"] = proc
                    pad["JobStatus"] = IDLE
                    pad["GlobalJobId"] = f"{self.name}#{cluster}.{proc}#{stamp}"
                    pad["EnteredCurrentStatus"] = stamp
                    self.jobs[(cluster, proc)] = Job(cluster, proc, pad)
                    factory.next_proc += 1
                    counts["present"] += 1
                    counts["idle"] += 1
                finished = factory.stopped or factory.next_proc >= factory.total
                if counts["present"] == 0 and finished:
                    del self.factories[cluster]
                    self.clusters.pop(cluster, None)
                    continue
                factory.cluster_attributes(cad, self.factory_spool, counts)

    def _factory_counts(self, cluster: int) -> dict[str, int]:
        counts = {"present": 0, "idle": 0, "running": 0, "held": 0}
        names: dict[int, str] = {IDLE: "idle", RUNNING: "running", HELD: "held"}
        for (c, _proc), job in self.jobs.items():
            if c != cluster:
                continue
            counts["present"] += 1
            name = names.get(int_attr(job.ad, "JobStatus"))
            if name:
                counts[name] += 1
        return counts

    def act(
        self, user: str | None, action: JobAction, request: ClassAd, budget: Budget | None = None
    ) -> tuple[dict[tuple[int, int], int], Callable[[], None]]:
        """Result code per job and a function that applies the change (after the client's
        confirmation).  Follows spec 05 §5.3."""
        own = owner_of(user)
        reason_attr = ACTION_REASON_ATTRIBUTE.get(action)
        reason = None
        if reason_attr:
            try:
                value = request.get(reason_attr)
            except ClassAdError:
                value = None
            if isinstance(value, str) and value:
                reason = f"{value} (by user {own})"
        subcode = int_attr(request, "HoldReasonSubCode", 0)
        results: dict[tuple[int, int], int] = {}
        with self.lock:
            if "ActionIds" in request:
                ids_text = request.get("ActionIds")
                if not isinstance(ids_text, str):
                    raise QueueError(errno.EINVAL, "ActionIds is not a string")
                for item in LIST_SEPARATORS.split(ids_text.strip()):
                    try:
                        job = match_job_id(item)  # the one job-id grammar
                    except InvalidArgument:  # past 32 bits: no such job
                        continue
                    if job is None or job.proc is None:
                        continue
                    key = (job.cluster, job.proc)
                    results[key] = self._act_code(key, own, action, explicit=True)
            else:
                expr = request.get_expr("ActionConstraint")
                filt = _ACTION_FILTER.get(action, _any_status)
                for key in sorted(self.jobs):
                    ad = self.merged(*key)
                    if ad is None:
                        continue
                    if filt(int_attr(ad, "JobStatus"), ad) and matches(expr, ad, budget):
                        results[key] = self._act_code(key, own, action, explicit=False)
        todo = [k for k, code in results.items() if code == 1]
        # Removing, holding or releasing a factory's cluster (its id, or a constraint its
        # cluster ad matches) ends, pauses or resumes the factory (Factory.act); removing some
        # of its procs makes room for the next ones.
        named = set()
        if action in (JobAction.Remove, JobAction.RemoveX, JobAction.Hold, JobAction.Release):
            named = {c for c in self.factories if self._addresses_cluster(request, c, budget)}

        def apply() -> None:
            now = int(self.clock())
            with self.lock:
                for key in todo:
                    job = self.jobs.get(key)
                    if job is None:
                        continue
                    self._apply_action(job, action, reason, subcode, now)
                for cluster in named:
                    if cluster in self.factories and self.may_edit(user, cluster):
                        self.factories[cluster].act(action, reason or "via cedar")
                self.materialize(now)

        return results, apply

    def _addresses_cluster(self, request: ClassAd, cluster: int, budget: Budget | None) -> bool:
        """Whether an action names cluster ``cluster`` itself (not only some of its procs)."""
        if "ActionIds" in request:
            ids_text = request.get("ActionIds")
            items = LIST_SEPARATORS.split(ids_text.strip()) if isinstance(ids_text, str) else []
            return str(cluster) in items
        cad = self.clusters.get(cluster)
        return cad is not None and matches(request.get_expr("ActionConstraint"), cad, budget)

    def _act_code(
        self, key: tuple[int, int], own: str | None, action: JobAction, *, explicit: bool
    ) -> int:
        ad = self.merged(*key)
        if ad is None:
            return 2
        if own not in self.superusers and ad.get("Owner") != own:
            return 5
        status = int_attr(ad, "JobStatus")
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
        status = int_attr(self.merged(job.cluster, job.proc) or ClassAd(), "JobStatus")
        key = (job.cluster, job.proc)
        ends_run = status in (RUNNING, TRANSFERRING) and action in (
            JobAction.Hold,
            JobAction.Remove,
            JobAction.TransferAndRemove,
            JobAction.RemoveX,
            JobAction.Vacate,
            JobAction.VacateFast,
        )
        if ends_run:
            vacated = action in (JobAction.Vacate, JobAction.VacateFast)
            self._end_run(key, now, vacated=vacated)
        if action == JobAction.Hold:
            ad["JobStatusOnRelease"] = status if status != RUNNING else IDLE
            ad["JobStatus"] = HELD
            ad["HoldReason"] = reason or "via cedar"
            ad["HoldReasonCode"] = 1
            ad["HoldReasonSubCode"] = subcode
            ad["NumHolds"] = int_attr(ad, "NumHolds") + 1
            self.started.pop(key, None)
            self._log(key, 12, now, f"\t{one_line(ad['HoldReason'])}\n\tCode 1 Subcode {subcode}\n")
        elif action == JobAction.Release:
            ad["JobStatus"] = int_attr(ad, "JobStatusOnRelease", IDLE) or IDLE
            for name in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode", "JobStatusOnRelease"):
                ad.pop(name, None)
            if reason:
                ad["ReleaseReason"] = reason
            self._log(key, 13, now, f"\t{one_line(reason or 'via cedar')}\n")
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
            if int_attr(ad, "JobStatus") == COMPLETED:  # a real schedd leaves it unset otherwise
                ad["CompletionDate"] = now
            self.history.append(ad)
        if key[0] not in self.factories and not any(c == key[0] for c, _ in self.jobs):
            self.clusters.pop(key[0], None)

    # --- the simulated execution -----------------------------------------------------------

    def step(self, now: float | None = None) -> None:
        """Advance the state machine: Idle → Running, Running for ``run_time`` → Completed
        (then into the history).  Held/removed jobs are left alone."""
        now = self.clock() if now is None else now
        with self.lock:
            for key in sorted(self.jobs):
                job = self.jobs[key]
                status = int_attr(self.merged(*key) or ClassAd(), "JobStatus")
                if status == IDLE:
                    start = self.can_start
                    if start is not None and not start(self.merged(*key) or job.ad):
                        continue
                    job.ad["JobStatus"] = RUNNING
                    job.ad["LastJobStatus"] = IDLE
                    job.ad["EnteredCurrentStatus"] = int(now)
                    job.ad["JobCurrentStartDate"] = int(now)
                    # what a real schedd/shadow add when a job is matched and starts
                    job.ad["RemoteHost"] = f"slot1@{self.name}"
                    for attr in ("JobStartDate", "FirstJobMatchDate"):
                        if attr not in job.ad:
                            job.ad[attr] = int(now)
                    for attr in ("LastMatchTime", "ShadowBday", "JobCurrentStartExecutingDate"):
                        job.ad[attr] = int(now)
                    for attr in ("NumJobStarts", "NumJobMatches", "JobRunCount", "NumShadowStarts"):
                        job.ad[attr] = int_attr(job.ad, attr) + 1
                    self.started[key] = now
                    self._spawn_record(key, int(now))
                    self._log(key, 1, int(now), f"\tSlotName: slot1@{self.name}\n")
                elif status == RUNNING:
                    began = self.started.setdefault(key, now)
                    if now - began >= self.run_time:
                        job.ad["JobStatus"] = COMPLETED
                        job.ad["LastJobStatus"] = RUNNING
                        job.ad["LastRemoteHost"] = job.ad.get("RemoteHost", f"slot1@{self.name}")
                        job.ad.pop("RemoteHost", None)
                        job.ad["ExitCode"] = 0
                        job.ad["ExitBySignal"] = False
                        # as the schedd: the runs' sum, and the last run on its own
                        previous = job.ad.get("RemoteWallClockTime")
                        summed = previous if isinstance(previous, (int, float)) else 0.0
                        job.ad["RemoteWallClockTime"] = float(summed + now - began)
                        job.ad["LastRemoteWallClockTime"] = float(now - began)
                        job.ad["EnteredCurrentStatus"] = int(now)
                        job.ad["NumJobCompletions"] = int_attr(job.ad, "NumJobCompletions") + 1
                        self._end_run(key, int(now), vacated=False, exited=True)
                        self._spooled_output(key, job, int(now))
                        self._log(key, 5, int(now), TERMINATED)
                        if not leave_in_queue(self.merged(*key) or job.ad):
                            self._retire(key, int(now))
                elif status in (COMPLETED, REMOVED) and not leave_in_queue(
                    self.merged(*key) or job.ad
                ):
                    self._retire(key, int(now))
            if self.factories:
                self.materialize(now)

    # --- the epoch history (spec 08 §5.1, §5.2) --------------------------------------------

    def _epoch_record(self, ad: ClassAd, kind: str, now: int) -> ClassAd:
        record = ad
        record["RunInstanceID"] = max(int_attr(ad, "NumShadowStarts") - 1, 0)
        record["EpochAdType"] = kind
        record["EpochWriteDate"] = now
        self.epochs.append(record)
        return record

    def _spawn_record(self, key: tuple[int, int], now: int) -> None:
        """The SPAWN record a shadow writes when it starts a run: a few job attributes."""
        merged = self.merged(*key) or ClassAd()
        record = ClassAd()
        for name in ("ClusterId", "ProcId", "NumShadowStarts", "Owner", "ShadowBday"):
            if name in merged:
                record.set_expr(name, merged.lookup(name))
        self._epoch_record(record, "SPAWN", now)

    def _end_run(
        self, key: tuple[int, int], now: int, *, vacated: bool, exited: bool = False
    ) -> None:
        """The EPOCH record of a run that ends (the whole job ad, ``JobStatus`` still 2, the
        outcome in ExitCode/VacateReason), then the transfer records of its URL transfers."""
        merged = self.merged(*key)
        if merged is None or "NumShadowStarts" not in merged:
            return  # a real shadow writes no epoch record then either
        record = merged.copy()
        record["JobStatus"] = RUNNING
        if vacated:
            record["VacateReason"] = "Job vacated by schedd"
            record["VacateReasonCode"] = 1022
        elif not exited:
            record.pop("ExitCode", None)
        self._epoch_record(record, "EPOCH", now)
        for kind, prefix, urls in (
            ("INPUT", "Input", _urls(merged.get("TransferInput"))),
            ("OUTPUT", "Output", _urls(merged.get("TransferOutputRemaps"))),
        ):
            if urls and (exited or kind == "INPUT"):
                self._transfer_record(merged, kind, prefix, urls, now)

    def _transfer_record(
        self, merged: ClassAd, kind: str, prefix: str, urls: list[str], now: int
    ) -> None:
        """A simulated file-transfer-plugin record (spec 08 §5.2): one result per URL."""
        record = ClassAd()
        for name in ("ClusterId", "ProcId", "Owner", "NumShadowStarts", "RemoteHost"):
            if name in merged:
                record.set_expr(name, merged.lookup(name))
        record["TransferClass"] = kind
        direction = "download" if kind == "INPUT" else "upload"
        results = [
            {
                "TransferUrl": url,
                "TransferType": direction,
                "TransferSuccess": True,
                "TransferProtocol": url.split("://", 1)[0],
                "TransferStartTime": now,
                "TransferEndTime": now,
            }
            for url in urls
        ]
        record[f"{prefix}PluginResultList"] = results
        schemes = ",".join(sorted({url.split("://", 1)[0] for url in urls}))
        record[f"{prefix}PluginInvocations"] = [
            {
                "Result": 0,
                "Schemes": schemes,
                "ExitCode": 0,
                "ExitBySignal": False,
                "TransferClass": 1 if kind == "INPUT" else 2,
                "PluginBasename": "curl_plugin",
            }
        ]
        self._epoch_record(record, kind, now)

    def _log(self, key: tuple[int, int], code: int, now: int, text: str) -> None:
        """An event in a spooled job's own event log (spool_area.log_event)."""
        merged = self.merged(*key)
        if merged is not None and "SUBMIT_Iwd" in merged:
            log_event(self.spool, merged, *key, code, now, text)

    def _spooled_output(self, key: tuple[int, int], job: Job, now: int) -> None:
        """A spooled job's simulated output goes into its spool directory (spool_area)."""
        merged = self.merged(*key) or job.ad
        if "SUBMIT_Iwd" not in merged:
            return
        simulate_output(self.spool, merged, *key)
        if "SpooledOutputFiles" in merged:
            job.ad["SpooledOutputFiles"] = merged["SpooledOutputFiles"]
        job.ad["CompletionDate"] = now


def _urls(value: object) -> list[str]:
    """The URLs (``scheme://...``) in a transfer list or remap string."""
    if not isinstance(value, str):
        return []
    parts = re.split(r"[,;]", value)
    urls = []
    for part in parts:
        text = part.split("=", 1)[-1].strip().strip('"').strip()
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):
            urls.append(text)
    return urls


__all__ = [
    "ATTRIBUTE_NAME",
    "COMPLETED",
    "HELD",
    "IDLE",
    "IMMUTABLE",
    "LIST_SEPARATORS",
    "MAX_ATTRIBUTE_SIZE",
    "MAX_ATTRS_PER_JOB",
    "MAX_JOB_AD_SIZE",
    "SECURE",
    "MAX_JOBS",
    "MAX_TXN_EDITS",
    "REMOVED",
    "RUNNING",
    "SUSPENDED",
    "TRANSFERRING",
    "Job",
    "JobQueue",
    "QueueError",
    "Transaction",
    "int_attr",
    "matches",
    "owner_of",
]
