"""The distribution: only the five runtime dependencies, and a fresh install imports cleanly."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

import pytest

from cedar.errors import CedarError
from tests.support import CAPTURES

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = {"cryptography", "pyjwt", "scitokens", "construct", "trio"}
TEST_ONLY = ("htcondor", "htcondor2", "classad2", "dpkt", "hypothesis", "pytest")


def _name(requirement: str) -> str:
    for separator in "<>=!~[; ":
        requirement = requirement.split(separator)[0]
    return requirement.lower()


def test_runtime_dependencies_are_exactly_the_five() -> None:
    declared = requires("htc-cedar") or []
    assert {_name(r) for r in declared if "extra ==" not in r} == RUNTIME
    assert "htcondor" in {_name(r) for r in declared if "extra == 'test'" in r}


def test_fresh_venv_install_imports_with_runtime_dependencies_only(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    probe = (
        "import sys, cedar, cedar.daemons.pool, cedar.cli.main, cedar.capture\n"
        f"loaded = sorted(m for m in {TEST_ONLY!r} if m in sys.modules)\n"
        "print(cedar.__version__, loaded)\n"
    )
    result = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["0.1.0", "[]"]
    installed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.lower()
    assert "htcondor" not in installed and "dpkt" not in installed
    cli = subprocess.run(
        [str(venv / "bin" / "cedar"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert cli.returncode == 0 and "demo" in cli.stdout


def test_capture_reading_without_dpkt_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import cedar.capture._dpkt as optional
    from cedar.capture.pcap import read_segments

    monkeypatch.setattr(optional, "dpkt", None)
    with pytest.raises(CedarError, match=r"htc-cedar\[capture\]"):
        read_segments((CAPTURES / "q-all-raw.pcap").read_bytes())
