"""cedar vs the C++ bindings (``htcondor2``) against a REAL HTCondor pool: cases B1-B4.

One command runs everything and prints a table plus JSON (``--json FILE``)::

    python bench/bench_live.py --port 9622 --dir /tmp/mc-bench --start

It uses (or, with ``--start``, starts and stops) a minicondor pool from
``../shared/htcondor/minicondor.sh``.  Each case runs in a fresh child process per client, median
of ``--repeat`` runs; ratio = htcondor2 time / cedar time (above 1: cedar is faster); peak RSS is
the child's peak RSS.  Times cover the operation only: imports and set-up are excluded, and each
client has read the pool's configuration before the timer starts (``import htcondor2`` does so;
cedar does it on first use, so its child calls ``default_config()`` first).  B2-B4 run before B1,
whose large fills keep the pool's daemons busy for a while.

* B1: the collector holds N copies of a recorded slot ad (distinct ``Name``, advertised with
  ``condor_advertise -multiple UPDATE_STARTD_AD``, invalidated at the end); query them all and
  touch every key / read every value / only hold the list (``raw``), or project 3 attributes.
  The same queries also run with no security at all (both clients configured with
  ``SEC_CLIENT_{AUTHENTICATION,ENCRYPTION,INTEGRITY,NEGOTIATION} = NEVER``: a raw command on a
  clear connection, which the pool allows at READ), next to the **wire floor**: a client that
  sends the very bytes cedar sends and reads every byte of the reply, following only the packet
  headers, decoding nothing.  cedar's time there is also given as a multiple of the floor.
* B2: 1 000 sequential schedd job queries on one client object (resumed security session).
* B3: 50 collector queries -- cedar fanned out concurrently on Trio, htcondor2 in a serial loop
  (the bindings block) -- on loopback and through ``latency_proxy.py`` (20 ms per direction).
* B4: submit one cluster of 1 000 procs as ``testuser`` (the pool's IDTOKEN), held.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MINICONDOR = HERE.parent.parent / "shared" / "htcondor" / "minicondor.sh"
BENCH_DOMAIN = "bench-live"
ADVERTISE_BATCH = 5000
PROJECTION = ["Name", "Memory", "Cpus"]
NO_SECURITY = ("AUTHENTICATION", "ENCRYPTION", "INTEGRITY", "NEGOTIATION")
CLIENTS = ("cedar", "htcondor2")


# -- the child side: one case, one client, one process ----------------------------------------


def _consume(ads: Any, mode: str) -> int:
    touched = 0
    for ad in ads:
        if mode == "keys":
            for _key in ad:
                touched += 1
        elif mode == "values":
            for key in ad:
                ad[key]
                touched += 1
        elif mode == "raw":
            touched += 1  # the list of ads only: what the query itself costs
        else:
            for key in PROJECTION:
                if key in ad:
                    touched += 1
    return touched


#: The child's CPU time (user + system) when its timer started (see _start_timer).
_CPU_AT_START = [0.0]


#: A path whose failed ``stat`` marks the timer's start in an strace (``bench/wire_count.py``).
TIMER_MARK = "/nonexistent/cedar-bench-timer-starts"


def _start_timer() -> float:
    """Start the timed part: note the process's CPU time and return the wall clock."""
    if os.environ.get("CEDAR_BENCH_MARK"):
        os.path.exists(TIMER_MARK)  # one failed stat, seen by strace: the operation starts
    _CPU_AT_START[0] = time.process_time()
    return time.perf_counter()


def child_floor(case: dict[str, Any]) -> tuple[float, int]:
    """The wire floor: cedar's raw query bytes out, every reply byte in, nothing decoded.

    The request is built by cedar (so it is byte for byte what cedar sends without security)
    before the timer starts; the timed part is connect, send, and reading packets until the
    one flagged end-of-message.  Returns the reply's size in bytes as its count.
    """
    import socket
    import struct

    import cedar
    from cedar.classad_wire import put_classad
    from cedar.commands.collector import collector_query
    from cedar.stream.connection import CedarConnection

    projection = PROJECTION if case["mode"] == "projection" else None
    command, query_ad = collector_query(cedar.AdType.STARTD, None, projection, None, None, None)
    conn = CedarConnection()
    writer = conn.writer().put_int(int(command))
    put_classad(writer, query_ad)
    request = conn.send_message(writer)
    host, _, port = case["pool"].rpartition(":")
    view = memoryview(bytearray(1 << 20))
    start = _start_timer()
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        total = 0
        header = b""  # the bytes of a packet header read so far
        skip = 0  # bytes of the current packet's body still to come
        last = False  # whether the current packet ends the message
        while True:
            got = sock.recv_into(view)
            if not got:
                raise RuntimeError("the collector closed before the end of the reply")
            total += got
            position = 0
            while position < got:
                if skip:
                    taken = min(skip, got - position)
                    skip -= taken
                    position += taken
                else:
                    taken = min(5 - len(header), got - position)
                    header += view[position : position + taken]
                    position += taken
                    if len(header) < 5:
                        continue
                    flag, skip = struct.unpack(">BI", header)
                    last, header = bool(flag), b""
                if not skip and not header and last:
                    return time.perf_counter() - start, total


#: Modules cedar imports on first use inside B3's and B4's timed part (the security methods
#: a new session runs, the submission code); the bindings' child has everything loaded before
#: its timer, so cedar's child imports these first.
WARM_MODULES = (
    "cedar.auth.methods.idtokens",
    "cedar.auth.methods.fs",
    "cedar.commands.qmgmt",
    "cedar.submit_language.factory",
    "cryptography.hazmat.primitives.ciphers.aead",
    "cryptography.hazmat.primitives.kdf.hkdf",
)


def child_cedar(case: dict[str, Any]) -> tuple[float, int]:
    import importlib

    import trio

    import cedar
    from cedar.config import default_config

    default_config()  # what ``import htcondor2`` does: read the pool's configuration
    for module in WARM_MODULES:  # imports are not part of the operation (see WARM_MODULES)
        importlib.import_module(module)

    kind = case["case"]
    pool = case["pool"]
    if kind == "B1":
        collector = cedar.Collector(pool)
        projection = PROJECTION if case["mode"] == "projection" else None
        start = _start_timer()
        ads = collector.query(cedar.AdType.STARTD, projection=projection)
        _consume(ads, case["mode"])
        return time.perf_counter() - start, len(ads)
    if kind == "B2":
        schedd = cedar.Schedd(case["schedd"])
        schedd.query(limit=1)  # the first one authenticates; the rest resume the session
        start = _start_timer()
        for _ in range(case["queries"]):
            schedd.query(projection=["ClusterId", "ProcId"])
        return time.perf_counter() - start, case["queries"]
    if kind == "B3":
        targets = [case["target"]] * case["queries"]
        # Resolved before the timer: ``cedar`` imports its clients on first use, and imports
        # are not part of the operation (the bindings' child imported everything up front).
        query_all_async, schedd_ads = cedar.query_all_async, cedar.AdType.SCHEDD

        async def fan_out() -> int:
            results = await query_all_async(targets, schedd_ads, concurrency=len(targets))
            failed = [r.error for r in results if not r.ok]
            if failed:
                raise RuntimeError(f"{len(failed)} queries failed: {failed[0]}")
            return len(results)

        start = _start_timer()
        count = trio.run(fan_out)
        return time.perf_counter() - start, count
    if kind == "B4":
        schedd = cedar.Schedd(case["schedd"])
        description = cedar.Submit(case["submit"])
        start = _start_timer()
        result = schedd.submit(description, count=case["procs"])
        elapsed = time.perf_counter() - start
        return elapsed, len(result.job_ids())
    raise ValueError(kind)


def child_htcondor2(case: dict[str, Any]) -> tuple[float, int]:
    import htcondor2

    kind = case["case"]
    pool = case["pool"]
    if kind == "B1":
        collector = htcondor2.Collector(pool)
        projection = PROJECTION if case["mode"] == "projection" else []
        start = _start_timer()
        ads = collector.query(htcondor2.AdTypes.Startd, projection=projection)
        _consume(ads, case["mode"])
        return time.perf_counter() - start, len(ads)
    if kind == "B2":
        location = htcondor2.Collector(pool).locate(htcondor2.DaemonTypes.Schedd)
        schedd = htcondor2.Schedd(location)
        schedd.query(limit=1)
        start = _start_timer()
        for _ in range(case["queries"]):
            schedd.query(projection=["ClusterId", "ProcId"])
        return time.perf_counter() - start, case["queries"]
    if kind == "B3":
        start = _start_timer()
        count = 0
        for _ in range(case["queries"]):
            htcondor2.Collector(case["target"]).query(htcondor2.AdTypes.Schedd)
            count += 1
        return time.perf_counter() - start, count
    if kind == "B4":
        location = htcondor2.Collector(pool).locate(htcondor2.DaemonTypes.Schedd)
        schedd = htcondor2.Schedd(location)
        description = htcondor2.Submit(case["submit"])
        start = _start_timer()
        result = schedd.submit(description, count=case["procs"])
        elapsed = time.perf_counter() - start
        return elapsed, result.num_procs()
    raise ValueError(kind)


def _peak_rss_kb() -> int:
    """This process's peak RSS (``VmHWM``; ``ru_maxrss`` can carry the forking parent's)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_child(spec: str) -> None:
    case = json.loads(spec)
    runner = {"cedar": child_cedar, "htcondor2": child_htcondor2, "floor": child_floor}[
        case["client"]
    ]
    seconds, count = runner(case)
    cpu = time.process_time() - _CPU_AT_START[0]
    rss_kb = _peak_rss_kb()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "count": count, "rss_kb": rss_kb}))


# -- the parent side: the pool, the ads, the table ---------------------------------------------


class Pool:
    """A minicondor pool: its address, environment and tools."""

    def __init__(self, directory: Path, port: int, start: bool) -> None:
        self.directory = directory
        self.port = port
        self.started = False
        if start:
            self._script("start")
            self.started = True
        self.address = f"127.0.0.1:{port}"
        env = dict(os.environ)
        env["CONDOR_CONFIG"] = str(directory / "etc" / "condor_config")
        env["PATH"] = f"{directory}/release/bin:{directory}/release/sbin:{env['PATH']}"
        self.env = env
        # As root, the pool's IDTOKEN maps to testuser (who may own jobs): B4's clients use it.
        self.user_env = dict(
            env,
            _condor_SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS",
            _condor_SEC_TOKEN_DIRECTORY=str(directory / "tokens"),
        )
        # No security at all: a raw command (no DC_AUTHENTICATE) on a clear connection.
        self.clear_env = dict(
            env,
            **{f"_condor_SEC_CLIENT_{what}": "NEVER" for what in NO_SECURITY},
        )

    def _script(self, action: str) -> None:
        env = dict(os.environ, MINICONDOR_PORT=str(self.port))
        subprocess.run(
            [str(MINICONDOR), action, str(self.directory)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def tool(self, *args: str, as_user: bool = False) -> str:
        env = self.user_env if as_user else self.env
        done = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def version(self) -> str:
        return self.tool("condor_version").splitlines()[0].strip()

    def schedd_address(self) -> str:
        return self.tool("condor_status", "-schedd", "-af", "MyAddress").splitlines()[0].strip()

    def daemon_pid(self, program: str) -> int | None:
        """The pid of this pool's ``program`` (e.g. ``condor_collector``), found by its binary;
        the oldest one, not a query worker it forked."""
        binary = str(self.directory / "release" / "sbin" / program)
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.readlink(entry / "exe") == binary:
                        started = int((entry / "stat").read_text().rpartition(")")[2].split()[19])
                        found.append((started, int(entry.name)))
                except (OSError, ValueError, IndexError):
                    continue
        return min(found)[1] if found else None

    def stop(self) -> None:
        if self.started:
            self._script("stop")


def daemon_cpu(pid: int | None) -> float | None:
    """CPU seconds a daemon has used, its reaped children (query workers) included."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    # utime, stime, cutime, cstime: fields 14-17 of proc(5), counted after the ")" from 3.
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def daemon_wait(pid: int | None) -> float | None:
    """Seconds the daemon's main thread has waited for a CPU while runnable (``schedstat``):
    on a shared machine, the part of its time that other programs' load adds."""
    if pid is None:
        return None
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class SlotFiller:
    """Fills the collector with copies of one recorded slot ad and removes them again."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.count = 0
        template = pool.tool("condor_status", "-long", "-limit", "1")
        lines = [line for line in template.strip().splitlines() if line.strip()]
        self.template = "\n".join(line for line in lines if not line.startswith(("Name ", "Name=")))

    def fill_to(self, total: int) -> None:
        while self.count < total:
            batch = min(ADVERTISE_BATCH, total - self.count)
            ads = [
                f'{self.template}\nName = "slot{self.count + i}@{BENCH_DOMAIN}"'
                for i in range(batch)
            ]
            with tempfile.NamedTemporaryFile("w", suffix=".ads", delete=False) as handle:
                handle.write("\n\n".join(ads) + "\n")
            try:
                self.pool.tool("condor_advertise", "-multiple", "UPDATE_STARTD_AD", handle.name)
            finally:
                os.unlink(handle.name)
            self.count += batch
        expected = total + self.real_slots()
        for _ in range(100):
            if self.startd_count() >= expected:
                return
            time.sleep(0.2)
        raise RuntimeError(f"the collector holds {self.startd_count()} of {expected} slot ads")

    def real_slots(self) -> int:
        out = self.pool.tool(
            "condor_status", "-af", "Name", "-constraint",
            f'!regexp("@{BENCH_DOMAIN}$", Name)',
        )  # fmt: skip
        return len(out.splitlines())

    def startd_count(self) -> int:
        return len(self.pool.tool("condor_status", "-af", "Name").splitlines())

    def remove(self) -> None:
        query = (
            'MyType = "Query"\nTargetType = "Machine"\n'
            f'Requirements = regexp("@{BENCH_DOMAIN}$", Name)\n'
        )
        with tempfile.NamedTemporaryFile("w", suffix=".ad", delete=False) as handle:
            handle.write(query)
        try:
            self.pool.tool("condor_advertise", "INVALIDATE_STARTD_ADS", handle.name)
        finally:
            os.unlink(handle.name)
        self.count = 0


def measure(
    pool: Pool,
    case: dict[str, Any],
    repeat: int,
    after_run: Any = None,
    clients: tuple[str, ...] = CLIENTS,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run the case ``repeat`` times per client, each in a fresh process; medians and peaks.

    The clients take turns run by run (cedar, htcondor2, [floor], cedar, ...), so that a
    change in the machine's load falls on all of them alike.
    """
    if env is None:
        env = pool.user_env if case["case"] == "B4" else pool.env
    daemon = pool.daemon_pid(
        "condor_schedd" if case["case"] in ("B2", "B4") else "condor_collector"
    )
    row: dict[str, Any] = {"case": case["label"]}
    runs: dict[str, list[dict[str, Any]]] = {client: [] for client in clients}
    for _ in range(repeat):
        for client in clients:
            if client in row:  # failed before
                continue
            spec = json.dumps({**case, "client": client})
            before, waited = daemon_cpu(daemon), daemon_wait(daemon)
            done = subprocess.run(
                [sys.executable, __file__, "--child", spec],
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if done.returncode != 0:
                row[client] = {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            time.sleep(0.2)  # let the daemon reap its query worker
            after, wait_after = daemon_cpu(daemon), daemon_wait(daemon)
            if before is not None and after is not None:
                result["daemon_cpu"] = after - before
            if waited is not None and wait_after is not None:
                result["daemon_wait"] = wait_after - waited
            runs[client].append(result)
            if after_run is not None:
                after_run(pool)
    for client, done_runs in runs.items():
        if done_runs and client not in row:
            row[client] = {
                "seconds": statistics.median(r["seconds"] for r in done_runs),
                "runs": [r["seconds"] for r in done_runs],
                "cpu": statistics.median(r["cpu"] for r in done_runs),
                "daemon_cpu": statistics.median(r.get("daemon_cpu", math.nan) for r in done_runs),
                "daemon_wait": statistics.median(r.get("daemon_wait", math.nan) for r in done_runs),
                "count": done_runs[0]["count"],
                "rss_mb": max(r["rss_kb"] for r in done_runs) / 1024,
            }
    cedar, reference = row.get("cedar", {}), row.get("htcondor2", {})
    if "seconds" in cedar and "seconds" in reference:
        row["ratio"] = reference["seconds"] / cedar["seconds"]
    floor = row.get("floor", {})
    if "seconds" in floor:
        for client in CLIENTS:
            if "seconds" in row.get(client, {}):
                row[f"{client}_floor"] = row[client]["seconds"] / floor["seconds"]
    print(_format_row(row), flush=True)
    return row


def _format_row(row: dict[str, Any]) -> str:
    def cell(side: dict[str, Any]) -> str:
        if "error" in side:
            return f"FAILS: {side['error'][:60]} | - | - | -"
        if "seconds" not in side:
            return "- | - | - | -"
        daemon = side.get("daemon_cpu", math.nan)
        return (
            f"{side['seconds'] * 1000:,.0f} | {side['cpu'] * 1000:,.0f} | "
            f"{'-' if math.isnan(daemon) else f'{daemon * 1000:,.0f}'} | {side['rss_mb']:.0f}"
        )

    def times(key: str) -> str:
        return f"{row[key]:.2f}×" if key in row else "-"

    ratio = f"{row['ratio']:.2f}" if "ratio" in row else "-"
    cedar, reference, floor = row.get("cedar", {}), row.get("htcondor2", {}), row.get("floor", {})
    floor_ms = f"{floor['seconds'] * 1000:,.0f}" if "seconds" in floor else "-"
    return (
        f"| {row['case']} | {cell(cedar)} | {cell(reference)} | {ratio} | {floor_ms} "
        f"| {times('cedar_floor')} | {times('htcondor2_floor')} |"
    )


#: The table's heading: times in ms; CPU = the client's, daemon = the daemon's during the run.
TABLE_HEAD = (
    "| case | cedar ms | cedar CPU | daemon CPU | cedar MB "
    "| htcondor2 ms | htcondor2 CPU | daemon CPU | htcondor2 MB | ratio "
    "| floor ms | cedar / floor | htcondor2 / floor |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def b1_case(base: dict[str, Any], size: int, mode: str, how: str = "") -> dict[str, Any]:
    """B1: every startd ad of ``size`` (filled by :class:`SlotFiller`), consumed as ``mode``."""
    return {**base, "case": "B1", "mode": mode, "label": f"B1 {size} slots, {mode}{how}"}


def b2_case(base: dict[str, Any]) -> dict[str, Any]:
    """B2: 1 000 sequential job queries on one client (a resumed session)."""
    return {**base, "case": "B2", "queries": 1000, "label": "B2 1000 sequential schedd queries"}


def b3_case(base: dict[str, Any], target: str, where: str) -> dict[str, Any]:
    """B3: 50 schedd-ad queries of the collector at ``target`` (the pool or a proxy)."""
    label = f"B3 50 collector queries, {where}"
    return {**base, "case": "B3", "queries": 50, "target": target, "label": label}


def b4_case(base: dict[str, Any], directory: Path) -> dict[str, Any]:
    """B4: one cluster of 1 000 held procs, submitted as ``testuser`` (the pool's IDTOKEN)."""
    submit = (
        "executable = /bin/sleep\narguments = 600\nhold = true\n"
        f"initialdir = {directory}\nrequest_memory = 64\n"
    )
    label = "B4 submit 1000 procs in one cluster"
    return {**base, "case": "B4", "procs": 1000, "submit": submit, "label": label}


@contextlib.contextmanager
def latency_proxy(upstream: str, delay: float) -> Iterator[str]:
    """``latency_proxy.py`` in front of ``upstream`` while the block runs: its address."""
    proxy = subprocess.Popen(
        [sys.executable, str(HERE / "latency_proxy.py"), upstream, "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None
        yield f"127.0.0.1:{proxy.stdout.readline().strip()}"
    finally:
        proxy.terminate()
        proxy.wait(10)


def _remove_jobs(pool: Pool) -> None:
    pool.tool("condor_rm", "-all", as_user=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=int(os.environ.get("CEDAR_BENCH_PORT", "9622")))
    parser.add_argument("--dir", type=Path, help="pool directory (default /tmp/mc-bench-PORT)")
    parser.add_argument("--start", action="store_true", help="start the pool (and stop it after)")
    parser.add_argument("--sizes", default="5000,20000,100000", help="B1 slot counts")
    parser.add_argument(
        "--big", type=int, default=50000, help="from this size on, B1 only touches every key"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-repeat", type=int, default=1, help="repeats from --big on")
    parser.add_argument("--cases", default="B1,B2,B3,B4")
    parser.add_argument(
        "--b1-security",
        choices=("both", "default", "none"),
        default="both",
        help="B1 with the pool's security, with none (and the wire floor), or both",
    )
    parser.add_argument("--b1-modes", default="keys,values,raw,projection")
    parser.add_argument("--delay", type=float, default=0.020, help="B3 proxy delay per direction")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    if args.child:
        run_child(args.child)
        return
    directory = args.dir or Path(f"/tmp/mc-bench-{args.port}")
    # Byte-compiled once, so that no child compiles cedar's sources while it imports them
    # (PYTHONDONTWRITEBYTECODE keeps Python from writing them itself).
    compileall.compile_dir(HERE.parent / "cedar", quiet=1)
    pool = Pool(directory, args.port, args.start)
    cases = set(args.cases.split(","))
    results: dict[str, Any] = {"rows": []}
    try:
        results["pool_version"] = pool.version()
        schedd = pool.schedd_address()
        print(f"pool {pool.address}: {results['pool_version']}")
        print(TABLE_HEAD)
        base = {"pool": pool.address, "schedd": schedd}
        rows = results["rows"]
        if "B2" in cases:
            rows.append(measure(pool, b2_case(base), args.repeat))
        if "B3" in cases:
            rows.append(measure(pool, b3_case(base, pool.address, "loopback"), args.repeat))
            with latency_proxy(pool.address, args.delay) as target:
                where = f"+{args.delay * 1000:.0f} ms per direction"
                rows.append(measure(pool, b3_case(base, target, where), args.repeat))
        if "B4" in cases:
            rows.append(
                measure(pool, b4_case(base, directory), args.repeat, after_run=_remove_jobs)
            )
        if "B1" in cases:
            filler = SlotFiller(pool)
            filler.remove()  # what an interrupted run may have left
            try:
                for size in (int(s) for s in args.sizes.split(",") if s):
                    filler.fill_to(size)
                    big = size >= args.big
                    repeat = args.big_repeat if big else args.repeat
                    modes = ["keys"] if big else args.b1_modes.split(",")
                    if args.b1_security != "none":
                        for mode in modes:
                            case = b1_case(base, size, mode)
                            rows.append(measure(pool, case, repeat))
                    if args.b1_security == "default":
                        continue
                    for mode in modes:
                        case = b1_case(base, size, mode, ", no security")
                        clients = (*CLIENTS, "floor")
                        rows.append(
                            measure(pool, case, repeat, clients=clients, env=pool.clear_env)
                        )
            finally:
                filler.remove()
    finally:
        pool.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
