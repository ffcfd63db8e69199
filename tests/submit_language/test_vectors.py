"""The submit translation against the spec 06 §5.9 vectors (condor_submit -dry-run output)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cedar.submit_language import Submit, SubmitSettings
from tests.submit_language.vectors import VECTORS

IGNORED = {
    "QDate",
    "EnteredCurrentStatus",
    "JobSubmitFile",
    "ExecutableSize",
    "ImageSize",
    "DiskUsage",
    "TransferInputSizeMB",
}
PROC_ITEM = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]*)')


@pytest.fixture
def submit_dir(tmp_path: Path) -> Path:
    (tmp_path / "in.txt").write_text("input\n")
    (tmp_path / "data1.dat").write_text("data\n")
    (tmp_path / "sub1").mkdir()
    return tmp_path


def settings() -> SubmitSettings:
    return SubmitSettings(
        filesystem_domain="minicondor", arch="X86_64", opsys="LINUX", submit_method=0, user="root"
    )


def build(text: str, directory: Path):
    return Submit(text, submit_file="t.sub").build(
        1, settings=settings(), submit_dir=str(directory), now=1795307145
    )


def parse_expected(text: str, directory: Path):
    changed: dict[str, str] = {}
    absent: list[str] = []
    procs: list[dict[str, str]] = []
    for line in text.split("\n"):  # not splitlines(): 0x1E is a line break to Python
        line = line.replace("/w", str(directory))
        if line.startswith("# absent:"):
            absent = [n.strip() for n in line.split(":", 1)[1].split(",")]
        elif line.startswith("# procs:"):
            for part in line.split(":", 1)[1].split("|"):
                _label, _, body = part.strip().partition(": ")
                proc = {} if body.strip() == "-" else dict(PROC_ITEM.findall(body))
                procs.append(proc)
        elif line.startswith("#") or not line.strip():
            continue
        else:
            name, _, value = line.partition("=")
            changed[name] = value
    return changed, absent, procs


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vector(name: str, submit_dir: Path) -> None:
    text, expected = VECTORS[name]
    baseline = build("executable = /bin/echo\nqueue\n", submit_dir).cluster_ad
    ads = build(text, submit_dir)
    changed, absent, procs = parse_expected(expected, submit_dir)
    got_changed = {
        k: v for k, v in ads.cluster_ad.items() if k not in IGNORED and baseline.get(k) != v
    }
    assert got_changed == changed
    got_absent = sorted(k for k in baseline if k not in ads.cluster_ad and k not in IGNORED)
    assert got_absent == sorted(absent)
    got_procs = []
    for proc in ads.proc_ads:
        extra = {k: v for k, v in proc.items() if k not in ("ProcId",) and k not in IGNORED}
        if extra.get("JobStatus") == "1":
            del extra["JobStatus"]
        got_procs.append(extra)
    assert got_procs == procs


def test_baseline_matches_the_condor_submit_capture(submit_dir: Path) -> None:
    """The attribute set of submit-2procs-plain (job-b.sub): 60 cluster attributes."""
    text = (
        "executable = /bin/sleep\narguments = 5\nhold = false\noutput = /dev/null\n"
        "error = /dev/null\nqueue 2\n"
    )
    ads = build(text, submit_dir)
    captured = [
        "ClusterId",
        "In",
        "Cmd",
        "Err",
        "Iwd",
        "Out",
        "Args",
        "Rank",
        "Owner",
        "QDate",
        "MyType",
        "JobPrio",
        "MaxHosts",
        "MinHosts",
        "NumCkpts",
        "DiskUsage",
        "ImageSize",
        "ExitStatus",
        "TargetType",
        "TransferIn",
        "Environment",
        "JobUniverse",
        "NumRestarts",
        "RequestCpus",
        "RequestDisk",
        "TransferErr",
        "TransferOut",
        "CurrentHosts",
        "ExitBySignal",
        "NumJobStarts",
        "RemoteSysCpu",
        "Requirements",
        "CommittedTime",
        "CondorVersion",
        "JobSubmitFile",
        "RemoteUserCpu",
        "RequestMemory",
        "SubmitVersion",
        "CondorPlatform",
        "ExecutableSize",
        "NumSystemHolds",
        "JobNotification",
        "JobSubmitMethod",
        "LeaveJobInQueue",
        "FileSystemDomain",
        "JobLeaseDuration",
        "TotalSuspensions",
        "CommittedSlotTime",
        "NumJobCompletions",
        "CumulativeSlotTime",
        "LastSuspensionTime",
        "RemoteWallClockTime",
        "ShouldTransferFiles",
        "TransferInputSizeMB",
        "EnteredCurrentStatus",
        "WhenToTransferOutput",
        "CumulativeRemoteSysCpu",
        "CommittedSuspensionTime",
        "CumulativeRemoteUserCpu",
        "CumulativeSuspensionTime",
    ]  # noqa: SIM905
    assert list(ads.cluster_ad) == captured
    assert ads.cluster_ad["Requirements"] == (
        '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && '
        '(versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk))'
        " && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == "
        "MY.FileSystemDomain) || (TARGET.HasFileTransfer))"
    )
    assert ads.cluster_ad["RequestDisk"] == "MAX({ 1024,(TransferInputSizeMB + 1) * 1.25 }) * 1024"
    assert ads.cluster_ad["Owner"] == "undefined"
    assert ads.proc_ads == [{"ProcId": "0", "JobStatus": "1"}, {"ProcId": "1", "JobStatus": "1"}]
