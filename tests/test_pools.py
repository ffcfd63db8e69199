"""tests/pools.py: a pool started on a port another process holds is caught, stopped and
started again on another port, a bounded number of times (no lucky free port needed: the
"other pool" here holds its port for the whole test)."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pools import (
    TRIES,
    listeners,
    owns_port,
    running_from,
    start_minicondor,
    stop_minicondor,
)

#: A stand-in for minicondor.sh: "start" runs DIR/python (a copy of this interpreter, so its
#: executable lies in the pool's directory) listening on $MINICONDOR_PORT unless that port is
#: taken, and exits 0 either way -- as minicondor.sh does when the other pool answers for ours.
FAKE = """#!/bin/bash
echo "$1${MINICONDOR_PORT:+ $MINICONDOR_PORT}" >> "$2/calls"
case $1 in
start) PYTHONHOME={home} nohup "$2/python" -c '
import os, socket, time
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(os.environ["MINICONDOR_PORT"])))
except OSError:
    raise SystemExit(0)
s.listen()
open(os.environ["POOL_DIR"] + "/pid", "w").write(str(os.getpid()))
time.sleep(600)
' > /dev/null 2>&1 &
  for i in $(seq 50); do [ -s "$2/pid" ] || ! kill -0 $! 2>/dev/null && break; sleep 0.1; done
  echo "export CEDAR_LIVE_COLLECTOR=127.0.0.1:$MINICONDOR_PORT" ;;
stop) [ -s "$2/pid" ] && kill "$(cat "$2/pid")" && rm -f "$2/pid"; true ;;
esac
"""


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[tuple[list[str], Path, dict[str, str]]]:
    directory = tmp_path / "pool"
    directory.mkdir()
    shutil.copy(os.path.realpath(sys.executable), directory / "python")
    script = tmp_path / "fake-minicondor.sh"
    script.write_text(FAKE.replace("{home}", sys.base_prefix))
    script.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "POOL_DIR": str(directory)}
    yield [str(script)], directory, env
    pid = directory / "pid"
    if pid.exists() and pid.read_text():
        os.kill(int(pid.read_text()), 15)


@pytest.fixture
def held() -> Iterator[int]:
    """A port some other process (this one) listens on for the whole test."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def test_the_listener_of_a_port_is_found(held: int, tmp_path: Path) -> None:
    assert listeners(held) == [os.path.realpath("/proc/self/exe")]
    assert owns_port(Path(os.path.realpath("/proc/self/exe")).parent, held)
    assert not owns_port(tmp_path, held)


def test_a_pool_on_its_own_port_is_kept(pool: tuple[list[str], Path, dict[str, str]]) -> None:
    script, directory, env = pool
    started, port = start_minicondor(script, directory, env, timeout=60)
    assert started.returncode == 0 and f"127.0.0.1:{port}" in started.stdout
    assert owns_port(directory, port)
    assert (directory / "calls").read_text() == f"start {port}\n"
    # a pool its stop script does not reach is ended by pid (what runs from its directory)
    assert running_from(directory)
    stop_minicondor(["true"], directory, env, grace=10)
    assert not running_from(directory) and not listeners(port)


def test_a_port_another_pool_holds_is_refused(
    pool: tuple[list[str], Path, dict[str, str]], held: int
) -> None:
    """The start "succeeds" (it asked the other pool): caught, reported; the pool is not
    stopped through the port (that would reach the other pool)."""
    script, directory, env = pool
    with pytest.raises(RuntimeError, match=f"held by another process each time .tried {held}"):
        start_minicondor(script, directory, env, port=held, timeout=60)
    assert (directory / "calls").read_text() == f"start {held}\n"  # stopped by pid, not by port


def test_the_retries_are_bounded(
    pool: tuple[list[str], Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    """Every free port "taken" (the kernel keeps handing out the held one): TRIES starts,
    each ended, then an error -- never a pool talking to another pool's collector."""
    import tests.pools

    monkeypatch.setattr(tests.pools, "free_port", lambda: held)
    script, directory, env = pool
    with pytest.raises(RuntimeError, match="held by another process"):
        start_minicondor(script, directory, env, timeout=60)
    calls = (directory / "calls").read_text().splitlines()
    assert calls == [f"start {held}"] * TRIES


def test_await_listener_tells_ours_from_another_process(held: int) -> None:
    """0 when the started process itself listens, 75 when another holds the port, 1 when the
    started process ended without listening."""
    import subprocess

    from tests.pools import await_listener

    code = "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); "
    code += "print(s.getsockname()[1], flush=True); time.sleep(60)"
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as ours:
        try:
            assert ours.stdout is not None
            port = int(ours.stdout.readline())
            assert await_listener(ours.pid, port, timeout=30) == 0
            assert await_listener(ours.pid, held, timeout=30) == 75
        finally:
            ours.kill()
    assert await_listener(ours.pid, port, timeout=30) == 1
