"""Match analysis of one job against many slot ads: cedar vs ``condor_q -better-analyze``.

Run (as root, with a live pool's environment, e.g. ``. /tmp/pool-x.env``)::

    python bench/bench_analysis.py [SLOTS] [JOB_ID]

Copies of the pool's first slot ad (trimmed to what the analysis reads, with varied memory) are
advertised with ``condor_advertise -multiple UPDATE_STARTD_AD`` (default 100 000), then both
tools analyse the same job against the same collector, alternating for ``BENCH_ROUNDS`` rounds
(default 3): ``condor_q -better-analyze JOB`` (wall time of the process) and cedar (fetch, then
the pure analysis as ``cedar q -better-analyze`` runs it); then once with histograms.
The fake ads are invalidated at the end.  On a shared, loaded machine the numbers are noisy.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import trio

from cedar.analysis import analyze_job
from cedar.analysis.fetch import fetch_inputs
from cedar.analysis.text import render_job
from cedar.commands import AsyncCollector, AsyncSchedd

KEEP = (
    "MyType",
    "TargetType",
    "Name",
    "Machine",
    "SlotID",
    "SlotType",
    "Requirements",
    "Start",
    "WithinResourceLimits",
    "Cpus",
    "Memory",
    "Disk",
    "GPUs",
    "Arch",
    "OpSys",
    "OpSysAndVer",
    "CondorVersion",
    "FileSystemDomain",
    "UidDomain",
    "MachineResources",
    "TotalSlotCpus",
    "TotalSlotMemory",
    "TotalSlotDisk",
    "MappingMethod",
    "MyAddress",
    "Rank",
    "CurrentRank",
    "State",
    "Activity",
)
FAKE_MACHINE = "bench-analysis.invalid"


def _tool(name: str, *args: str) -> str:
    result = subprocess.run([name, *args], capture_output=True, text=True, check=True)
    return result.stdout


def _template() -> list[str]:
    first = _tool("condor_status", "-af", "Name").split()[0]
    lines = _tool("condor_status", "-long", first).splitlines()
    keep = {k.lower() for k in KEEP}
    return [line for line in lines if line.split(" = ", 1)[0].lower() in keep]


def _advertise(count: int) -> None:
    template = [
        line
        for line in _template()
        if not line.lower().startswith(("name =", "machine =", "memory =", "slotid ="))
    ]
    body = "\n".join(template)
    with tempfile.NamedTemporaryFile("w", suffix=".ads", delete=False) as fh:
        for i in range(count):
            memory = 512 * (1 + i % 64)  # 512 MB .. 32 GB
            fh.write(
                f'{body}\nName = "slot{i}@{FAKE_MACHINE}"\nMachine = "{FAKE_MACHINE}{i // 64}"\n'
                f"SlotID = {i % 64 + 1}\nMemory = {memory}\n\n"
            )
        path = fh.name
    try:
        start = time.perf_counter()
        subprocess.run(["condor_advertise", "-multiple", "UPDATE_STARTD_AD", path], check=True)
        print(f"advertised {count} slot ads in {time.perf_counter() - start:.1f} s")
    finally:
        os.unlink(path)


def _invalidate() -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".ad", delete=False) as fh:
        fh.write(
            'MyType = "Query"\nTargetType = "Machine"\n'
            f'Requirements = regexp("{FAKE_MACHINE}", Machine)\n'
        )
        path = fh.name
    try:
        subprocess.run(["condor_advertise", "INVALIDATE_STARTD_ADS", path], check=False)
    finally:
        os.unlink(path)


def _submit_job() -> str:
    iwd = os.environ.get("CEDAR_LIVE_IWD", "/tmp")
    sub = os.path.join(iwd, "bench-analysis.sub")
    with open(sub, "w") as fh:
        fh.write("executable = /bin/sleep\narguments = 60\nrequest_memory = 20000\nhold = true\n")
        fh.write("should_transfer_files = NO\nqueue\n")
    os.chmod(sub, 0o644)
    out = subprocess.run(
        # su resets PATH: name the tool and the configuration explicitly
        [
            "su",
            "testuser",
            "-c",
            f"cd {iwd} && CONDOR_CONFIG={shlex.quote(os.environ.get('CONDOR_CONFIG', ''))} "
            f"{shlex.quote(shutil.which('condor_submit') or 'condor_submit')} {sub}",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    ).stdout
    cluster = out.strip().split()[-1].rstrip(".")
    return f"{cluster}.0"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    job_id = sys.argv[2] if len(sys.argv) > 2 else _submit_job()
    _advertise(count)
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    try:
        time.sleep(2)
        cluster, proc = job_id.split(".")

        async def fetch() -> object:
            return await fetch_inputs(
                AsyncSchedd(),
                AsyncCollector(),
                f"ClusterId == {cluster} && ProcId == {proc}",
                collector_schedd_ad=False,
            )

        # Side by side, alternating, so that the machine's load hits both alike: the ratio of
        # each pair is what to read, not the absolute times.
        ratios = []
        for round_ in range(rounds):
            start = time.perf_counter()
            text = _tool("condor_q", "-better-analyze", job_id)
            condor = time.perf_counter() - start
            start = time.perf_counter()
            inputs = trio.run(fetch)
            fetched = time.perf_counter() - start
            job = inputs.jobs[0]  # type: ignore[attr-defined]
            slots = inputs.slots  # type: ignore[attr-defined]
            start = time.perf_counter()
            result = analyze_job(job, slots, detail=False)  # what `cedar q -better-analyze` does
            render_job(result)
            took = time.perf_counter() - start
            ratios.append((fetched + took) / condor)
            print(
                f"round {round_ + 1}: condor_q -better-analyze {job_id} {condor:.2f} s "
                f"({len(text)} bytes); cedar: fetch {len(slots)} slots {fetched:.2f} s + analysis "
                f"{took:.2f} s = {fetched + took:.2f} s; cedar/condor_q = {ratios[-1]:.2f}"
            )
        print(f"median cedar/condor_q over {rounds} rounds: {sorted(ratios)[rounds // 2]:.2f}")
        start = time.perf_counter()
        result = analyze_job(job, slots, detail=True)
        print(
            f"cedar: the same analysis with histograms and suggestions (--verbose, --json) "
            f"{time.perf_counter() - start:.2f} s; {result.explanation}"
        )
    finally:
        _invalidate()
        if len(sys.argv) <= 2:
            subprocess.run(["condor_rm", job_id], check=False, capture_output=True)


if __name__ == "__main__":
    main()
