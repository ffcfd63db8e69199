"""``cedar whoami`` next to ``condor_ping -verbose`` on the real 25.13.2 pool, for the same
credential: FS (root), IDTOKENS (testuser's token) and KERBEROS (testuser's ticket, kdc.sh).
Through CCB: tests/live_pool/test_ccb_schedd_live.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: This interpreter's cedar (the run as testuser has no ``cedar`` script beside its Python).
CEDAR = [sys.executable, "-m", "cedar.cli.main"]
#: The lines both print, and must print alike.
SHARED = ("Remote Mapping", "Authenticated using", "Encryption")


def fields(text: str) -> dict[str, str]:
    """``Label: value`` lines as a dict (condor_ping -verbose's layout, and cedar whoami's)."""
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {label.strip(): value.strip() for label, value in pairs}


def compare(env: dict[str, str], condor_ping: list[str] | None = None) -> dict[str, str]:
    """Run both for the schedd at WRITE; the shared lines agree; cedar's fields returned."""
    ours = subprocess.run(
        [*CEDAR, "whoami", "--type", "schedd"], env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert ours.returncode == 0, ours.stderr
    theirs = subprocess.run(
        condor_ping or ["condor_ping", "-verbose", "-type", "schedd", "WRITE"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert theirs.returncode == 0, theirs.stderr
    mine, reference = fields(ours.stdout), fields(theirs.stdout)
    assert {k: mine[k] for k in SHARED} == {k: reference[k] for k in SHARED}
    assert mine["Authorized (WRITE)"] == reference["Authorized"] == "TRUE"
    assert mine["Route"] == "direct"
    return mine


def _pool_env(**knobs: str) -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    env = dict(os.environ, CONDOR_CONFIG=os.environ["CEDAR_LIVE_CONDOR_CONFIG"])
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env.update({f"_condor_{name}": value for name, value in knobs.items()})
    return env


def test_fs() -> None:
    if os.geteuid() != 0:
        pytest.skip("FS as root: the run as testuser has tests/live_pool/test_as_testuser.py")
    mine = compare(_pool_env(SEC_CLIENT_AUTHENTICATION_METHODS="FS"))
    assert mine["Authenticated using"] == "FS"
    assert mine["Session"].startswith("new, kept for later commands (")


def test_idtokens(live_token_dir: str | None) -> None:
    if live_token_dir is None:  # the directory may be readable, its 0600 token is root's
        pytest.skip("the pool's IDTOKEN is not readable by this user")
    token_dir = live_token_dir
    env = _pool_env(SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS", SEC_TOKEN_DIRECTORY=token_dir)
    mine = compare(env)
    assert (mine["Authenticated using"], mine["Remote Mapping"]) == (
        "IDTOKENS",
        os.environ.get("CEDAR_LIVE_TOKEN_USER", "testuser@minicondor"),
    )


def test_kerberos(krb5: dict[str, str]) -> None:
    """cedar as root with testuser's ccache; condor_ping as testuser (as root it would use the
    daemons' keytab: kdc.sh's README)."""
    env = {**krb5, "_condor_SEC_CLIENT_AUTHENTICATION_METHODS": "KERBEROS"}
    env.setdefault("CONDOR_CONFIG", os.environ.get("CEDAR_LIVE_CONDOR_CONFIG", ""))
    tools = os.environ.get("CEDAR_LIVE_TOOLS", "")
    ping = f"PATH={tools}:$PATH condor_ping -verbose -type schedd WRITE"
    mine = compare(env, ["su", "testuser", "-c", ping])
    assert mine["Authenticated using"] == "KERBEROS"
    assert mine["Remote Mapping"] == krb5["CEDAR_LIVE_KRB5_USER"]
    assert mine["Principal"] == krb5["CEDAR_LIVE_KRB5_PRINCIPAL"]
