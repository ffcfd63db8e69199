"""``cedar condor-commands DIR``: the opt-in ``condor_*`` launchers, and ``argv[0]`` dispatch."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cedar.cli.condor_names import MARKER
from cedar.cli.main import CONDOR_NAMES, main, tool_name

#: What issue 34 names (cedar may add more).
REQUIRED = (
    "condor_submit",
    "condor_q",
    "condor_rm",
    "condor_hold",
    "condor_release",
    "condor_history",
    "condor_status",
    "condor_tail",
    "condor_qedit",
    "condor_ping",
    "condor_version",
    "condor_vacate",
)


def _empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH with one empty directory: no real HTCondor on it, whatever this machine has."""
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_list_names_every_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["condor-commands", "--list"]) == 0
    listed = capsys.readouterr().out.split()
    assert set(REQUIRED) <= set(listed)
    assert listed == list(CONDOR_NAMES)


def test_writes_one_launcher_per_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _empty_path(monkeypatch, tmp_path)
    target = tmp_path / "new" / "bin"  # created, parents too
    assert main(["condor-commands", str(target)]) == 0
    out = capsys.readouterr().out
    assert sorted(os.listdir(target)) == sorted(CONDOR_NAMES)
    for name in CONDOR_NAMES:
        path = target / name
        text = path.read_text()
        assert text.startswith(f"#!{sys.executable}\n")
        assert MARKER in text and repr(name) in text
        assert path.stat().st_mode & stat.S_IXUSR
        assert f"wrote {path}" in out
    assert f'export PATH="$PATH:{target}"' in out
    # writing again over its own launchers is fine
    assert main(["condor-commands", str(target)]) == 0


def test_launcher_runs_as_the_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _empty_path(monkeypatch, tmp_path)
    assert main(["condor-commands", str(tmp_path / "bin")]) == 0
    result = subprocess.run(
        [str(tmp_path / "bin" / "condor_version")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    version, platform = result.stdout.splitlines()
    assert version.startswith("$CondorVersion: ") and version.endswith(" $")
    assert "cedar" in version
    assert platform.startswith("$CondorPlatform: ") and platform.endswith(" $")


def test_refuses_to_stand_beside_a_real_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _empty_path(monkeypatch, tmp_path) / "condor_q"
    real.write_text("#!/bin/sh\necho real\n")
    real.chmod(0o755)
    target = tmp_path / "bin"
    assert main(["condor-commands", str(target)]) == 1
    err = capsys.readouterr().err
    assert str(real) in err and "--force" in err
    assert not target.exists()
    assert main(["condor-commands", "--force", str(target)]) == 0
    assert (target / "condor_q").is_file()


def test_refuses_to_replace_a_file_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _empty_path(monkeypatch, tmp_path)
    target = tmp_path / "bin"
    target.mkdir()
    (target / "condor_rm").write_text("mine\n")
    assert main(["condor-commands", str(target)]) == 1
    assert str(target / "condor_rm") in capsys.readouterr().err
    assert (target / "condor_rm").read_text() == "mine\n"


def test_a_directory_is_needed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["condor-commands"]) == 2
    assert "directory" in capsys.readouterr().err


def test_argv0_names_the_tool() -> None:
    assert tool_name("/opt/x/condor_q") == "condor_q"
    assert tool_name("condor_version") == "condor_version"
    assert tool_name("/usr/bin/cedar") is None
    assert tool_name("condor_nonesuch") is None
    code = (
        "import sys\n"
        "sys.argv = ['/somewhere/condor_version']\n"
        "from cedar.cli.main import main\n"
        "sys.exit(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("$CondorVersion: ")


def test_help_is_the_tools_usage(capsys: pytest.CaptureFixture[str]) -> None:
    """The recorded usage of the 25.13.2 tools: stream, text and status (condor_rm's on
    stderr, condor_submit's on stdout; condor_tail reads --help as a job id, exit 1)."""
    from cedar.cli.main import run_as

    assert run_as("condor_rm", ["-help"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("Usage: condor_rm [options]")
    assert run_as("condor_submit", ["--help"]) == 0
    assert capsys.readouterr().out.startswith("Usage: condor_submit [options]")
    assert run_as("condor_tail", ["--help"]) == 1
    assert capsys.readouterr().err.startswith("Invalid Job ID: --help\nUsage: condor_tail ")
    for tool in CONDOR_NAMES:
        assert run_as(tool, ["-h"]) in (0, 1)
        captured = capsys.readouterr()
        assert "Usage: " in captured.out + captured.err


def test_condor_version_words(capsys: pytest.CaptureFixture[str]) -> None:
    """-arch and -opsys print the platform's halves; other words are refused with
    condor_version's message and usage, exit 1 (observed on 25.13.2)."""
    from cedar.cli.main import run_as

    assert run_as("condor_version", ["-arch", "-opsys"]) == 0
    assert capsys.readouterr().out.splitlines() == ["X86_64", "Python"]
    assert run_as("condor_version", ["-x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ERROR: unrecognized argument: '-x'\nUsage: ")
    assert run_as("condor_version", ["extra"]) == 1
    assert capsys.readouterr().err.startswith("ERROR: invalid argument: 'extra'\n")


def test_condor_vacate_says_what_it_cannot_do(capsys: pytest.CaptureFixture[str]) -> None:
    from cedar.cli.main import run_as

    assert run_as("condor_vacate", []) == 1
    assert "does not vacate machines" in capsys.readouterr().err


def test_condor_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under a condor_* name a usage error exits 1, as condor's tools (cedar's own is 2);
    condor_submit's missing file is its words, on stderr (observed on 25.13.2)."""
    from cedar.cli.main import run_as

    assert run_as("condor_q", ["-bogus"]) == 1
    assert main(["q", "-bogus"]) == 2
    missing = tmp_path / "none.sub"
    with pytest.raises(SystemExit) as exited:
        run_as("condor_submit", [str(missing)])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.endswith(
        f"\nERROR: Failed to open command file ({missing}) (No such file or directory)\n"
    )


def test_condor_submit_refusal_in_its_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A description condor_submit refuses: 'Submitting job(s)' without a newline on stdout,
    'ERROR: ...' on stderr, exit 1 (observed on 25.13.2); no schedd is reached."""
    from cedar.cli.main import run_as

    sub = tmp_path / "bad.sub"
    sub.write_text("executable = /bin/true\nhold = yes\nqueue\n")
    assert run_as("condor_submit", ["-dry-run", "-", str(sub)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "Dry-Run job(s)\n"
    assert captured.err == "ERROR: hold=yes is invalid, must eval to a boolean.\n"


def test_launcher_path_loads_no_extras() -> None:
    """A launcher imports what ``cedar q`` imports, nothing more (module lists, not time)."""
    from tests.cli.test_startup import NEVER, REFUSED

    code = (
        "import json, sys\n"
        "from cedar.cli.condor_names import main\n"
        f"status = main('condor_q', ['-all', '-addr', {REFUSED!r}, '-timeout', '5'])\n"
        "print('MODULES ' + json.dumps([status, sorted(sys.modules)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    line = [x for x in result.stdout.splitlines() if x.startswith("MODULES ")][-1]
    status, modules = json.loads(line.removeprefix("MODULES "))
    assert status == 1  # unreachable: condor's 1, not cedar's 3
    assert "cedar.stream.connection" in modules
    heavy = [m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER)]
    assert heavy == []
