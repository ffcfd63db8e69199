"""The mock schedd's wire handlers for spooling: 488 (accept an input sandbox) and 489 (serve
the output), as the real schedd behaves (spec 07 §5, §6): the refusals of 488 (a silent close),
files received into ``<job dir>.tmp`` and moved into place only after a successful transfer,
the release after the spool and the removal after a failed one (§3.3), and
``StageOutStart``/``StageOutFinish`` around 489 (§3.4).  The model half is
:mod:`cedar.daemons.spool_area`.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from cedar.classad_wire import ClassAd, parse_expr, put_classad
from cedar.classad_wire.constraints import matches
from cedar.commands.filetransfer import SandboxDestination, download_sandbox, upload_sandbox
from cedar.commands.spool import SPOOLING_HOLD_REASON
from cedar.daemons.spool_area import (
    COMPLETED,
    HELD,
    HOLD_ATTRS,
    IDLE,
    REMOVED,
    SpoolArea,
    on_spooling_hold,
    output_items,
)
from cedar.errors import CedarError
from cedar.stream.protocol import Protocol, Receive, Send

if TYPE_CHECKING:
    from cedar.daemons.daemon import CommandRequest
    from cedar.daemons.job_queue import JobQueue

log = logging.getLogger(__name__)

#: Bound on the job ids one 488 may name.
MAX_SPOOL_JOBS = 100_000


def _status(ad: ClassAd) -> int:
    value = ad.get("JobStatus")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
                for name in HOLD_ATTRS:
                    ad.pop(name, None)


# --------------------------------------------------------------------------- 489


def _matching(
    queue: JobQueue, request: CommandRequest, constraint: str
) -> Iterator[tuple[int, int]]:
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
            finished = queue.jobs.get(key)
            if finished is not None and "StageOutStart" in finished.ad:
                finished.ad["StageOutFinish"] = finish


__all__ = ["handle_spool", "handle_transfer_data"]
