"""The mock schedd's spool area and what spooling does to job ads (the model half).

Follows spec 07 as the real schedd behaves: the spooling hold and the rewrite at commit (§3.2),
``LeaveJobInQueue`` (§3.4) and the list of files sent back (§8.2).  The wire handlers for 488
and 489 are in :mod:`cedar.daemons.spool`.

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
import os
import shutil
import tempfile
import time
from pathlib import Path

from cedar.classad_wire import ClassAd, parse_expr
from cedar.commands.filetransfer import UploadItem
from cedar.commands.spool import SPOOLING_HOLD_CODE, SPOOLING_HOLD_REASON, parse_remaps
from cedar.errors import CedarError

HELD, IDLE, REMOVED, COMPLETED = 5, 1, 3, 4
HOLD_ATTRS = ("HoldReason", "HoldReasonCode", "HoldReasonSubCode")
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
    for name in HOLD_ATTRS:
        if name in cluster_ad and name not in proc_ad:
            proc_ad.set_expr(name, cluster_ad.lookup(name))
    rewrite_for_spool(merged, proc_ad, area.job_dir(cluster, proc))
    return True


def drop_cluster_hold(cluster_ad: ClassAd) -> None:
    """The spooling hold lives in the proc ads once they are committed."""
    for name in HOLD_ATTRS:
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
                while block := handle.read(1 << 20):
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
        stream = ad.get(attr)
        if isinstance(stream, str) and stream and stream != "/dev/null":
            (job_dir / os.path.basename(stream)).write_text(text)
    if spooled:
        ad["SpooledOutputFiles"] = ",".join(spooled)


_USAGE = ("Run Remote", "Run Local", "Total Remote", "Total Local")
_BYTES = ("Run Bytes Sent", "Run Bytes Received", "Total Bytes Sent", "Total Bytes Received")
#: The body of a job-terminated event (the reference reader needs the usage and byte lines).
TERMINATED = (
    "\t(1) Normal termination (return value 0)\n"
    + "".join(f"\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  {w} Usage\n" for w in _USAGE)
    + "".join(f"\t0  -  {w} By Job\n" for w in _BYTES)
)


def one_line(text: object) -> str:
    """A reason as one line of an event log (its lines end an event's body)."""
    return " ".join(str(text).split())


def log_event(
    area: SpoolArea, ad: ClassAd, cluster: int, proc: int, code: int, now: int, text: str
) -> None:
    """Append an event to a spooled job's own event log (``UserLog``, in its spool directory)
    as the real shadow writes it there: ``NNN (CCC.PPP.000) YYYY-MM-DD HH:MM:SS text``, the
    body lines, ``...`` (seen in the real 25.13.2 pool's spool; times are the pool's local
    time).  A job without a log or a spool directory has none."""
    job_dir = area.job_dir(cluster, proc)
    log_name = ad.get("UserLog")
    if not isinstance(log_name, str) or not log_name or not job_dir.is_dir():
        return
    path = job_dir / os.path.basename(log_name)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    if not path.exists() and code != 0:  # the schedd wrote the submit event first
        queued = ad.get("QDate")
        log_event(area, ad, cluster, proc, 0, queued if isinstance(queued, int) else now, "")
    heads = {
        0: "Job submitted from host: <127.0.0.1:0>",
        1: "Job executing on host: <127.0.0.1:0>",
        5: "Job terminated.",
        12: "Job was held.",
        13: "Job was released.",
    }
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"{code:03d} ({cluster:03d}.{proc:03d}.000) {stamp} {heads[code]}\n{text}...\n")


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


def leave_in_queue(ad: ClassAd) -> bool:
    """Whether ``LeaveJobInQueue`` keeps a finished job (and its spool) in the queue."""
    if "LeaveJobInQueue" not in ad:
        return False
    with contextlib.suppress(CedarError):
        return ad.eval("LeaveJobInQueue") is True
    return False


__all__ = [
    "TERMINATED",
    "HOLD_ATTRS",
    "SpoolArea",
    "commit_spooled",
    "drop_cluster_hold",
    "leave_in_queue",
    "log_event",
    "one_line",
    "on_spooling_hold",
    "output_items",
    "rewrite_for_spool",
    "simulate_output",
]
