"""Starting a pool on a free port, and making sure the port is really that pool's.

A port found free (bind port 0, close) may be taken by another pool on the same machine before
ours binds it: its daemons then fail to listen, and the start script, asking "the collector on
that port", talks to the *other* pool and reports success.  :func:`start_minicondor` checks that
the process listening on the port runs from this pool's own directory (each pool unpacks its
release there, so the executable's path is a value only this pool has) and starts again on
another port when not, a bounded number of times.  A shell script that starts a server in the
background checks the same with ``python tests/pools.py await-listener $! PORT`` (exit 75: the
port is another process's).  Stdlib only: ``tests/conftest.py`` uses it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Ports tried before giving up (each a fresh one from the kernel).
TRIES = 3


def free_port() -> int:
    """A loopback port the kernel just handed out (free now, not reserved)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes listening on TCP ``port`` (IPv4 and IPv6, any address)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                inodes.add(fields[9])
    return inodes


def listening_processes(port: int) -> dict[int, str]:
    """pid -> executable of the processes listening on ``port`` (needs root for others')."""
    wanted = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")) if wanted else ():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in wanted for fd in fds):
                found[int(pid)] = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def listeners(port: int) -> list[str]:
    """The executables of the processes listening on ``port``."""
    return list(listening_processes(port).values())


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):  # bounded: a pid chain is short
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: the ppid
        if pid <= 1:
            return False
    return False


def await_listener(pid: int, port: int, timeout: float = 60) -> int:
    """Wait until ``pid`` (or a child of it) listens on ``port``: 0 then; 75 when another
    process holds the port (the caller may retry on another); 1 when ``pid`` ended or the
    wait timed out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holders = listening_processes(port)
        if any(_descends_from(holder, pid) for holder in holders):
            return 0
        if holders:
            return 75
        if not Path(f"/proc/{pid}").exists():
            return 1
        time.sleep(0.1)
    return 1


def owns_port(directory: Path, port: int) -> bool:
    """Whether something listens on ``port`` and all of it runs from ``directory``."""
    exes = listeners(port)
    root = str(directory.resolve()) + os.sep
    return bool(exes) and all(exe.startswith(root) for exe in exes)


def start_minicondor(
    script: Sequence[str],
    directory: Path,
    env: Mapping[str, str],
    *,
    port: int | None = None,
    timeout: float = 900,
) -> tuple[subprocess.CompletedProcess[str], int]:
    """``script start DIR`` (``minicondor.sh`` or ``tools/live_pool.sh``) on a free port,
    checked to be this pool's; ``(the start's outcome, the port)``.  A failed start is
    returned as it is (the caller says why); a pool that came up on a port another pool holds
    is stopped and started again on a new port, :data:`TRIES` times.  A ``port`` given is
    tried alone."""
    tried = []
    for _attempt in range(1 if port is not None else TRIES):
        chosen = port if port is not None else free_port()
        tried.append(chosen)
        started = subprocess.run(
            [*script, "start", str(directory)],
            env={**env, "MINICONDOR_PORT": str(chosen)},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if started.returncode == 0 and owns_port(directory, chosen):
            return started, chosen
        taken = bool(listeners(chosen)) and not owns_port(directory, chosen)
        # through a port another pool holds, the script would talk to that pool: by pid only
        stop_minicondor(script, directory, env, via_script=not taken)
        if started.returncode != 0 and not taken:
            return started, chosen  # it failed on its own, not for want of the port
    raise RuntimeError(
        f"the pool in {directory} found its port held by another process each time "
        f"(tried {', '.join(map(str, tried))})"
    )


def running_from(directory: Path) -> list[int]:
    """The processes whose executable lies in ``directory`` (a pool's own release)."""
    root = str(directory.resolve()) + os.sep
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe").startswith(root):
                found.append(int(pid))
        except OSError:
            continue
    return found


def stop_minicondor(
    script: Sequence[str],
    directory: Path,
    env: Mapping[str, str],
    *,
    via_script: bool = True,
    grace: float = 20,
) -> None:
    """``script stop DIR`` (unless ``via_script`` is false), then the end of whatever still
    runs from DIR, by pid; never raises.

    The script stops the master through the pool's port: a pool that came up on a port another
    pool holds is not reached that way (measured: its master outlived ``minicondor.sh stop``).
    """
    if via_script:
        subprocess.run(
            [*script, "stop", str(directory)],
            env=dict(env),
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = running_from(directory)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while pids and running_from(directory) and time.monotonic() < deadline:
            time.sleep(0.2)


__all__ = [
    "TRIES",
    "await_listener",
    "free_port",
    "listeners",
    "listening_processes",
    "owns_port",
    "running_from",
    "start_minicondor",
    "stop_minicondor",
]

if __name__ == "__main__":  # ``python tests/pools.py await-listener PID PORT`` (shell scripts)
    if len(sys.argv) != 4 or sys.argv[1] != "await-listener":
        sys.exit("usage: pools.py await-listener PID PORT")
    sys.exit(await_listener(int(sys.argv[2]), int(sys.argv[3])))
