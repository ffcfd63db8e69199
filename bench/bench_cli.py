"""cedar's listing CLIs against the real condor_q / condor_history / condor_status, on one real
pool, in one run: wall time, peak RSS and their ratios per case.

Run it against a pool of your own (``tools/live_pool.sh start DIR > DIR.env; . DIR.env``)::

    python bench/bench_cli.py            # 40 000 jobs, 25 000 history records, 100 000 slots
    python bench/bench_cli.py --sizes 400,250,1000 --json /tmp/bench_cli.json
    # issue 39 point 2: whole ads at 8 000 then 40 000 jobs, 5 interleaved runs each
    python bench/bench_cli.py --job-sizes 8000,40000 --whole --repeat 5

* jobs: held jobs submitted as testuser with the pool's IDTOKEN (``cedar submit``, ``queue N``
  with ``hold = true``, in chunks of ``MAX_JOBS_PER_SUBMISSION``), tagged ``CedarBench``;
  removed at the end.  ``--job-sizes`` runs the job cases at each size in turn, topping the
  queue up between them (the pool's schedd must allow that many: ``MAX_JOBS_PER_OWNER``,
  ``MAX_JOBS_SUBMITTED``); the queue should hold no other jobs (each tool's query is answered
  from the whole queue);
* history records: held jobs tagged ``CedarBenchHistory``, removed at once (a removed job goes to
  the history file);
* slots: copies of a real slot ad with distinct names advertised with ``condor_advertise
  -multiple UPDATE_STARTD_AD``; invalidated at the end.

Each case runs each tool ``--repeat`` times, interleaved (cedar, condor, condor, cedar, ...:
load that comes and goes hits both alike), output to ``/dev/null``: medians of the wall time,
the CPU time (user + system) and the peak RSS of each run, all three from GNU time (``%e``-like
wall from our clock, ``%U``+``%S``, ``%M``: ``wait4``'s rusage of the tool's own process, which
is its ``VmHWM``), and the highest peak; the load average is recorded per case.  The ``cedar``
package is byte-compiled first; ``| head -3`` cases time the third line's arrival and then
close the pipe.  ratio = condor's time / cedar's time (above 1: cedar is faster); rss ratio =
condor's peak / cedar's peak (medians); cpu ratio = condor's CPU seconds / cedar's.  Numbers
on a shared 2-core machine are noisy: under load the wall times mostly measure the wait for a
core, the CPU seconds much less so.  ``--only TEXT`` runs the cases whose label contains TEXT
(repeatable); ``--whole`` only the job query's ``-long`` and ``-json``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CEDAR = str(Path(sys.executable).parent / "cedar")
BENCH_DOMAIN = "bench-cli"
ADVERTISE_BATCH = 5000


def _env(as_testuser: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env["TZ"] = "UTC"
    if as_testuser:
        env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
        env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    return env


def tool(*argv: str, as_testuser: bool = False, cwd: str | None = None) -> str:
    """Run a pool tool; its standard output (raises on failure)."""
    result = subprocess.run(
        list(argv), env=_env(as_testuser), capture_output=True, text=True, check=False, cwd=cwd
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")
    return result.stdout


def config(name: str, default: int) -> int:
    try:
        return int(tool("condor_config_val", name).strip())
    except (RuntimeError, ValueError):
        return default


# -- filling the pool ---------------------------------------------------------------------------


def submit_held(count: int, tag: str, directory: str) -> None:
    """``count`` held jobs tagged ``tag``, as testuser, in chunks the schedd accepts."""
    chunk = max(1, min(config("MAX_JOBS_PER_SUBMISSION", 20000), 20000))
    left = count
    while left > 0:
        batch = min(chunk, left)
        path = Path(directory) / f"{tag}.sub"
        path.write_text(
            f"executable = /bin/sleep\narguments = 600\nhold = true\n+{tag} = true\nqueue {batch}\n"
        )
        tool(CEDAR, "submit", "--terse", str(path), as_testuser=True, cwd=directory)
        left -= batch


def queued(tag: str) -> int:
    out = tool("condor_q", "-all", "-constraint", f"{tag} =?= true", "-af", "ProcId")
    return len(out.splitlines())


def fill_history(count: int, directory: str) -> None:
    """``count`` history records: held jobs, removed."""
    tag = "CedarBenchHistory"
    submit_held(count, tag, directory)
    tool("condor_rm", "-constraint", f"{tag} =?= true", as_testuser=True)
    for _ in range(600):
        if not tool("condor_q", "-all", "-constraint", f"{tag} =?= true", "-af", "ProcId"):
            return
        time.sleep(1)


def bench_slots() -> int:
    constraint = f'regexp("@{BENCH_DOMAIN}$", Name)'
    return len(tool("condor_status", "-af", "Name", "-constraint", constraint).splitlines())


def advertise_slots(count: int, start: int = 0) -> None:
    """``count`` copies of a real slot ad with distinct names (numbered from ``start``)."""
    template = tool("condor_status", "-long", "-limit", "1", "-constraint",
                    f'!regexp("@{BENCH_DOMAIN}$", Name)')  # fmt: skip
    lines = [line for line in template.strip().splitlines() if line.strip()]
    body = "\n".join(line for line in lines if not line.startswith(("Name ", "Name=")))
    done = 0
    while done < count:
        batch = min(ADVERTISE_BATCH, count - done)
        first = start + done
        ads = [f'{body}\nName = "slot{first + i}@{BENCH_DOMAIN}"' for i in range(batch)]
        with tempfile.NamedTemporaryFile("w", suffix=".ads", delete=False) as handle:
            handle.write("\n\n".join(ads) + "\n")
        try:
            tool("condor_advertise", "-multiple", "UPDATE_STARTD_AD", handle.name)
        finally:
            os.unlink(handle.name)
        done += batch


def top_up_slots(slots: int) -> None:
    """Advertise the bench's slots that are missing (all of them once the collector expired
    them)."""
    have = bench_slots()
    if have < slots:
        advertise_slots(slots - have, start=have)


def invalidate_slots() -> None:
    query = (
        'MyType = "Query"\nTargetType = "Machine"\n'
        f'Requirements = regexp("@{BENCH_DOMAIN}$", Name)\n'
    )
    with tempfile.NamedTemporaryFile("w", suffix=".ad", delete=False) as handle:
        handle.write(query)
    try:
        tool("condor_advertise", "INVALIDATE_STARTD_ADS", handle.name)
    finally:
        os.unlink(handle.name)


# -- measuring ----------------------------------------------------------------------------------


def compile_cedar() -> str:
    """Byte-compile the ``cedar`` package the console script imports, as installing a wheel
    does: run from a source tree with ``PYTHONDONTWRITEBYTECODE`` set (this machine's
    environment), every start would otherwise compile ~100 modules (0.5-1 s here)."""
    where = subprocess.run(
        [sys.executable, "-c", "import cedar, os; print(os.path.dirname(cedar.__file__))"],
        env=_env(), capture_output=True, text=True, check=True, cwd="/",
    ).stdout.strip()  # fmt: skip
    compileall.compile_dir(where, quiet=1)
    return where


TIME = shutil.which("time") or "/usr/bin/time"


def run_once(argv: list[str], first_lines: int = 0) -> tuple[float, int, float]:
    """Seconds, peak RSS (KiB) and CPU seconds of one run; ``first_lines``: time to that
    many lines.

    The peak comes from GNU time (``%M``), not from our own ``wait4``: a child forked from this
    process starts with our high-water mark, which the fills raise."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        command = [TIME, "-f", "%M %U %S", "-o", rss.name, *argv]
        started = time.perf_counter()
        if first_lines:
            process = subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL)  # fmt: skip
            assert process.stdout is not None
            for _ in range(first_lines):
                if not process.stdout.readline():
                    break
            elapsed = time.perf_counter() - started
            process.stdout.close()  # as head does: the writer gets EPIPE
            process.wait()
        else:
            with open(os.devnull, "w") as sink:
                process = subprocess.Popen(command, env=_env(), stdout=sink,
                                           stderr=subprocess.DEVNULL)  # fmt: skip
                code = process.wait()
            elapsed = time.perf_counter() - started
            if code != 0:
                raise RuntimeError(f"{' '.join(argv)} failed ({code})")
        lines = [line.split() for line in rss.read().splitlines()]
        lines = [f for f in lines if len(f) == 3 and f[0].isdigit()]
    if not lines:
        return elapsed, 0, 0.0
    return elapsed, int(lines[-1][0]), float(lines[-1][1]) + float(lines[-1][2])


def measure(cedar: list[str], condor: list[str], repeat: int, first: int = 0) -> dict[str, Any]:
    """Both tools ``repeat`` times, interleaved (the one that goes first alternates)."""
    runs: dict[str, list[tuple[float, int, float]]] = {"cedar": [], "condor": []}
    load = [os.getloadavg()[0]]
    for index in range(repeat):
        order = (("cedar", cedar), ("condor", condor))
        for side, argv in order if index % 2 == 0 else order[::-1]:
            runs[side].append(run_once(argv, first))
        load.append(os.getloadavg()[0])
    row: dict[str, Any] = {"load": [round(min(load), 2), round(max(load), 2)]}
    for side, done in runs.items():
        row[side] = {
            "seconds": statistics.median(r[0] for r in done),
            "rss_kib": statistics.median(r[1] for r in done),
            "rss_kib_max": max(r[1] for r in done),
            "cpu_seconds": statistics.median(r[2] for r in done),
            "runs": done,
        }
    row["ratio"] = row["condor"]["seconds"] / max(row["cedar"]["seconds"], 1e-9)
    row["rss_ratio"] = row["condor"]["rss_kib"] / max(row["cedar"]["rss_kib"], 1)
    row["cpu_ratio"] = row["condor"]["cpu_seconds"] / max(row["cedar"]["cpu_seconds"], 1e-3)
    return row


def job_cases(jobs: int) -> list[tuple[str, list[str], list[str], int]]:
    """The job query's cases at ``jobs`` jobs: (label, cedar argv, condor argv, lines to wait
    for or 0)."""
    q = ["-all", "-constraint", "CedarBench =?= true"]
    return [
        (f"q -all ({jobs} jobs)", [CEDAR, "q", *q], ["condor_q", *q], 0),
        ("q -all -nobatch", [CEDAR, "q", *q, "-nobatch"], ["condor_q", *q, "-nobatch"], 0),
        ("q -all -af ClusterId ProcId JobStatus",
         [CEDAR, "q", *q, "-af", "ClusterId", "ProcId", "JobStatus"],
         ["condor_q", *q, "-af", "ClusterId", "ProcId", "JobStatus"], 0),
        (f"q -all -long ({jobs} jobs)", [CEDAR, "q", *q, "-long"], ["condor_q", *q, "-long"], 0),
        (f"q -all -json ({jobs} jobs)", [CEDAR, "q", *q, "-json"], ["condor_q", *q, "-json"], 0),
        ("q -all -long | head -3 (first lines)", [CEDAR, "q", *q, "-long"],
         ["condor_q", *q, "-long"], 3),
        ("q -all -long -stream-results | head -3", [CEDAR, "q", *q, "-long", "-stream-results"],
         ["condor_q", *q, "-long", "-stream-results"], 3),
    ]  # fmt: skip


def cases(jobs: int, history: int, slots: int) -> list[tuple[str, list[str], list[str], int]]:
    """(label, cedar argv, condor argv, lines to wait for or 0)."""
    s = ["-constraint", f'regexp("@{BENCH_DOMAIN}$", Name)']
    return [*job_cases(jobs),
        (f"history ({history} records)", [CEDAR, "history"], ["condor_history"], 0),
        ("history -af ClusterId ProcId", [CEDAR, "history", "-af", "ClusterId", "ProcId"],
         ["condor_history", "-af", "ClusterId", "ProcId"], 0),
        (f"status ({slots} slots)", [CEDAR, "status", *s], ["condor_status", *s], 0),
        ("status -af Name Memory", [CEDAR, "status", *s, "-af", "Name", "Memory"],
         ["condor_status", *s, "-af", "Name", "Memory"], 0),
        ("status -long", [CEDAR, "status", *s, "-long"], ["condor_status", *s, "-long"], 0),
        ("status -json", [CEDAR, "status", *s, "-json"], ["condor_status", *s, "-json"], 0),
        ("status -total", [CEDAR, "status", *s, "-total"], ["condor_status", *s, "-total"], 0),
    ]  # fmt: skip


def _row_text(label: str, row: dict[str, Any]) -> str:
    c, r = row["cedar"], row["condor"]
    return (
        f"{label:<42} {c['seconds']:>8.2f}s {c['rss_kib'] / 1024:>7.0f}MB "
        f"{c['cpu_seconds']:>6.2f}s "
        f"{r['seconds']:>8.2f}s {r['rss_kib'] / 1024:>7.0f}MB {r['cpu_seconds']:>6.2f}s "
        f"{row['ratio']:>6.2f} {row['rss_ratio']:>6.2f} {row['cpu_ratio']:>6.2f}"
        f"  {row['load'][0]:.1f}-{row['load'][1]:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="40000,25000,100000",
                        help="JOBS,HISTORY,SLOTS (default 40000,25000,100000)")  # fmt: skip
    parser.add_argument("--job-sizes", metavar="N,N,...",
                        help="run the job cases at each of these queue sizes in turn, smallest "
                             "first (instead of --sizes' JOBS)")  # fmt: skip
    parser.add_argument(
        "--whole",
        action="store_true",
        help="only q -all -long and -json (issue 39 point 2); no history, no slots",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="leave the jobs and slots in place")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="only the cases whose label contains TEXT (repeatable)")  # fmt: skip
    args = parser.parse_args()
    jobs, history, slots = (int(x) for x in args.sizes.split(","))
    job_sizes = sorted(int(x) for x in args.job_sizes.split(",")) if args.job_sizes else [jobs]
    if args.whole:
        history = slots = 0
    if not os.environ.get("CEDAR_LIVE_TOKEN_DIR") or shutil.which("condor_q") is None:
        print("source a live pool's env file first (tools/live_pool.sh start DIR > DIR.env)")
        return 2

    def wanted(label: str) -> bool:
        if args.whole and not label.startswith(("q -all -long (", "q -all -json (")):
            return False
        return not args.only or any(text in label for text in args.only)

    workdir = tempfile.mkdtemp(prefix="bench-cli-", dir=os.environ.get("CEDAR_LIVE_IWD"))
    os.chmod(workdir, 0o777)
    results: list[dict[str, Any]] = []
    try:
        print(f"filling: {history} history records, {job_sizes} jobs, {slots} slots", flush=True)
        # top up what an earlier (--keep or interrupted) run left
        if history:
            have = len(tool("condor_history", "-af", "ClusterId").splitlines())
            if have < history:
                fill_history(history - have, workdir)
        top_up_slots(slots)
        print(f"cedar from {compile_cedar()} (byte-compiled)", flush=True)
        header = (
            f"{'case':<42} {'cedar':>9} {'rss':>9} {'cpu':>7} {'condor':>9} {'rss':>9} {'cpu':>7} "
            f"{'ratio':>6} {'rss':>6} {'cpu':>6}  load"
        )
        print(header)
        all_cases = cases(jobs, history, slots)
        plan = [(size, job_cases(size)) for size in job_sizes]
        plan.append((0, all_cases[len(job_cases(jobs)) :]))
        for size, chosen in plan:
            chosen = [case for case in chosen if wanted(case[0])]
            if size and chosen:
                have = queued("CedarBench")
                if have < size:
                    submit_held(size - have, "CedarBench", workdir)
                    time.sleep(2)
                if queued("CedarBench") != size:
                    print(f"the queue holds {queued('CedarBench')} bench jobs, not {size}")
                    return 1
            for label, ours, theirs, first in chosen:
                if label.startswith("status") and label.endswith("slots)"):
                    top_up_slots(slots)  # advertised slot ads expire (~15 min)
                row = measure(ours, theirs, args.repeat, first)
                row["case"] = label
                row["jobs"] = size or None
                results.append(row)
                print(_row_text(label, row), flush=True)
    finally:
        if not args.keep:
            if slots:
                invalidate_slots()
            subprocess.run(["condor_rm", "-constraint", "CedarBench =?= true"], env=_env(True),
                           capture_output=True, check=False)  # fmt: skip
    if args.json:
        sizes = {"jobs": job_sizes, "history": history, "slots": slots}
        Path(args.json).write_text(json.dumps({"sizes": sizes, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
