"""Replay entries for 488 (spool) and 489 (transfer data), used by :mod:`cedar.capture.replay`.

The files themselves come from the recording: names, modes and bodies of every item are read
from the dissected conversation, so our client uploads exactly what the real one did (from a
temporary directory holding those files) and our server serves exactly what the real one sent.
Outcomes are checked too: the files our client received equal the recorded bodies, a refused
or failed spool raises the matching error.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cedar.capture.dissect import dissect
from cedar.capture.errors import Unreconstructible
from cedar.capture.replay_context import ReplayContext, mock_schedd
from cedar.capture.tcp import S2C
from cedar.classad_wire import ClassAd
from cedar.commands.filetransfer import FileTransferError, UploadItem
from cedar.commands.spool import SpoolRefused, retrieve_protocol, spool_protocol
from cedar.daemons.job_queue import Job, JobQueue
from cedar.jobid import parse_job_id

if TYPE_CHECKING:
    from cedar.auth.client import CommandSession
    from cedar.commands.base import Body
    from cedar.daemons.daemon import Daemon

#: Attributes of the transfer reports and job ads that legitimately differ in a replay: the
#: failure texts name local paths and addresses, the statistics count differently (the
#: reference counts 4 bytes per directory), the stage-out clock is ours.
TRANSFER_IGNORED = frozenset(
    {"holdreason", "transferstats", "stageoutstart", "stageoutfinish", "stageinstart"}
)


@dataclass
class RecordedItem:
    name: str
    directory: bool
    mode: int
    body: bytearray
    missing: bool = False
    has_mode: bool = False


def recorded_sandboxes(ctx: ReplayContext) -> list[list[RecordedItem]]:
    """Each job's items as the recording shows them (in order)."""
    jobs: list[list[RecordedItem]] = []
    current: RecordedItem | None = None
    for message in ctx.dissected.messages:
        kind, fields = message.kind, message.fields
        if kind == "FT_HEADER":
            jobs.append([])
        elif kind == "FT_NAME" and jobs:
            current = RecordedItem(fields["name"], False, 0, bytearray())
            jobs[-1].append(current)
        elif kind == "FT_MKDIR" and current is not None:
            current.directory, current.mode = True, fields["mode"]
        elif kind == "FT_MODE" and current is not None:
            current.mode, current.has_mode = fields["mode"], True
            current.missing = fields["mode"] == 0x1000000
        elif kind == "FT_BODY" and current is not None:
            current.body += message.payload or b""
    return jobs


_TEMPORARY: list[Path] = []


def _remove_temporary() -> None:
    for path in _TEMPORARY:
        shutil.rmtree(path, ignore_errors=True)


def _temporary_dir() -> Path:
    """A directory for one replay's files, removed when the process exits (the checks read
    them after the protocol ran)."""
    path = Path(tempfile.mkdtemp(prefix="cedar-replay-"))
    if not _TEMPORARY:
        atexit.register(_remove_temporary)
    _TEMPORARY.append(path)
    return path


def _write_items(root: Path, items: list[RecordedItem]) -> None:
    for item in items:
        target = root / item.name
        if item.directory:
            target.mkdir(parents=True, exist_ok=True)
            os.chmod(target, item.mode & 0o777 or 0o700)
        elif not item.missing:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bytes(item.body))
            os.chmod(target, item.mode & 0o777)


def _outcome(ctx: ReplayContext) -> str:
    """How the recorded exchange ended: ``ok``, ``failed`` (a report said so) or ``refused``."""
    kinds = [m.kind for m in ctx.dissected.messages]
    reports = [m for m in ctx.dissected.messages if m.kind == "FT_REPORT"]
    if any(m.fields.get("result") != 0 for m in reports):
        return "failed"
    if "FT_GO_AHEAD" not in kinds and "FT_REPORT" not in kinds and "SPOOL_JOB_IDS" in kinds:
        return "refused"
    return "ok"


def _version(ctx: ReplayContext, kind: str) -> str:
    for message in ctx.dissected.messages:
        if message.kind == kind:
            return str(message.fields["version"])
    return ""


# -- 488 ----------------------------------------------------------------------------------------


class _SpoolReplay:
    """The client body of a recorded 488 and the check of its outcome."""

    def __init__(self, ctx: ReplayContext) -> None:
        self.root = _temporary_dir()
        ids = next(m.fields["jobs"] for m in ctx.dissected.messages if m.kind == "SPOOL_JOB_IDS")
        sandboxes = recorded_sandboxes(ctx)
        if _outcome(ctx) == "refused":
            sandboxes = _sandboxes_elsewhere(ctx, ids) or sandboxes
        self.jobs: list[tuple[int, int, list[UploadItem]]] = []
        for index, job in enumerate(ids):
            parsed = parse_job_id(job, need_proc=True)
            cluster, proc = parsed.cluster, parsed.proc or 0
            items = sandboxes[index] if index < len(sandboxes) else []
            job_root = self.root / job
            job_root.mkdir()
            _write_items(job_root, items)
            if not items:  # refused before any item: upload the usual sandbox of the tree
                items = [RecordedItem("job.sh", False, 0o755, bytearray(b"#!/bin/sh\n"))]
                _write_items(job_root, items)
            self.jobs.append(
                (cluster, proc, [UploadItem(i.name, job_root / i.name, i.directory) for i in items])
            )
        self.version = _version(ctx, "SPOOL_REQUEST")

    def body(self, session: CommandSession) -> Any:
        try:
            return (yield from spool_protocol(session, self.jobs, version=self.version))
        except (SpoolRefused, FileTransferError) as exc:
            return exc


def _sandboxes_elsewhere(ctx: ReplayContext, ids: list[str]) -> list[list[RecordedItem]]:
    """The same jobs' files as another 488 of the capture sent them (a refused second spool
    is cut off before its items; its client was sending the very same files)."""
    for conv in dissect(ctx.capture):
        if conv.number == ctx.conversation.number or conv.command != ctx.dissected.command:
            continue
        other = ReplayContext(ctx.capture, ctx.conversation, conv)
        jobs = [m.fields["jobs"] for m in conv.messages if m.kind == "SPOOL_JOB_IDS"]
        if jobs and jobs[0] == ids and _outcome(other) == "ok":
            return recorded_sandboxes(other)
    return []


def spool_client(ctx: ReplayContext) -> Body[Any]:
    return _SpoolReplay(ctx).body  # the bound method keeps the temporary files alive


def check_spool(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    outcome = _outcome(ctx)
    if outcome == "refused" and not isinstance(result, SpoolRefused):
        return [f"the recorded schedd refused the spool; ours ended with {result!r}"]
    if outcome == "failed" and not isinstance(result, FileTransferError):
        return [f"the recorded spool failed; ours ended with {result!r}"]
    if outcome == "ok" and not (isinstance(result, list) and all(j.report.ok for j in result)):
        return [f"the recorded spool succeeded; ours ended with {result!r}"]
    return []


def spool_extra_ok(ctx: ReplayContext) -> bool:
    """A refused or failed 488 ends when a peer closes: what the other side had already
    pipelined (our client's next items, our server's ``I(0)``) depends on timing."""
    return _outcome(ctx) != "ok"


def spool_server(ctx: ReplayContext) -> Daemon:
    if _outcome(ctx) == "refused":
        raise Unreconstructible(
            "the schedd's refusal depends on queue state the recording lacks (a job already "
            "spooled, or held for another reason)"
        )
    queue = JobQueue(name="schedd", spool_dir=str(_temporary_dir()))
    owner = (ctx.user() or "nobody").partition("@")[0]
    ids = next(m.fields["jobs"] for m in ctx.dissected.messages if m.kind == "SPOOL_JOB_IDS")
    for job in ids:
        parsed = parse_job_id(job, need_proc=True)
        cluster, proc = parsed.cluster, parsed.proc or 0
        queue.clusters.setdefault(cluster, ClassAd({"Owner": owner, "ClusterId": cluster}))
        queue.jobs[(cluster, proc)] = Job(
            cluster,
            proc,
            ClassAd({"ProcId": proc, "JobStatus": 5, "HoldReasonCode": 16}),
        )
    return mock_schedd(ctx, queue)


# -- 489 ----------------------------------------------------------------------------------------


def _constraint(ctx: ReplayContext) -> str:
    for message in ctx.dissected.messages:
        if message.kind == "TRANSFER_DATA_REQUEST":
            return str(message.fields["constraint"])
    return "false"


def _job_ads(ctx: ReplayContext) -> list[ClassAd]:
    return [ad for m in ctx.dissected.messages if m.kind == "JOB_AD" for _, ad in m.ads]


class _TransferReplay:
    def __init__(self, ctx: ReplayContext) -> None:
        self.root = _temporary_dir()
        self.ctx = ctx

    def body(self, session: CommandSession) -> Any:
        return (
            yield from retrieve_protocol(
                session,
                _constraint(self.ctx),
                destination=self.root,
                version=_version(self.ctx, "TRANSFER_DATA_REQUEST"),
            )
        )


def transfer_client_skip(ctx: ReplayContext) -> str | None:
    if ctx.dissected.start == "raw" and ctx.messages(S2C, "AUTH_CHOSEN"):
        return (
            "cedar's client does not authenticate in-band after a raw start (spec 03 §2); "
            "it negotiates a session instead"
        )
    return None


def transfer_client(ctx: ReplayContext) -> Body[Any]:
    return _TransferReplay(ctx).body


def check_transfer(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    """Every recorded file body arrived with its bytes and mode (the last job's copy wins)."""
    if not isinstance(result, list):
        return [f"our client returned {result!r}"]
    problems = []
    recorded: dict[str, RecordedItem] = {}
    for items in recorded_sandboxes(ctx):
        for item in items:
            recorded[item.name] = item
    written = {
        name: p for job in result for name, p in zip(job.report.files, job.files, strict=True)
    }
    for name, item in recorded.items():
        if item.directory or item.missing:
            continue
        path = written.get(name)
        if path is None:
            problems.append(f"{name} was not written")
        elif path.read_bytes() != bytes(item.body):
            problems.append(f"{name}: the bytes written differ from the recorded body")
        elif item.mode and (path.stat().st_mode & 0o777) != (item.mode & 0o777):
            problems.append(f"{name}: mode {path.stat().st_mode & 0o777:o} != {item.mode:o}")
    return problems


def transfer_server(ctx: ReplayContext) -> Daemon:
    """A schedd holding the recorded jobs, their spool directories holding the recorded files."""
    queue = JobQueue(name="schedd", spool_dir=str(_temporary_dir()))
    daemon = mock_schedd(ctx, queue)
    sandboxes = recorded_sandboxes(ctx)
    for index, ad in enumerate(_job_ads(ctx)):
        cluster, proc = ad["ClusterId"], ad["ProcId"]
        queue.clusters.setdefault(cluster, ClassAd({"Owner": ad.get("Owner")}))
        queue.jobs[(cluster, proc)] = Job(cluster, proc, ad)
        job_dir = queue.spool.job_dir(cluster, proc)
        job_dir.mkdir(parents=True, exist_ok=True)
        _write_items(job_dir, sandboxes[index] if index < len(sandboxes) else [])
    return daemon


def spool_client_skip(ctx: ReplayContext) -> str | None:
    """Root reads a mode-000 file: the recorded "unreadable input" cannot be made here."""
    unreadable = any(
        i.has_mode and not i.directory and not i.missing and i.mode == 0 and not i.body
        for items in recorded_sandboxes(ctx)
        for i in items
    )
    if unreadable and os.geteuid() == 0:
        return "the recorded input was unreadable (mode 000), which root can read anyway"
    return None


__all__ = [
    "TRANSFER_IGNORED",
    "check_spool",
    "check_transfer",
    "recorded_sandboxes",
    "spool_client",
    "spool_client_skip",
    "spool_extra_ok",
    "spool_server",
    "transfer_client",
    "transfer_client_skip",
    "transfer_server",
]
