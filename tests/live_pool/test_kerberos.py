"""KERBEROS against the real pool and a real MIT KDC (``kdc.sh``, spec 10): cedar's client
authenticates to the 25.13.2 schedd as testuser (as ``condor_ping`` reports for the same
ticket), each error a user meets is one line, and the real tools authenticate to ``cedar pool
--security kerberos``.  The KDC is started once for the session (Debian's krb5-kdc, installed
by ``.ci/run``) unless ``CEDAR_LIVE_KRB5_CCACHE`` names a running one."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.live


def cedar(env: dict[str, str], *args: str, **knobs: str) -> subprocess.CompletedProcess[str]:
    full = dict(env)
    full["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "KERBEROS"
    full.update({f"_condor_{k}": v for k, v in knobs.items() if k != "KRB5CCNAME"})
    if "KRB5CCNAME" in knobs:
        full["KRB5CCNAME"] = knobs["KRB5CCNAME"]
    return subprocess.run(
        ["cedar", *args], capture_output=True, text=True, timeout=120, env=full, check=False
    )


def test_cedar_ping_write_is_testuser_as_condor_ping_says(krb5: dict[str, str]) -> None:
    ours = cedar(krb5, "ping", "--type", "schedd", "WRITE")
    assert ours.returncode == 0, ours.stderr
    principal = krb5["CEDAR_LIVE_KRB5_PRINCIPAL"]
    assert (
        f"WRITE: authorized as {krb5['CEDAR_LIVE_KRB5_USER']} "
        f"(authentication KERBEROS as {principal}, crypto AES)"
    ) in ours.stdout
    theirs = subprocess.run(
        ["su", "testuser", "-c", "condor_ping -verbose -type schedd WRITE"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**krb5, "_condor_SEC_CLIENT_AUTHENTICATION_METHODS": "KERBEROS"},
    )
    assert f"Remote Mapping:              {krb5['CEDAR_LIVE_KRB5_USER']}" in theirs.stdout


def test_cedar_submit_q_rm_authenticate_with_kerberos(krb5: dict[str, str], tmp_path: Path) -> None:
    iwd = Path(krb5.get("CEDAR_LIVE_IWD") or "/tmp") / f"krb-{os.getpid()}"
    iwd.mkdir(exist_ok=True)
    iwd.chmod(0o1777)
    sub = iwd / "job.sub"
    sub.write_text(f"executable = /bin/sleep\narguments = 300\niwd = {iwd}\nqueue\n")
    submitted = cedar(krb5, "submit", "--terse", str(sub))
    assert submitted.returncode == 0, submitted.stderr
    cluster = submitted.stdout.split(".")[0].strip()
    listed = cedar(krb5, "q", cluster, "-af", "Owner", "User")
    assert listed.stdout.split() == ["testuser", krb5["CEDAR_LIVE_KRB5_USER"]], listed.stderr
    removed = cedar(krb5, "rm", cluster)
    assert removed.returncode == 0 and "marked for removal" in removed.stdout, removed.stderr


def _kinit(krb5: dict[str, str], cache: Path, lifetime: str) -> Path:
    """A new ccache holding only testuser's TGT (kinit from its keytab: test set-up only)."""
    kinit = subprocess.run(
        ["kinit", "-k", "-t", krb5["CEDAR_LIVE_KRB5_KEYTAB"], "-l", lifetime, "-c", f"FILE:{cache}",
         krb5["CEDAR_LIVE_KRB5_PRINCIPAL"]],
        capture_output=True, text=True, timeout=60, env=krb5,
    )  # fmt: skip
    assert kinit.returncode == 0, kinit.stderr
    return cache


def test_each_user_error_is_one_line(krb5: dict[str, str], tmp_path: Path) -> None:
    def error(**knobs: str) -> str:
        run = cedar(krb5, "ping", "--type", "schedd", "WRITE", **knobs)
        assert run.returncode != 0
        return run.stdout + run.stderr

    assert "no Kerberos credential cache /nonexistent (run kinit)" in error(
        KRB5CCNAME="FILE:/nonexistent"
    )
    assert "refused our ticket for nokeytab/localhost@MINICONDOR.TEST" in error(
        KERBEROS_SERVER_SERVICE=krb5["CEDAR_LIVE_KRB5_BAD_SERVICE"]
    )
    assert "the KDC does not know the service principal" in error(KERBEROS_SERVER_SERVICE="nosuch")
    short = _kinit(krb5, tmp_path / "short", "1s")
    time.sleep(2.5)  # let the 1-second ticket expire (nothing about the timing is asserted)
    assert "expired at" in error(KRB5CCNAME=f"FILE:{short}")
    fresh = _kinit(krb5, tmp_path / "fresh", "1h")  # a TGT only: the KDC must be asked
    conf = tmp_path / "krb5.conf"
    conf.write_text(
        Path(krb5["CEDAR_LIVE_KRB5_CONFIG"])
        .read_text()
        .replace(krb5["CEDAR_LIVE_KRB5_KDC"], "127.0.0.1:1")
    )
    unreachable = cedar({**krb5, "KRB5_CONFIG": str(conf)}, "ping", "--type", "schedd", "WRITE",
                        KRB5CCNAME=f"FILE:{fresh}")  # fmt: skip
    assert (
        "the KDC for realm MINICONDOR.TEST is unreachable"
        in unreachable.stdout + unreachable.stderr
    )
    other = tmp_path / "other-realm.conf"
    other.write_text(
        Path(krb5["CEDAR_LIVE_KRB5_CONFIG"])
        .read_text()
        .replace("default_realm = MINICONDOR.TEST", "default_realm = OTHER.TEST")
    )
    wrong = cedar({**krb5, "KRB5_CONFIG": str(other)}, "ping", "--type", "schedd", "WRITE",
                  KRB5CCNAME=f"FILE:{fresh}")  # fmt: skip
    assert "is in realm OTHER.TEST, the ticket cache" in wrong.stdout + wrong.stderr


def test_the_service_ticket_goes_into_the_file_cache(krb5: dict[str, str], tmp_path: Path) -> None:
    """After a TGS exchange the ticket is in the cache as MIT's own tools would find it:
    ``klist`` lists it next to the TGT, the cache keeps its mode, and a second cedar process
    authenticates without asking the KDC (its address broken in that process's krb5.conf)."""
    fresh = _kinit(krb5, tmp_path / "fresh", "1h")  # a TGT only
    fresh.chmod(0o640)
    pinged = cedar(krb5, "ping", "--type", "schedd", "WRITE", KRB5CCNAME=f"FILE:{fresh}")
    assert pinged.returncode == 0, pinged.stderr
    listed = subprocess.run(
        ["klist", "-c", f"FILE:{fresh}"], capture_output=True, text=True, timeout=60, env=krb5
    )
    assert listed.returncode == 0, listed.stderr
    assert f"krbtgt/{krb5['CEDAR_LIVE_KRB5_REALM']}@" in listed.stdout
    assert krb5["CEDAR_LIVE_KRB5_SERVICE_PRINCIPAL"] in listed.stdout
    assert fresh.stat().st_mode & 0o777 == 0o640
    conf = tmp_path / "no-kdc.conf"
    conf.write_text(
        Path(krb5["CEDAR_LIVE_KRB5_CONFIG"])
        .read_text()
        .replace(krb5["CEDAR_LIVE_KRB5_KDC"], "127.0.0.1:1")
    )
    again = cedar({**krb5, "KRB5_CONFIG": str(conf)}, "ping", "--type", "schedd", "WRITE",
                  KRB5CCNAME=f"FILE:{fresh}")  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr


def test_real_tools_authenticate_to_cedar_pool_with_kerberos(krb5: dict[str, str]) -> None:
    env = {
        **krb5,
        "_condor_KERBEROS_SERVER_KEYTAB": krb5["CEDAR_LIVE_KRB5_SERVER_KEYTAB"],
    }
    pool, host_port = _cedar_pool(env)
    try:
        tool_env = {
            **krb5,
            "CONDOR_CONFIG": "/dev/null",
            "_condor_COLLECTOR_HOST": host_port,
            "_condor_SEC_CLIENT_AUTHENTICATION_METHODS": "KERBEROS",
        }
        ping = subprocess.run(
            ["su", "testuser", "-c", "condor_ping -verbose -type schedd WRITE"],
            capture_output=True, text=True, timeout=120, env=tool_env,
        )  # fmt: skip
        assert "Authenticated using:         KERBEROS" in ping.stdout, ping.stderr
        # cedar pool reads the pool configuration: its KERBEROS_MAP_FILE maps the realm
        assert f"Remote Mapping:              {krb5['CEDAR_LIVE_KRB5_USER']}" in ping.stdout
        assert "Authorized:                  TRUE" in ping.stdout
        iwd = Path(krb5.get("CEDAR_LIVE_IWD") or "/tmp") / f"krb-tools-{os.getpid()}"
        iwd.mkdir(exist_ok=True)
        iwd.chmod(0o1777)
        (iwd / "job.sub").write_text("executable = /bin/true\nqueue\n")
        submit = subprocess.run(
            ["su", "testuser", "-c", f"cd {iwd} && condor_submit job.sub"],
            capture_output=True, text=True, timeout=120, env=tool_env,
        )  # fmt: skip
        assert "1 job(s) submitted to cluster 1." in submit.stdout, submit.stdout + submit.stderr
    finally:
        pool.terminate()
        pool.wait(30)


def _cedar_pool(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """``cedar pool --security kerberos`` on a port of its choosing, and its ``host:port``."""
    pool = subprocess.Popen(
        ["cedar", "pool", "--security", "kerberos", "--port", "0"],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert pool.stdout is not None
    first = pool.stdout.readline()
    found = re.search(r" on (\S+)", first)
    assert found, first
    return pool, found.group(1)


def test_an_aes_sha2_service_key_works_both_ways(krb5: dict[str, str], tmp_path: Path) -> None:
    """RFC 8009: a service whose only key is aes256-cts-hmac-sha384-192 (etype 20), so its
    tickets are sealed with it; cedar's client gets one, cedar's server opens it."""
    realm_dir = Path(krb5["CEDAR_LIVE_KRB5_CONFIG"]).parent
    admin = {**krb5, "KRB5_KDC_PROFILE": str(realm_dir / "kdc.conf")}
    keytab = tmp_path / "sha2.keytab"
    for query in (
        "addprinc -randkey -e aes256-cts-hmac-sha384-192:normal sha2svc/localhost",
        f"ktadd -k {keytab} -e aes256-cts-hmac-sha384-192:normal sha2svc/localhost",
    ):  # addprinc fails harmlessly when an earlier run made the principal
        subprocess.run(["kadmin.local", "-q", query], env=admin, capture_output=True, timeout=60)
    assert keytab.exists()
    pool, host_port = _cedar_pool({**krb5, "_condor_KERBEROS_SERVER_KEYTAB": str(keytab)})
    try:
        fresh = _kinit(krb5, tmp_path / "fresh", "1h")
        run = cedar(krb5, "ping", "--pool", host_port, "WRITE", KERBEROS_SERVER_SERVICE="sha2svc",
                    KRB5CCNAME=f"FILE:{fresh}")  # fmt: skip
        assert "WRITE: authorized as" in run.stdout, run.stdout + run.stderr
    finally:
        pool.terminate()
        pool.wait(30)
