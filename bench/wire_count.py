"""What a bench_live case costs on the wire: connections, round trips and bytes, per client.

Runs one ``bench_live.py`` child (cedar or htcondor2) under ``strace -f -yy`` and counts, from
the moment its timer starts (a marked failed ``stat``) to its end, the client's TCP
connections to the daemon's port, the bytes it sent and received there, and its round trips:
on each connection, every time data arrives after the client has sent something (a client
that sends three messages and then reads three answers makes one round trip; one that waits
for each answer makes three).  Wall times under strace mean nothing; the counts are exact.

    python bench/wire_count.py --dir /tmp/pool --port 9618 --cases B2,B3,B3proxy,B4,B1p

``B3proxy`` runs B3 through ``latency_proxy.py`` (the counts are the client's, against the
proxy); ``B1p`` is B1's projection on whatever slots the collector holds (``--slots`` fills
it first with bench_live's filler and removes them after).  ``--timeline`` prints every
connection's sends and receives with times relative to the start.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_live  # noqa: E402 - the cases and the pool are bench_live's

SENDS = {"sendto", "sendmsg", "write", "writev", "send"}
RECEIVES = {"recvfrom", "recvmsg", "read", "readv", "recv"}
_LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((\d+)<(TCP:\[[^\]]*\]|[^>]*)>")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>")
_RESULT = re.compile(r"\) = (-?\d+)(?: \w+ \(.*\))?$")
_CONNECT_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")


@dataclass
class Conversation:
    """One TCP connection of the client to the daemon's port."""

    name: str
    sent: int = 0
    received: int = 0
    round_trips: int = 0
    waiting: bool = False  # sent something not yet answered
    events: list[tuple[float, str, int]] = field(default_factory=list)


def _remote_port(annotation: str) -> int | None:
    """The peer's port from strace's ``TCP:[local->remote]`` fd annotation."""
    if "->" not in annotation:
        return None
    remote = annotation.rstrip("]").rpartition("->")[2]
    try:
        return int(remote.rpartition(":")[2])
    except ValueError:
        return None


def parse(trace: str, port: int) -> dict[str, Any]:
    """Counts from an ``strace -f -ttt -yy`` log, from the timer mark on."""
    started: float | None = None
    pending: dict[str, str] = {}  # pid -> the start of an unfinished call
    conversations: dict[str, Conversation] = {}
    open_fds: dict[str, Conversation] = {}
    connects = 0
    for raw in trace.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        pid, stamp, rest = match.group(1), float(match.group(2)), match.group(3)
        if bench_live.TIMER_MARK in rest:
            started = stamp
            continue
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest
            continue
        resumed = _RESUMED.match(rest)
        if resumed is not None:
            head = pending.pop(pid, "")
            rest = head.removesuffix("<unfinished ...>") + rest[resumed.end() :]
        if started is None:
            continue
        call = _CALL.match(rest)
        result = _RESULT.search(rest)
        if call is None or result is None:
            continue
        name, fd, annotation = call.group(1), call.group(2), call.group(3)
        value = int(result.group(1))
        if name == "connect":
            connect_port = _CONNECT_PORT.search(rest)
            if connect_port is not None and int(connect_port.group(1)) == port:
                connects += 1
                talk = Conversation(f"{annotation} #{connects}")
                conversations[talk.name] = open_fds[fd] = talk
            continue
        if name == "close":
            open_fds.pop(fd, None)
            continue
        if value <= 0:
            continue
        if fd in open_fds:  # a connection the timed part made (the port known from connect)
            talk = open_fds[fd]
        elif _remote_port(annotation) == port:  # one made before (strace names the peer)
            talk = conversations.setdefault(annotation, Conversation(annotation))
        else:
            continue
        if name in SENDS:
            talk.sent += value
            talk.waiting = True
            talk.events.append((stamp - started, "send", value))
        elif name in RECEIVES:
            talk.received += value
            if talk.waiting:
                talk.round_trips += 1
                talk.waiting = False
            talk.events.append((stamp - started, "recv", value))
    talks = list(conversations.values())
    return {
        "connects": connects,
        "connections": len(talks),
        "round_trips": sum(t.round_trips for t in talks),
        "max_round_trips": max((t.round_trips for t in talks), default=0),
        "sent": sum(t.sent for t in talks),
        "received": sum(t.received for t in talks),
        "talks": talks,
    }


def run(case: dict[str, Any], client: str, env: dict[str, str], port: int) -> dict[str, Any]:
    """Run the case's child for ``client`` under strace; its counts."""
    with tempfile.NamedTemporaryFile(suffix=".strace", delete=False) as handle:
        log = handle.name
    try:
        command = [
            "strace", "-f", "-ttt", "-yy", "-s", "0", "-o", log,
            "-e", "trace=network,read,write,readv,writev,close,stat,newfstatat,statx",
            sys.executable, bench_live.__file__, "--child", json.dumps({**case, "client": client}),
        ]  # fmt: skip
        done = subprocess.run(
            command,
            env={**env, "CEDAR_BENCH_MARK": "1"},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{client}: {done.stderr.strip().splitlines()[-1:]}")
        counts = parse(Path(log).read_text(errors="replace"), port)
        counts["result"] = json.loads(done.stdout.strip().splitlines()[-1])
        return counts
    finally:
        os.unlink(log)


def show(label: str, client: str, counts: dict[str, Any], timeline: bool) -> None:
    print(
        f"| {label} | {client} | {counts['connects']} | {counts['round_trips']} "
        f"| {counts['max_round_trips']} | {counts['sent']:,} | {counts['received']:,} |",
        flush=True,
    )
    if timeline:
        for talk in counts["talks"]:
            steps = " ".join(
                f"{'>' if kind == 'send' else '<'}{size}@{when * 1000:.1f}"
                for when, kind, size in talk.events
            )
            print(f"    {talk.name}: {steps}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the pool's port")
    parser.add_argument("--dir", type=Path, required=True, help="the pool's directory")
    parser.add_argument("--cases", default="B2,B3,B3proxy,B4,B1p")
    parser.add_argument("--clients", default="cedar,htcondor2")
    parser.add_argument("--slots", type=int, default=0, help="fill B1's collector first")
    parser.add_argument("--delay", type=float, default=0.020, help="the proxy's delay")
    parser.add_argument("--timeline", action="store_true")
    args = parser.parse_args()
    pool = bench_live.Pool(args.dir, args.port, start=False)
    base = {"pool": pool.address, "schedd": pool.schedd_address()}
    clients = args.clients.split(",")
    print(
        "| case | client | connects | round trips | most on one connection | bytes sent "
        "| bytes received |\n|---|---|---|---|---|---|---|"
    )
    filler = bench_live.SlotFiller(pool) if args.slots else None
    try:
        for name in args.cases.split(","):
            for client in clients:
                if name == "B3proxy":
                    with bench_live.latency_proxy(pool.address, args.delay) as target:
                        case = bench_live.b3_case(base, target, "proxied")
                        port = int(target.rpartition(":")[2])
                        counts = run(case, client, pool.env, port)
                elif name == "B3":
                    case = bench_live.b3_case(base, pool.address, "loopback")
                    counts = run(case, client, pool.env, args.port)
                elif name == "B2":
                    counts = run(bench_live.b2_case(base), client, pool.env, args.port)
                elif name == "B4":
                    case = bench_live.b4_case(base, args.dir)
                    counts = run(case, client, pool.user_env, args.port)
                    pool.tool("condor_rm", "-all", as_user=True)
                elif name == "B1p":
                    if filler is not None and filler.count < args.slots:
                        filler.remove()
                        filler.fill_to(args.slots)
                    case = bench_live.b1_case(base, args.slots, "projection")
                    counts = run(case, client, pool.env, args.port)
                else:
                    raise SystemExit(f"unknown case {name}")
                show(name, client, counts, args.timeline)
    finally:
        if filler is not None:
            filler.remove()


if __name__ == "__main__":
    main()
