"""Every shell command in the README runs as written, against the mock pool and ``cedar serve
--demo``, in a scratch HOME and on free ports (the README's fixed ports and /tmp paths are
replaced; nothing else is).

The README's blocks are of three kinds: the two set-up lines at the top (they are what CI runs
to get here), blocks after ``<!-- not run: WHY -->`` (they need the reader's own pool or install
from an index), and the rest, which this test runs, each in one ``bash`` with ``set -e``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.pools import TRIES, free_port

ROOT = Path(__file__).resolve().parent.parent
POOLS = ROOT / "tests" / "pools.py"
README = (ROOT / "README.md").read_text()
_BLOCK = re.compile(r"(<!-- not run: [^>]+-->\n)?```sh\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str | None, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(README)]


def _guarded(script: str, ports: list[int]) -> str:
    """After each line that starts a server in the background on one of ``ports``, a check that
    the port's listener is that server: exit 75 when another process got the port first (the
    test then runs the block again on other ports) rather than talking to that process."""
    out = []
    for line in script.splitlines():
        out.append(line)
        port = next((p for p in ports if str(p) in line), None)
        if line.rstrip().endswith("&") and port is not None:
            out.append(f'"{sys.executable}" "{POOLS}" await-listener "$!" {port} || exit $?')
    return "\n".join(out) + "\n"


def _run_block(
    block: str, tmp_path: Path, env: dict[str, str], port: Callable[[], int] = free_port
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """The block on fresh free ports (again, :data:`TRIES` times, while one was taken)."""
    for _attempt in range(TRIES):
        script = block
        ports = []
        for fixed in sorted(set(re.findall(r"\b(?:9681|8080)\b", block))):
            ports.append(port())
            script = script.replace(fixed, str(ports[-1]))
        script = script.replace("/tmp/", f"{tmp_path}/")
        run = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + _guarded(script, ports)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if run.returncode != 75:
            break
    return script, run


RUNNABLE = [text for marker, text in _blocks()[1:] if marker is None]


def test_the_readme_is_short_and_its_blocks_are_accounted_for() -> None:
    assert len(README.splitlines()) <= 200
    first = _blocks()[0][1]
    assert "cedar demo" in first and "python -m pytest" in first
    assert len(RUNNABLE) >= 3  # the CLI tour, the condor_* names, cedar serve
    for marker, _ in _blocks():
        assert marker is None or "not run:" in marker


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.split("\n", 1)[0][:40] for b in RUNNABLE])
def test_readme_block_runs(block: str, tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",  # no real HTCondor tools: the README's reader has none
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "CONDOR_CONFIG": "/dev/null",  # the mock pool's tools need nothing of this machine's
        "TZ": "UTC",
    }
    assert shutil.which("cedar", path=env["PATH"]), "cedar is not installed beside this Python"
    script, run = _run_block(block, tmp_path, env)
    assert run.returncode == 0, f"{script}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    if "api/v1/whoami" in script:
        assert '"authenticated":true' in run.stdout.replace(" ", "")
    if "cedar q " in script:
        assert "hello" in run.stdout or "echo" in run.stdout
    if "condor_version" in script:
        assert "$CondorVersion:" in run.stdout


def test_a_port_taken_first_by_another_process_is_not_used(tmp_path: Path) -> None:
    """Every port the kernel hands out "taken" by another listener: the block stops at the
    check after its background server (exit 75) and runs again, TRIES times, never going on
    to talk to the other process."""
    import socket

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        held = other.getsockname()[1]
        block = "bash -c 'sleep 1' 9681 &\necho reached >> /tmp/log\n"
        env = {"PATH": "/usr/bin:/bin"}
        script, run = _run_block(block, tmp_path, env, lambda: held)
    assert run.returncode == 75 and str(held) in script
    assert not (tmp_path / "log").exists()
