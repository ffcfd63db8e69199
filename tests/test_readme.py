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
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
_BLOCK = re.compile(r"(<!-- not run: [^>]+-->\n)?```sh\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str | None, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(README)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
    script = block
    for fixed in sorted(set(re.findall(r"\b(?:9681|8080)\b", block))):
        script = script.replace(fixed, str(_free_port()))
    script = script.replace("/tmp/", f"{tmp_path}/")
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",  # no real HTCondor tools: the README's reader has none
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "CONDOR_CONFIG": "/dev/null",  # the mock pool's tools need nothing of this machine's
        "TZ": "UTC",
    }
    assert shutil.which("cedar", path=env["PATH"]), "cedar is not installed beside this Python"
    run = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, f"{script}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    if "api/v1/whoami" in script:
        assert '"authenticated":true' in run.stdout.replace(" ", "")
    if "cedar q " in script:
        assert "hello" in run.stdout or "echo" in run.stdout
    if "condor_version" in script:
        assert "$CondorVersion:" in run.stdout
