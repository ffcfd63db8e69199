"""`cedar conformance` against the mock pool (must pass) and against deliberately broken test
doubles of it (the matching check must fail and say what broke)."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from cedar.classad_wire import ClassAd
from cedar.cli.main import main
from cedar.conformance import CHECKS, Target, run_checks
from cedar.daemons import collector as collector_module
from cedar.daemons.pool import SECURITY_SETUPS, MockPool
from cedar.stream.connection import CedarConnection
from tests.auth.test_kerberos import Realm


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool(simulate=True, run_time=0.2).run_in_thread() as running:
        yield running


def _target(pool: MockPool) -> Target:
    return Target(pool.host_port, write_method="FS", timeout=10)


def _kerberos_realm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A keytab for the pool and testuser's ticket for it (issued now: the daemon serves on the
    real clock); the client finds the cache through ``KRB5CCNAME``."""
    host = socket.getnameinfo(("127.0.0.1", 0), socket.NI_NAMEREQD)[0].lower()
    realm = Realm(tmp_path, now=time.time(), host=host)
    (tmp_path / "krb5.conf").write_text("")
    monkeypatch.setenv("KRB5_CONFIG", str(tmp_path / "krb5.conf"))
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{realm.ccache}")
    return {"KERBEROS_SERVER_KEYTAB": realm.keytab, "KERBEROS_MAP_FILE": realm.map_file}


@pytest.mark.parametrize("setup", sorted(SECURITY_SETUPS))
def test_every_check_passes_or_skips_against_the_mock_pool(
    setup: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each `cedar pool --security` setup passes; the checks use what the pool offers."""
    knobs = _kerberos_realm(tmp_path, monkeypatch) if setup == "kerberos" else {}
    mock = MockPool.for_setup(setup, simulate=True, run_time=0.2, method_options=knobs)
    with mock.run_in_thread() as pool:
        write = {"fs": "FS", "claimtobe-clear": "CLAIMTOBE", "tokens": "TOKEN"}.get(
            setup, "KERBEROS"
        )
        target = Target(pool.host_port, token_dir=pool.token_dir, write_method=write, timeout=10)
        outcomes = run_checks(target)
    assert [o.name for o in outcomes] == [c.name for c in CHECKS]
    failed = [(o.name, o.detail) for o in outcomes if o.status == "fail"]
    assert not failed
    passed = {o.name for o in outcomes if o.status == "pass"}
    assert {"jobs.lifecycle", "query.schedd", "query.master"} <= passed
    assert "auth.kerberos" in passed or setup != "kerberos"
    # cedar's server keeps a replay cache: our own AP-REQ sent again is denied (DENY = 0)
    replay = [o.detail for o in outcomes if o.name == "auth.kerberos_replay_refused"]
    assert replay == (["refused (answered 0)"] if setup == "kerberos" else replay)
    # cedar's client never resumes a keyless session (issue 13): nothing to resume in clear.
    assert ("crypto.aes_gcm" in passed) == (setup != "claimtobe-clear")
    assert ("session.resumption" in passed) == (setup != "claimtobe-clear")


def test_cli_table_json_and_exit_code(pool: MockPool) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["conformance", "--pool", pool.host_port, "--write-method", "FS", "--json",
                     "--check", "query", "--check", "jobs"])  # fmt: skip
    rows = json.loads(out.getvalue())
    assert code == 0 and rows and {r["status"] for r in rows} <= {"pass", "skip"}
    assert all(r["check"].startswith(("query.", "jobs.")) for r in rows)


def test_wrong_gcm_tag_fails_the_crypto_check(pool: MockPool, monkeypatch) -> None:
    """The double: the server side (the pool's thread) corrupts the last tag byte it sends."""
    original = CedarConnection.send_message
    client_thread = threading.current_thread()

    def corrupt(self: CedarConnection, message):  # type: ignore[no-untyped-def]
        data = original(self, message)
        if self.encrypted and threading.current_thread() is not client_thread:
            data = data[:-1] + bytes([data[-1] ^ 0x01])
        return data

    monkeypatch.setattr(CedarConnection, "send_message", corrupt)
    (outcome,) = run_checks(_target(pool), ["crypto.aes_gcm"])
    assert outcome.status == "fail"
    assert "IntegrityError" in outcome.detail and "GCM" in outcome.detail
    assert outcome.observed  # the bytes that failed to verify are in the report
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["conformance", "--pool", pool.host_port, "--check", "crypto"]) == 1
    assert "crypto.aes_gcm" in out.getvalue() and "FAIL" in out.getvalue()


def test_ignored_projection_fails_the_query_check(pool: MockPool, monkeypatch) -> None:
    """The double: the collector answers every query with whole ads."""
    monkeypatch.setattr(
        collector_module.AdStore, "_projection", staticmethod(lambda *args, **kwargs: None)
    )
    (outcome,) = run_checks(_target(pool), ["query.schedd"])
    assert outcome.status == "fail"
    assert "projection [Name, MyType] ignored" in outcome.detail


def test_the_ccb_checks_skip_without_a_brokered_daemon_and_fail_on_a_direct_route(
    pool: MockPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mock pool has no daemon behind a broker: both checks skip.  The double: the
    collector names a daemon that is reached directly (as if its CCBID had been ignored), which
    ``ccb.direct_ad`` must catch by the route (the live pass is in
    tests/live_pool/test_ccb_live.py)."""
    from cedar.conformance import checks
    from cedar.numbers import AdType

    outcomes = run_checks(_target(pool), ["ccb.direct_ad", "ccb.relay"])
    assert [(o.name, o.status) for o in outcomes] == [
        ("ccb.direct_ad", "skip"),
        ("ccb.relay", "skip"),
    ]
    assert "no daemon of the pool is behind a broker" in outcomes[0].detail
    schedd = pool.schedd.address
    known = {pool.schedd.name: ClassAd({"MyType": "Scheduler", "MyAddress": schedd})}
    monkeypatch.setattr(checks, "_behind_a_broker", lambda t: (AdType.SCHEDD, schedd, known))
    (direct,) = run_checks(_target(pool), ["ccb.direct_ad"])
    assert direct.status == "fail" and "route 'direct', not CCB reversed" in direct.detail
