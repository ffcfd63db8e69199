"""HTCondor's own tools against `cedar pool`, row by row compared with the same command against
the real pool.  The mock runs in-process with exactly the environment `cedar pool` prints
(:meth:`MockPool.client_environment`), once per security setup; the real pool is driven with its
IDTOKEN (root's FS identity may not own jobs there).  Needs ``CEDAR_LIVE_TOOLS`` and
``CEDAR_LIVE_CONDOR_CONFIG``.  Deliberate simulation differences are listed in ``EXPECTED``."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.daemons.pool import SECURITY_SETUPS, MockPool, host_name

SUBMIT = "executable = /bin/sleep\narguments = 300\nhold = true\niwd = {iwd}\nqueue 2\n"

#: (row id, argv with {C} for the cluster) in the order they run: a whole held-job life.
ROWS = [
    ("status-schedd", ["condor_status", "-schedd", "-af", "MyType", "Name", "Machine"]),
    ("status-master", ["condor_status", "-master", "-af", "MyType", "Name", "Machine"]),
    ("status-negotiator", ["condor_status", "-negotiator", "-af", "MyType", "Machine"]),
    ("status-startd", ["condor_status", "-startd", "-af", "MyType", "Machine"]),
    ("status-collector", ["condor_status", "-collector", "-af", "MyType", "Machine"]),
    ("status-types", ["condor_status", "-any", "-af", "MyType"]),
    ("submit", ["condor_submit", "{sub}"]),
    ("q", ["condor_q", "{C}", "-af", "ClusterId", "ProcId", "JobStatus", "Cmd", "Args"]),
    ("q-total", ["condor_q", "{C}", "-totals"]),
    ("qedit", ["condor_qedit", "{C}", "CedarTool", '"yes"']),
    ("q-edited", ["condor_q", "{C}", "-af", "CedarTool"]),
    ("release", ["condor_release", "{C}"]),
    ("hold", ["condor_hold", "{C}"]),
    ("q-held", ["condor_q", "{C}", "-af", "JobStatus", "HoldReasonCode"]),
    ("rm", ["condor_rm", "{C}"]),
    (
        "history",
        ["condor_history", "{C}", "-af", "ClusterId", "ProcId", "JobStatus", "CompletionDate"],
    ),
    ("ping", ["condor_ping", "-type", "schedd", "WRITE"]),
    ("token-list", ["condor_token_list"]),
]

#: Rows whose output differs by design: (what is still compared, why).
EXPECTED = {
    "status-types": ("subset", "the mock advertises no slot (Machine) and no Accounting ads"),
    "release": (
        "stdout",
        "the tool follows up with RESCHEDULE over UDP reusing the TCP session; a real daemon's "
        "session lets it derive a BLOWFISH key for that, the mock (AES only, no UDP) does not, "
        "so the tool prints SECMAN:2006 on stderr (exit 0, the release itself succeeded)",
    ),
    "token-list": ("code", "the real pool's client has the pool's IDTOKEN, the FS client none"),
}


def _tools() -> Path:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    if not tools or not os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"):
        pytest.skip("CEDAR_LIVE_TOOLS / CEDAR_LIVE_CONDOR_CONFIG are not set")
    return Path(tools)


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("_condor_", "CONDOR_"))}


def _normalize(text: str) -> str:
    # condor_ping's "(AES, AES, and FS)" / "(no encryption, no integrity, and CLAIMTOBE)"
    text = re.sub(r"\((?:[^(),]+, )+and [^()]+\)", "(METHODS)", text)
    text = re.sub(r"\bas \S+@\S+", "as USER", text)
    text = re.sub(r"\b\S+@\S+\b", "USER", text)
    return re.sub(r"\d+", "N", text).strip()


def _workdir() -> Path:
    """A directory every account can use: tools run as root drop to ``condor`` to read files."""
    base = os.environ.get("CEDAR_LIVE_IWD") or tempfile.gettempdir()
    path = Path(tempfile.mkdtemp(prefix="cedar-tools-", dir=base))
    path.chmod(0o1777)
    return path


def _run_rows(env: dict[str, str]) -> Iterator[tuple[str, int, str, str]]:
    tools = _tools()
    tmp = _workdir()
    sub = tmp / "job.sub"
    sub.write_text(SUBMIT.format(iwd=tmp))
    sub.chmod(0o644)
    cluster = ""
    for row, argv in ROWS:
        args = [a.replace("{sub}", str(sub)).replace("{C}", cluster) for a in argv]
        for _ in range(120):  # a history record appears once the schedd wrote it (slow when loaded)
            done = subprocess.run([str(tools / args[0]), *args[1:]], env=env, cwd=tmp,
                                  capture_output=True, text=True, timeout=120)  # fmt: skip
            if row != "history" or done.stdout.strip():
                break
            time.sleep(1)
        if row == "submit":
            found = re.search(r"submitted to cluster (\d+)", done.stdout)
            assert found, done.stdout + done.stderr
            cluster = found.group(1)
        yield row, done.returncode, _normalize(done.stdout), _normalize(done.stderr)


@pytest.fixture(scope="module")
def real_rows(live_token_dir: str | None) -> dict[str, tuple[int, str, str]]:
    _tools()
    token_dir = live_token_dir
    if not token_dir:
        pytest.skip("the pool's IDTOKEN directory is not readable by this user")
    env = _base_env()
    env.update(
        CONDOR_CONFIG=os.environ["CEDAR_LIVE_CONDOR_CONFIG"],
        _condor_SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS",
        _condor_SEC_TOKEN_DIRECTORY=token_dir,
    )
    return {row: rest for row, *rest in _run_rows(env)}  # type: ignore[misc]


#: The setups whose clients need nothing but this process's environment; ``kerberos`` needs a
#: KDC, a keytab and a ticket, and has its own test (tests/live_pool/test_kerberos.py).
SELF_CONTAINED_SETUPS = sorted(set(SECURITY_SETUPS) - {"kerberos"})


@pytest.mark.parametrize("setup", SELF_CONTAINED_SETUPS)
def test_tools_against_cedar_pool_match_the_real_pool(setup, real_rows) -> None:
    mock = MockPool.for_setup(setup, simulate=True, run_time=600, schedd_name=host_name())
    with mock.run_in_thread() as pool:
        env = {**_base_env(), **pool.client_environment()}
        mock_rows = {row: rest for row, *rest in _run_rows(env)}
    mismatches = {}
    for row, (code, out, err) in mock_rows.items():
        real_code, real_out, real_err = real_rows[row]
        kind = EXPECTED.get(row, ("all", ""))[0]
        if kind == "subset":
            assert code == real_code and set(out.split()) <= set(real_out.split()), row
            continue
        if kind == "stdout":
            err, real_err = "", ""
        if kind == "code":
            out, real_out, err, real_err = "", "", "", ""
        if (code, out, err) != (real_code, real_out, real_err):
            mismatches[row] = {"mock": (code, out, err), "real": (real_code, real_out, real_err)}
    assert not mismatches
