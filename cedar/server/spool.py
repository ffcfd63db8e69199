"""The mock schedd's spool: accepting input sandboxes (488) and serving output (489).

Follows spec 07 as the real schedd behaves: the spooling hold and the rewrite at commit (§3.2),
the refusals of 488 (§5.3, a silent close), files received into ``<job dir>.tmp`` and moved into
place only after a successful transfer, the release after the spool and the removal after a
failed one (§3.3), ``StageOutStart``/``StageOutFinish`` around 489 (§3.4) and the list of files
sent back (§8.2).

The mock does not run anything.  When a spooled job "completes" (the queue's simulated state
machine), :func:`simulate_output` writes what a job would have left in its spool directory:
its stdout (``Out``) is a manifest of the input sandbox it was given (one line per file:
relative name, size, SHA-256), its stderr (``Err``) is empty, and every ``TransferOutput``
entry that does not exist yet is created with the text ``output <name> of job C.P``.  Names
already in the sandbox (an input listed as output) come back unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from cedar.classad_wire import ClassAd, parse_expr, put_classad
from cedar.commands.filetransfer import (
    SandboxDestination,
    UploadItem,
    download_sandbox,
    upload_sandbox,
)
from cedar.commands.spool import SPOOLING_HOLD_CODE, SPOOLING_HOLD_REASON, parse_remaps
from cedar.errors import CedarError
from cedar.stream.protocol import Protocol, Receive, Send

if TYPE_CHECKING:
    from cedar.server.daemon import CommandRequest
    from cedar.server.schedd import JobQueue

log = logging.getLogger(__name__)

HELD, IDLE, REMOVED, COMPLETED = 5, 1, 3, 4
#: Bound on the job ids one 488 may name.
MAX_SPOOL_JOBS = 100_000
_HOLD_ATTRS = ("HoldReason", "HoldReasonCode", "HoldReasonSubCode")
_REWRITTEN = ("Cmd", "In", "TransferInput", "UserLog", "x509userproxy", "DataReuseManifestSHA256")


class SpoolArea:
    """A per-pool spool directory: ``<root>/<C % 10000>/<P % 10000>/clusterC.procP.subproc0``.

    Without a ``root`` a private temporary directory is made on first use.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self._root = Path(root) if root is not None else None

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="cedar-spool-"))
        return self._root

    def job_dir(self, cluster: int, proc: int) -> Path:
        return (
            self.root
            / str(cluster % 10000)
            / str(proc % 10000)
            / f"cluster{cluster}.proc{proc}.subproc0"
        )

    def remove_job(self, cluster: int, proc: int) -> None:
        """Delete a job's spool directory (when it leaves the queue or its staging failed)."""
        path = self.job_dir(cluster, proc)
        for victim in (path, path.with_name(path.name + ".tmp")):
            shutil.rmtree(victim, ignore_errors=True)


# --------------------------------------------------------------------------- the job ads


def _status(ad: ClassAd) -> int:
    value = ad.get("JobStatus")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def on_spooling_hold(ad: ClassAd) -> bool:
    """Held waiting for its sandbox: code 16, or (legacy) the reason text (spec 07 §3.1)."""
    code = ad.get("HoldReasonCode")
    if isinstance(code, int) and not isinstance(code, bool):
        return code == SPOOLING_HOLD_CODE
    return ad.get("HoldReason") == SPOOLING_HOLD_REASON


def rewrite_for_spool(merged: ClassAd, proc_ad: ClassAd, spool_dir: Path) -> None:
    """The schedd's rewrite at commit (spec 07 §3.2), applied to the proc ad ``proc_ad``."""
    if "SUBMIT_Iwd" in merged:
        return
    iwd = merged.get("Iwd")
    if isinstance(iwd, str):
        proc_ad["SUBMIT_Iwd"] = iwd
    else:
        proc_ad.set_expr("SUBMIT_Iwd", parse_expr("undefined"))
    proc_ad["Iwd"] = str(spool_dir)
    remaps = merged.get("TransferOutputRemaps")
    if isinstance(remaps, str):
        kept = {k: v for k, v in parse_remaps(remaps).items() if "://" in v}
        local = {k: v for k, v in parse_remaps(remaps).items() if "://" not in v}
        if local:
            proc_ad["SUBMIT_TransferOutputRemaps"] = remaps
            if kept:
                proc_ad["TransferOutputRemaps"] = ";".join(f"{k}={v}" for k, v in kept.items())
            else:
                proc_ad.set_expr("TransferOutputRemaps", parse_expr("undefined"))
    for name in _REWRITTEN:
        value = merged.get(name)
        if not isinstance(value, str) or not value or value == "/dev/null":
            continue
        if name == "Cmd" and merged.get("TransferExecutable") is False:
            continue
        if name == "In" and merged.get("TransferIn") is False:
            continue
        if name == "TransferInput":
            keep = merged.get("PreserveRelativePaths") is True
            parts = [p.strip() for p in value.split(",") if p.strip()]
            new = ",".join(
                p
                if "://" in p or (keep and not os.path.isabs(p))
                else os.path.basename(p.rstrip("/"))
                for p in parts
            )
        else:
            new = os.path.basename(value)
        if new != value:
            proc_ad[f"SUBMIT_{name}"] = value
            proc_ad[name] = new


def commit_spooled(
    area: SpoolArea, cluster_ad: ClassAd, proc_ad: ClassAd, cluster: int, proc: int
) -> bool:
    """At commit: rewrite a new job on the spooling hold (true if it is one).

    The hold attributes are copied into the proc ad so each proc can be released on its own;
    the caller then drops them from the cluster ad.
    """
    merged = cluster_ad.copy()
    for name in proc_ad:
        merged.set_expr(name, proc_ad.lookup(name))
    if not on_spooling_hold(merged):
        return False
    for name in _HOLD_ATTRS:
        if name in cluster_ad and name not in proc_ad:
            proc_ad.set_expr(name, cluster_ad.lookup(name))
    rewrite_for_spool(merged, proc_ad, area.job_dir(cluster, proc))
    return True


def drop_cluster_hold(cluster_ad: ClassAd) -> None:
    """The spooling hold lives in the proc ads once they are committed."""
    for name in _HOLD_ATTRS:
        cluster_ad.pop(name, None)


def simulate_output(area: SpoolArea, ad: ClassAd, cluster: int, proc: int) -> None:
    """What a spooled job leaves in its spool directory when the mock completes it (see above)."""
    job_dir = area.job_dir(cluster, proc)
    if not job_dir.is_dir():
        return
    lines = []
    for path in sorted(job_dir.rglob("*")):
        if path.is_file():
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda h=handle: h.read(1 << 20), b""):
                    digest.update(block)
            rel = path.relative_to(job_dir).as_posix()
            lines.append(f"{rel} {path.stat().st_size} {digest.hexdigest()}\n")
    outputs = [p.strip() for p in str(ad.get("TransferOutput") or "").split(",") if p.strip()]
    spooled = []
    for name in outputs:
        target = job_dir / os.path.basename(name)
        if not target.exists():
            target.write_text(f"output {name} of job {cluster}.{proc}\n")
        spooled.append(os.path.basename(name))
    for attr, text in (("Out", "".join(lines)), ("Err", "")):
        name = ad.get(attr)
        if isinstance(name, str) and name and name != "/dev/null":
            (job_dir / os.path.basename(name)).write_text(text)
    if spooled:
        ad["SpooledOutputFiles"] = ",".join(spooled)


def output_items(area: SpoolArea, ad: ClassAd, cluster: int, proc: int) -> list[UploadItem]:
    """The files 489 sends for a job (spec 07 §8.2), as they are named in its spool directory."""
    job_dir = area.job_dir(cluster, proc)
    if not job_dir.is_dir():
        return []
    listed = ad.get("SpooledOutputFiles")
    if not isinstance(listed, str):
        listed = ad.get("TransferOutput")
    names: list[str] = []
    if isinstance(listed, str):
        names = [os.path.basename(n.strip()) for n in listed.split(",") if n.strip()]
        for attr in ("Out", "Err"):
            value = ad.get(attr)
            if isinstance(value, str) and value and value != "/dev/null":
                names.append(os.path.basename(value))
    else:
        since = ad.get("StageInFinish")
        exe = os.path.basename(str(ad.get("Cmd") or ""))
        for entry in sorted(job_dir.iterdir()):
            fresh = not isinstance(since, int) or entry.stat().st_mtime > since
            if entry.is_file() and entry.name != exe and fresh:
                names.append(entry.name)
    log_name = ad.get("UserLog")
    if isinstance(log_name, str) and (job_dir / os.path.basename(log_name)).is_file():
        names.append(os.path.basename(log_name))
    items: dict[str, UploadItem] = {}
    for name in names:
        if (job_dir / name).exists():
            items[name] = UploadItem(name, job_dir / name)
    return list(items.values())


# --------------------------------------------------------------------------- 488


def _move_in(staged: Path, final: Path) -> None:
    final.mkdir(parents=True, exist_ok=True)
    for entry in staged.iterdir():
        target = final / entry.name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(entry, target)
    staged.rmdir()


def handle_spool(queue: JobQueue, area: SpoolArea, request: CommandRequest) -> Protocol[None]:
    """SPOOL_JOB_FILES_WITH_PERMS (488), the schedd's side (spec 07 §5)."""
    conn = request.conn
    first = yield from request.read_payload()
    first.get_string()  # the client's version: cedar speaks only the modern variant
    count = first.get_int()
    if count <= 0 or count > MAX_SPOOL_JOBS:
        yield Send(conn.writer().put_int(0))
        return
    ids_message = yield Receive()
    ids = [(ids_message.get_int(), ids_message.get_int()) for _ in range(count)]
    now = int(queue.clock())
    with queue.lock:
        for cluster, proc in ids:
            ad = queue.merged(cluster, proc)
            if ad is None or not queue.may_edit(request.user, cluster):
                log.info("488: job %s.%s unknown or not the caller's; closing", cluster, proc)
                return
            if "StageInFinish" in ad:
                log.info("488: job %s.%s already spooled; closing", cluster, proc)
                return
            if _status(ad) == HELD and "HoldReasonCode" in ad and not on_spooling_hold(ad):
                log.info("488: job %s.%s is not in hold state for spooling; closing", cluster, proc)
                return
            queue.jobs[(cluster, proc)].ad["StageInStart"] = now
    for cluster, proc in ids:
        final = area.job_dir(cluster, proc)
        staged = final.with_name(final.name + ".tmp")
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir(parents=True, mode=0o700)
        try:
            report = yield from download_sandbox(conn, SandboxDestination(staged), who="SCHEDD")
        except CedarError:
            _staging_failed(queue, area, ids)
            raise
        if not report.ok:
            _staging_failed(queue, area, ids)
            yield Send(conn.writer().put_int(0))
            return
        _move_in(staged, final)
    yield Send(conn.writer().put_int(1))
    _release(queue, ids)


def _staging_failed(queue: JobQueue, area: SpoolArea, ids: list[tuple[int, int]]) -> None:
    now = int(queue.clock())
    with queue.lock:
        for cluster, proc in ids:
            job = queue.jobs.get((cluster, proc))
            if job is None:
                continue
            job.ad["JobStatus"] = REMOVED
            job.ad["RemoveReason"] = "Staging of job files failed"
            job.ad["EnteredCurrentStatus"] = now
            area.remove_job(cluster, proc)


def _release(queue: JobQueue, ids: list[tuple[int, int]]) -> None:
    now = int(queue.clock())
    with queue.lock:
        for cluster, proc in ids:
            job = queue.jobs.get((cluster, proc))
            if job is None:
                continue
            ad = job.ad
            ad.setdefault("StageInFinish", now)
            merged = queue.merged(cluster, proc) or ad
            if _status(merged) == HELD and on_spooling_hold(merged):
                ad["JobStatus"] = IDLE
                ad["EnteredCurrentStatus"] = now
                ad["ReleaseReason"] = "Data files spooled"
                ad["LastHoldReason"] = SPOOLING_HOLD_REASON
                for name in _HOLD_ATTRS:
                    ad.pop(name, None)


# --------------------------------------------------------------------------- 489


def _matching(
    queue: JobQueue, request: CommandRequest, constraint: str
) -> Iterator[tuple[int, int]]:
    from cedar.server.schedd import matches

    expr = parse_expr(constraint)
    for key in sorted(queue.jobs):
        ad = queue.merged(*key)
        if ad is not None and queue.may_edit(request.user, key[0]) and matches(expr, ad):
            yield key


def handle_transfer_data(
    queue: JobQueue, area: SpoolArea, request: CommandRequest
) -> Protocol[None]:
    """TRANSFER_DATA_WITH_PERMS (489), the schedd's side (spec 07 §6)."""
    conn = request.conn
    first = yield from request.read_payload()
    first.get_string()
    if first.at_end():
        yield Send(conn.writer().put_int(0))
        return
    constraint = first.get_string()
    now = int(queue.clock())
    try:
        with queue.lock:
            keys = list(_matching(queue, request, constraint))
            staged_out = []
            for key in keys:
                job = queue.jobs[key]
                if _status(queue.merged(*key) or job.ad) in (REMOVED, COMPLETED):
                    job.ad["StageOutStart"] = now
                    staged_out.append(key)
    except CedarError:
        yield Send(conn.writer().put_int(0))
        return
    yield Send(conn.writer().put_int(len(keys)))
    for cluster, proc in keys:
        with queue.lock:
            ad = queue.merged(cluster, proc) or ClassAd()
        writer = conn.writer()
        put_classad(writer, ad)
        yield Send(writer)
        items = output_items(area, ad, cluster, proc)
        report = yield from upload_sandbox(conn, items, final_transfer=True, who="SCHEDD")
        if not report.ok:
            yield Send(conn.writer().put_int(0))
            return
    reply = yield Receive()
    if reply.get_int() != 1:
        return
    finish = int(queue.clock())
    with queue.lock:
        for key in staged_out:
            job = queue.jobs.get(key)
            if job is not None and "StageOutStart" in job.ad:
                job.ad["StageOutFinish"] = finish


def leave_in_queue(ad: ClassAd) -> bool:
    """Whether ``LeaveJobInQueue`` keeps a finished job (and its spool) in the queue."""
    if "LeaveJobInQueue" not in ad:
        return False
    with contextlib.suppress(CedarError):
        return ad.eval("LeaveJobInQueue") is True
    return False


__all__ = [
    "SpoolArea",
    "handle_spool",
    "handle_transfer_data",
    "leave_in_queue",
    "on_spooling_hold",
    "output_items",
    "rewrite_for_spool",
    "simulate_output",
]
