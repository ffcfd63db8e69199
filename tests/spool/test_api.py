"""Schedd.submit(spool=True)/spool/retrieve against the mock schedd, sync and async (spec 07)."""

from __future__ import annotations

import builtins
import errno
import os
import time
from pathlib import Path
from typing import Any

import pytest
import trio

import cedar
from cedar.commands.filetransfer import FileTransferError
from cedar.commands.spool import SpoolRefused
from cedar.daemons.pool import MockPool

SUBMIT = """
executable = job.sh
transfer_input_files = sub, blob.bin
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
output = out.txt
error = err.txt
transfer_output_files = result.txt, blob.bin
transfer_output_remaps = "result.txt = results/renamed.txt"
queue {count}
"""


def wait_status(schedd: cedar.Schedd, cluster: int, status: int, procs: int = 1) -> list:
    deadline = time.monotonic() + 120  # generous: a loaded CI machine
    while time.monotonic() < deadline:
        ads = schedd.query(f"ClusterId == {cluster}", ["ProcId", "JobStatus", "RemoveReason"])
        if len(ads) == procs and all(ad["JobStatus"] == status for ad in ads):
            return ads
        time.sleep(0.05)
    raise AssertionError(f"jobs of {cluster} did not reach status {status}: {ads}")


def submit(schedd: cedar.Schedd, inputs: Path, count: int = 1) -> cedar.SubmitResult:
    return schedd.submit(
        cedar.Submit(SUBMIT.format(count=count)), spool=True, submit_dir=str(inputs)
    )


def test_spool_run_retrieve(spool_pool: MockPool, inputs: Path, tmp_path: Path) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    result = submit(schedd, inputs, count=2)
    held = schedd.query(
        f"ClusterId == {result.cluster}", ["JobStatus", "HoldReasonCode", "Iwd", "SUBMIT_Iwd"]
    )
    assert [(ad["JobStatus"], ad["HoldReasonCode"]) for ad in held] == [(5, 16), (5, 16)]
    assert held[0]["SUBMIT_Iwd"] == str(inputs)
    assert held[0]["Iwd"].endswith(f"cluster{result.cluster}.proc0.subproc0")
    seen = []
    spooled = schedd.spool(result, progress=seen.append)
    assert [j.report.ok for j in spooled] == [True, True]
    assert spooled[0].report.files == ["sub/data.txt", "sub/empty.dat", "blob.bin", "job.sh"]
    assert seen and seen[-1].total_done == seen[-1].total_size
    job_dir = Path(held[0]["Iwd"])
    assert (job_dir / "blob.bin").read_bytes() == bytes(range(256))
    assert (job_dir / "sub").stat().st_mode & 0o777 == 0o750
    assert (job_dir / "job.sh").stat().st_mode & 0o777 == 0o755
    wait_status(schedd, result.cluster, 4, procs=2)
    dest = tmp_path / "fetched"
    fetched = schedd.retrieve(f"{result.cluster}.1", dest)
    assert [(j.cluster, j.proc) for j in fetched] == [(result.cluster, 1)]
    assert (dest / "results" / "renamed.txt").read_text() == (
        f"output result.txt of job {result.cluster}.1\n"
    )
    assert (dest / "blob.bin").read_bytes() == bytes(range(256))
    manifest = (dest / "out.txt").read_text()
    assert "sub/data.txt 18 " in manifest and "blob.bin 256 " in manifest
    assert (dest / "err.txt").read_text() == ""
    assert not list(dest.rglob(".cedar-partial-*"))
    # fetched once: LeaveJobInQueue turns false and proc 1 leaves the queue; proc 0 stays
    deadline = time.monotonic() + 120  # generous: a loaded CI machine
    while time.monotonic() < deadline:
        left = schedd.query(f"ClusterId == {result.cluster}", ["ProcId"])
        if [ad["ProcId"] for ad in left] == [0]:
            break
        time.sleep(0.05)
    assert [ad["ProcId"] for ad in left] == [0]
    # without a destination, output goes to the job's own Iwd and remaps
    schedd.retrieve(str(result.cluster))
    assert (inputs / "results" / "renamed.txt").exists()
    assert (inputs / "out.txt").exists()


def test_missing_input_removes_the_job(spool_pool: MockPool, inputs: Path) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    result = submit(schedd, inputs)
    os.unlink(inputs / "blob.bin")
    with pytest.raises(FileTransferError, match="No such file") as info:
        schedd.spool(result)
    assert info.value.code == 13 and info.value.subcode == 2
    # removed at once; the simulated queue may already have moved it to the history
    deadline = time.monotonic() + 120  # generous: a loaded CI machine
    while time.monotonic() < deadline:
        where = f"ClusterId == {result.cluster}"
        ads = schedd.query(where, ["JobStatus", "RemoveReason"]) or list(
            schedd.history(where, ["JobStatus", "RemoveReason"], 1)
        )
        if ads and ads[0]["JobStatus"] == 3:
            break
        time.sleep(0.05)
    assert ads[0]["RemoveReason"] == "Staging of job files failed"


def test_unreadable_input(
    spool_pool: MockPool, inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    result = submit(schedd, inputs)
    blob = inputs / "blob.bin"
    if os.geteuid() == 0:
        # root reads a mode-000 file anyway (and CI runs as root): refuse it as the kernel
        # refuses a user, at the same call
        real_open = builtins.open

        def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and Path(file) == blob:
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", refusing_open)
    else:
        os.chmod(blob, 0)
    with pytest.raises(FileTransferError, match="Permission denied"):
        schedd.spool(result)


def test_refusals(spool_pool: MockPool, inputs: Path) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    result = submit(schedd, inputs)
    schedd.spool(result)
    wait_status(schedd, result.cluster, 4)
    with pytest.raises(SpoolRefused, match="already spooled"):
        schedd.spool(result)  # StageInFinish is set
    other = submit(schedd, inputs)
    schedd.edit(f"{other.cluster}.0", "HoldReasonCode", 1)
    with pytest.raises(SpoolRefused):
        schedd.spool(other)
    assert schedd.retrieve("ClusterId == -42") == []


def test_async_twins(spool_pool: MockPool, inputs: Path, tmp_path: Path) -> None:
    async def main() -> list:
        schedd = cedar.AsyncSchedd(spool_pool.schedd_address)
        result = await schedd.submit(
            cedar.Submit(SUBMIT.format(count=1)), spool=True, submit_dir=str(inputs)
        )
        await schedd.spool(result)
        for _ in range(2400):  # up to 120 s: generous for a loaded CI machine
            ads = await schedd.query(f"ClusterId == {result.cluster}", ["JobStatus"])
            if ads and ads[0]["JobStatus"] == 4:
                break
            await trio.sleep(0.05)
        return await schedd.retrieve([f"{result.cluster}.0"], tmp_path / "out")

    fetched = trio.run(main)
    assert fetched[0].report.ok
    assert (tmp_path / "out" / "results" / "renamed.txt").exists()


def test_destination_confines_remaps(spool_pool: MockPool, inputs: Path, tmp_path: Path) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    text = SUBMIT.format(count=1).replace("results/renamed.txt", "/tmp/cedar-remap-escape.txt")
    result = schedd.submit(cedar.Submit(text), spool=True, submit_dir=str(inputs))
    schedd.spool(result)
    wait_status(schedd, result.cluster, 4)
    with pytest.raises(FileTransferError, match="absolute remap"):
        schedd.retrieve(str(result.cluster), tmp_path / "confined")
    assert not Path("/tmp/cedar-remap-escape.txt").exists()


def test_retrieve_byte_limit_leaves_no_partial_file(
    spool_pool: MockPool, inputs: Path, tmp_path: Path
) -> None:
    schedd = cedar.Schedd(spool_pool.schedd_address)
    result = submit(schedd, inputs)
    schedd.spool(result)
    wait_status(schedd, result.cluster, 4)
    dest = tmp_path / "limited"
    with pytest.raises(FileTransferError, match="limit"):
        schedd.retrieve(str(result.cluster), dest, max_bytes=100)
    assert not [p for p in dest.rglob("*") if p.is_file() and p.stat().st_size > 100]
    assert not list(dest.rglob(".cedar-partial-*"))
    # the failed fetch set no StageOutFinish: the job is still there and can be fetched again
    fetched = schedd.retrieve(str(result.cluster), dest)
    assert fetched[0].report.ok
