"""Spooling a job's input sandbox (488) and fetching its output sandbox (489), client side.

What the job ads say decides what travels (spec 07 §3, §6.4, §8.1); the bytes themselves go
through the sub-protocol of :mod:`cedar.commands.filetransfer`.  Everything here is a pure
function of job ads or a protocol coroutine; the :class:`~cedar.commands.schedd.Schedd` methods
only connect and call them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cedar.auth.client import CommandSession
from cedar.auth.version import CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd, get_classad, parse_expr, unparse
from cedar.commands.errors import SpoolRefused
from cedar.commands.filetransfer import (
    ProgressCallback,
    SandboxDestination,
    TransferReport,
    UploadItem,
    download_sandbox,
    expand_inputs,
    upload_sandbox,
)
from cedar.errors import CommandError, ConnectionClosed, InvalidArgument, ProtocolError
from cedar.jobid import JobId, ids_constraint_text, match_job_id
from cedar.stream.protocol import Protocol, Receive, Send

#: ``HoldReasonCode`` of a job waiting for its input sandbox (spec 07 §3.1).
SPOOLING_HOLD_CODE = 16
SPOOLING_HOLD_REASON = "Spooling input data files"
#: Keeps a completed job in the queue for 10 days or until its output was fetched once.
LEAVE_JOB_IN_QUEUE = (
    "JobStatus == 4 && (time() - (CompletionDate ?: time())) < 864000 && "
    "(StageOutFinish ?: 0) < EnteredCurrentStatus"
)


def spooling_hold(cluster_ad: dict[str, str], proc_ads: list[dict[str, str]]) -> None:
    """Put a submission (name → wire text) on the spooling hold, as ``condor_submit -spool`` does.

    Adds only what is missing (and the spooling ``LeaveJobInQueue`` unless the submit file asked
    for one); the submit language decides the rest (file-transfer settings).
    """
    if str(cluster_ad.get("hold", "")).lower() == "true":
        raise ValueError("hold = true cannot be combined with spooling")
    cluster_ad.setdefault("HoldReasonCode", str(SPOOLING_HOLD_CODE))
    cluster_ad.setdefault("HoldReason", f'"{SPOOLING_HOLD_REASON}"')
    if cluster_ad.get("LeaveJobInQueue", "false").strip().lower() in ("false", "0"):
        cluster_ad["LeaveJobInQueue"] = LEAVE_JOB_IN_QUEUE  # as condor_submit -spool does
    cluster_ad.setdefault("ShouldTransferFiles", '"YES"')
    cluster_ad.setdefault("WhenToTransferOutput", '"ON_EXIT"')
    cluster_ad.pop("JobStatus", None)
    for ad in (cluster_ad, *proc_ads):
        _remap_std_streams(ad)
    for proc_ad in proc_ads:
        proc_ad["JobStatus"] = "5"


def _literal_string(text: str | None) -> str | None:
    """The string a wire value text denotes, if it is a string literal."""
    if text is None:
        return None
    holder = ClassAd()
    holder.set_expr("value", parse_expr(text, old=True))
    value = holder.get("value")
    return value if isinstance(value, str) else None


def _remap_std_streams(ad: dict[str, str]) -> None:
    """stdout/stderr paths with a directory become ``_condor_stdout``/``_condor_stderr`` plus a
    remap, as ``condor_submit -spool`` sends them (spec 07 §3.1)."""
    remaps = []
    for attr, spooled in (("Out", "_condor_stdout"), ("Err", "_condor_stderr")):
        path = _literal_string(ad.get(attr))
        if path and "/" in path and path != "/dev/null":
            ad[attr] = f'"{spooled}"'
            remaps.append(f"{spooled}={path}")
    if remaps:
        existing = _literal_string(ad.get("TransferOutputRemaps"))
        joined = ";".join([*remaps, existing] if existing else remaps)
        holder = ClassAd()
        holder["TransferOutputRemaps"] = joined
        ad["TransferOutputRemaps"] = str(holder.lookup("TransferOutputRemaps"))


# --------------------------------------------------------------------------- what is spooled


def _text(ad: Mapping[str, object], name: str) -> str | None:
    value = ad.get(name)
    return value if isinstance(value, str) and value else None


def _split_list(text: str | None) -> list[str]:
    if not text:
        return []
    return [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]


def _false(ad: Mapping[str, object], name: str) -> bool:
    value = ad.get(name)
    return value is False or (isinstance(value, str) and value.lower() == "false")


def input_items(job: Mapping[str, object]) -> list[UploadItem]:
    """The input sandbox of one job ad as the client submitted it (spec 07 §8.1).

    ``TransferInput`` entries, then ``In`` (unless ``/dev/null``), then ``Cmd`` (unless
    ``TransferExecutable`` is false), relative to ``Iwd``.
    """
    iwd = _text(job, "SUBMIT_Iwd") or _text(job, "Iwd") or os.getcwd()
    entries = _split_list(_text(job, "SUBMIT_TransferInput") or _text(job, "TransferInput"))
    stdin = _text(job, "SUBMIT_In") or _text(job, "In")
    if stdin and stdin != "/dev/null" and not _false(job, "TransferIn"):
        entries.append(stdin)
    proxy = _text(job, "x509userproxy")
    if proxy:
        entries.insert(0, proxy)
    cmd = _text(job, "SUBMIT_Cmd") or _text(job, "Cmd")
    if cmd and not _false(job, "TransferExecutable"):
        entries.append(cmd)
    return expand_inputs(entries, iwd)


# --------------------------------------------------------------------------- where output goes


def unspooled(job: Mapping[str, object]) -> ClassAd:
    """The job ad with every ``SUBMIT_<X>`` put back as ``<X>`` (spec 07 §6.4)."""
    ad = ClassAd()
    for name in job:
        ad[name] = job[name]
    for name in list(job):
        if name.lower().startswith("submit_") and len(name) > 7:
            ad[name[7:]] = job[name]
    return ad


def parse_remaps(text: str | None) -> dict[str, str]:
    """``"src=dst;src2=dst2"`` → ``{src: dst}`` (``\\;`` and ``\\=`` escape the separators)."""
    remaps: dict[str, str] = {}
    if not text:
        return remaps
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ";":
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    for part in parts:
        src, sep, dst = part.partition("=")
        if sep and src.strip() and dst.strip():
            remaps[src.strip()] = dst.strip()
    return remaps


def output_destination(
    job: Mapping[str, object], destination: str | Path | None
) -> SandboxDestination:
    """Where a job's output goes: its original ``Iwd`` and remaps, or below ``destination``.

    With an explicit ``destination`` every file (remapped ones too) must land below it;
    without one the job's own paths are used as the real tools do (absolute remaps allowed).
    """
    ad = unspooled(job)
    remaps = parse_remaps(_text(ad, "TransferOutputRemaps"))
    user_log = _text(ad, "UserLog")
    # below an explicit destination an absolute log path is not followed: the log lands there
    # under its own name
    follow_log = destination is None or not os.path.isabs(user_log or "")
    if user_log and os.path.basename(user_log) != user_log and follow_log:
        remaps.setdefault(os.path.basename(user_log), user_log)
    if destination is not None:
        return SandboxDestination(Path(destination), remaps)
    iwd = _text(ad, "Iwd")
    if not iwd:
        raise CommandError("the job ad has no Iwd; pass a destination directory")
    return SandboxDestination(Path(iwd), remaps, allow_absolute_remaps=True)


# --------------------------------------------------------------------------- constraints


def job_ids_constraint(spec: str | Iterable[str] | int) -> str:
    """A 489 constraint for job ids (``"5"``, ``"5.0"``, a list of them) or a constraint text."""
    if isinstance(spec, int):
        return unparse(JobId(spec).constraint(), old=True)
    specs = [spec] if isinstance(spec, str) else list(spec)
    jobs = []
    for item in specs:
        text = str(item).strip()
        job = match_job_id(text)
        if job is not None:
            jobs.append(job)
        elif len(specs) == 1:
            return text  # a constraint expression, as the bindings accept it
        else:
            raise InvalidArgument(f"{text[:40]!r} is not a job id")
    combined = ids_constraint_text(jobs)
    if combined is None:
        raise InvalidArgument("no job ids given")
    return combined


# --------------------------------------------------------------------------- 488 and 489


@dataclass
class SpooledJob:
    """One job whose input sandbox was sent."""

    cluster: int
    proc: int
    report: TransferReport


@dataclass
class RetrievedJob:
    """One job whose output sandbox was received: its ad and where the files went."""

    cluster: int
    proc: int
    ad: ClassAd
    directory: Path
    report: TransferReport
    files: list[Path] = field(default_factory=list)


def spool_protocol(
    session: CommandSession,
    jobs: list[tuple[int, int, list[UploadItem]]],
    *,
    progress: ProgressCallback | None = None,
    version: str = CEDAR_VERSION_STRING,
) -> Protocol[list[SpooledJob]]:
    """SPOOL_JOB_FILES_WITH_PERMS (488) after the command started (spec 07 §5.1)."""
    conn = session.conn
    if not jobs:
        raise ValueError("nothing to spool: no jobs")
    writer = session.payload_writer()
    writer.put_string(version).put_int(len(jobs))
    yield Send(writer)
    ids = conn.writer()
    for cluster, proc, _items in jobs:
        ids.put_int(cluster).put_int(proc)
    yield Send(ids)
    done: list[SpooledJob] = []
    for cluster, proc, items in jobs:
        try:
            report = yield from upload_sandbox(conn, items, final_transfer=False, progress=progress)
        except ConnectionClosed as exc:
            if done:
                raise
            raise SpoolRefused(
                f"the schedd refused to accept the input files of job {cluster}.{proc} (it closed "
                "the connection: the job is unknown, not yours, already spooled, or held for "
                "another reason)"
            ) from exc
        report.raise_for_failure(f"spooling the input files of job {cluster}.{proc} failed")
        done.append(SpooledJob(cluster, proc, report))
    reply = yield Receive()
    if reply.get_int() != 1:
        raise CommandError("the schedd reported a failure after receiving the input files")
    return done


def retrieve_protocol(
    session: CommandSession,
    constraint: str,
    *,
    destination: str | Path | None = None,
    progress: ProgressCallback | None = None,
    max_jobs: int = 100_000,
    max_bytes: int | None = None,
    version: str = CEDAR_VERSION_STRING,
) -> Protocol[list[RetrievedJob]]:
    """TRANSFER_DATA_WITH_PERMS (489) after the command started (spec 07 §6.1)."""
    conn = session.conn
    writer = session.payload_writer()
    writer.put_string(version).put_string(constraint)
    yield Send(writer)
    count = (yield Receive()).get_int()
    if count < 0 or count > max_jobs:
        raise ProtocolError(f"the schedd announced {count} jobs to send")
    jobs: list[RetrievedJob] = []
    for _ in range(count):
        ad = get_classad((yield Receive()))
        cluster = ad.get("ClusterId")
        proc = ad.get("ProcId")
        if not isinstance(cluster, int) or not isinstance(proc, int):
            raise ProtocolError("a job ad of TRANSFER_DATA has no ClusterId/ProcId")
        target = output_destination(ad, destination)
        report = yield from download_sandbox(
            conn, target, progress=progress, max_bytes=max_bytes, who="cedar"
        )
        if not report.ok:
            report.raise_for_failure(f"fetching the output of job {cluster}.{proc} failed")
        files = [target.resolve(name)[0] for name in report.files]
        jobs.append(
            RetrievedJob(
                cluster, proc, ad, target.root, report, [f for f in files if f is not None]
            )
        )
    yield Send(conn.writer().put_int(1))
    return jobs


__all__ = [
    "LEAVE_JOB_IN_QUEUE",
    "SPOOLING_HOLD_CODE",
    "SPOOLING_HOLD_REASON",
    "RetrievedJob",
    "SpoolRefused",
    "SpooledJob",
    "input_items",
    "job_ids_constraint",
    "output_destination",
    "parse_remaps",
    "retrieve_protocol",
    "spool_protocol",
    "spooling_hold",
    "unspooled",
]
