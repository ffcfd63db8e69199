"""``cedar submit --spool FILE`` and ``cedar transfer-data``: remote submission with files.

Like ``condor_submit -spool`` (submit on the spooling hold, send the input files, reschedule)
and ``condor_transfer_data`` (fetch the output of finished spooled jobs into their original
directories, or ``--destination``).  A progress bar goes to stderr, only when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from cedar.cli.schedd_options import add_common, schedd_from
from cedar.commands.filetransfer import TransferProgress
from cedar.submit_language import Submit


class ProgressBar:
    """One self-overwriting line per file on ``stream`` (a no-op unless it is a terminal)."""

    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self._shown = False

    def __call__(self, step: TransferProgress) -> None:
        if not self.enabled:
            return
        total = max(step.total_size, 1)
        filled = min(self.width, self.width * step.total_done // total)
        bar = "#" * filled + "-" * (self.width - filled)
        name = step.name if len(step.name) <= 30 else "…" + step.name[-29:]
        self.stream.write(
            f"\r[{bar}] {step.total_done * 100 // total:3d}% {_size(step.total_done)} {name:<30}"
        )
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


def run_spooled_submit(args: argparse.Namespace, description: Submit, out: TextIO) -> int:
    """``cedar submit --spool FILE``: submit on hold, send the input files, say so."""
    schedd = schedd_from(args)
    result = schedd.submit(description, spool=True)
    bar = ProgressBar()
    try:
        spooled = schedd.spool(result, progress=bar)
    finally:
        bar.close()
    if args.json:
        record = {
            "cluster": result.cluster,
            "procs": result.num_procs,
            "spooled": [
                {"job": f"{j.cluster}.{j.proc}", "files": j.report.files, "bytes": j.report.bytes}
                for j in spooled
            ],
        }
        out.write(json.dumps(record) + "\n")
        return 0
    out.write("Submitting job(s)" + "." * result.num_procs + "\n")
    out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    return 0


def _job_spec(ids: Sequence[str], constraint: str | None) -> Any:
    if constraint and ids:
        raise ValueError("give job ids or --constraint, not both")
    if constraint:
        return constraint
    if not ids:
        raise ValueError("give job ids (cluster or cluster.proc) or --constraint")
    return list(ids)


def run_transfer_data(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar transfer-data IDS|--constraint EXPR``: fetch output sandboxes."""
    spec = _job_spec(args.ids, args.constraint)
    if not args.json:
        out.write("Fetching data files...\n")
        out.flush()
    bar = ProgressBar()
    try:
        jobs = schedd_from(args).retrieve(spec, args.destination, progress=bar)
    finally:
        bar.close()
    if args.json:
        records = [
            {
                "job": f"{j.cluster}.{j.proc}",
                "directory": str(j.directory),
                "files": [str(f) for f in j.files],
                "bytes": j.report.bytes,
            }
            for j in jobs
        ]
        out.write(json.dumps(records) + "\n")
    return 0


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """``cedar transfer-data`` (``submit --spool`` is an option of ``submit``)."""
    p = argparse.ArgumentParser(
        prog=f"cedar {name}",
        description="fetch the output files of spooled jobs (like condor_transfer_data)",
    )
    p.add_argument("ids", nargs="*", help="cluster or cluster.proc ids")
    p.add_argument("--constraint", help="fetch the jobs matching this constraint")
    p.add_argument(
        "--destination",
        "-d",
        help="write every file below this directory (default: where each job asked)",
    )
    add_common(p)
    p.set_defaults(handler=run_transfer_data)
    return p


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run a parsed ``transfer-data`` command line."""
    return int(args.handler(args, out))


DEMO_SPOOL_SUBMIT = """\
executable              = analyse.sh
transfer_input_files    = data
should_transfer_files   = YES
when_to_transfer_output = ON_EXIT
output                  = logs/analysis.out
error                   = logs/analysis.err
transfer_output_files   = summary.txt
queue
"""


def demo_spool(schedd: Any, pool: Any, out: TextIO) -> bool:
    """The demo's remote submission: the input travels to the mock schedd, output comes back.

    The mock does not run the job; completing it writes a manifest of the input it received as
    the job's stdout and a ``summary.txt`` (see :mod:`cedar.daemons.spool`).
    """
    import os
    import tempfile
    import time
    from pathlib import Path

    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "analyse.sh").write_text("#!/bin/sh\nwc -l data/* > summary.txt\n")
        os.chmod(root / "analyse.sh", 0o755)
        (root / "data").mkdir()
        (root / "data" / "a.csv").write_text("x,y\n1,2\n")
        (root / "data" / "b.csv").write_bytes(os.urandom(4096))
        result = schedd.submit(Submit(DEMO_SPOOL_SUBMIT), spool=True, submit_dir=directory)
        cluster = result.cluster
        out.write(f"job {cluster}.0 submitted on the spooling hold\n")
        spooled = schedd.spool(result)
        report = spooled[0].report
        out.write(f"spooled {len(report.files)} files ({report.bytes} bytes): ")
        out.write(", ".join(report.files) + "\n")
        deadline = time.monotonic() + 10  # the schedd releases the job just after the spool
        while time.monotonic() < deadline:
            ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "ReleaseReason"])
            if ads and ads[0]["JobStatus"] == 1:
                out.write(f"released: {ads[0]['ReleaseReason']}\n")
                break
            time.sleep(0.05)
        now = time.time()
        for offset in (0.0, 0.0, pool.schedd.queue.run_time):
            pool.schedd.queue.step(now + offset)  # released → running → completed
        fetched = schedd.retrieve(f"{cluster}.0")
        for path in fetched[0].files:
            out.write(f"fetched {path.relative_to(root)} ({path.stat().st_size} bytes)\n")
        manifest = (root / "logs" / "analysis.out").read_text()
        out.write("the job's stdout (the sandbox it received):\n" + manifest)
        return "data/b.csv 4096" in manifest and (root / "summary.txt").exists()
