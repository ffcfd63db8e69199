"""``cedar submit --spool`` and ``cedar transfer-data`` against the mock pool."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from cedar import Schedd
from cedar.cli.main import main
from cedar.cli.spool_tools import ProgressBar
from cedar.commands.filetransfer import TransferProgress
from cedar.daemons.pool import MockPool

SUBMIT = """\
executable = job.sh
transfer_input_files = sub, blob.bin
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
output = out.txt
error = err.txt
transfer_output_files = result.txt
queue
"""


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_submit_spool_then_transfer_data(
    spool_pool: MockPool, inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (inputs / "job.sub").write_text(SUBMIT)
    monkeypatch.chdir(inputs)  # as condor_submit, the job's Iwd is the current directory
    addr = spool_pool.schedd_address
    code, text = run("submit", "--spool", "--addr", addr, str(inputs / "job.sub"), "--json")
    assert code == 0, text
    record = json.loads(text)
    assert record["spooled"][0]["files"] == ["sub/data.txt", "sub/empty.dat", "blob.bin", "job.sh"]
    cluster = record["cluster"]
    schedd = Schedd(addr)
    deadline = time.monotonic() + 120  # generous: a loaded CI machine
    while time.monotonic() < deadline:
        ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus"])
        if ads and ads[0]["JobStatus"] == 4:
            break
        time.sleep(0.05)
    code, text = run("transfer-data", "--addr", addr, str(cluster))
    assert (code, text) == (0, "Fetching data files...\n")
    assert (inputs / "result.txt").read_text() == f"output result.txt of job {cluster}.0\n"
    assert "blob.bin 256 " in (inputs / "out.txt").read_text()


def test_submit_remote_names_the_schedd_and_spools(
    spool_pool: MockPool, inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """condor_submit -remote NAME: the schedd NAME (found through the collector), spooled."""
    (inputs / "job.sub").write_text(SUBMIT)
    monkeypatch.chdir(inputs)
    name = str(spool_pool.schedd.schedd_ad()["Name"])
    argv = ["submit", "-pool", spool_pool.address, "-remote", name, "job.sub", "--json"]
    code, text = run(*argv)
    assert code == 0, text
    assert json.loads(text)["spooled"][0]["files"][-1] == "job.sh"
    code, _ = run("submit", "-remote", "no-such-schedd", "-pool", spool_pool.address, "job.sub")
    assert code != 0


def test_transfer_data_needs_ids(spool_pool: MockPool) -> None:
    code, _ = run("transfer-data", "--addr", spool_pool.schedd_address)
    assert code == 2


def test_progress_bar_only_on_a_terminal() -> None:
    step = TransferProgress("a", 5, 10, 5, 10)
    plain = io.StringIO()
    ProgressBar(plain)(step)
    assert plain.getvalue() == ""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    bar = ProgressBar(tty)
    bar(step)
    bar.close()
    assert "50%" in tty.getvalue() and tty.getvalue().endswith("\n")
