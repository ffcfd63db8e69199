"""The reference client (htcondor2) against our server: the interoperability matrix.

Each test runs the real client library in a subprocess against a :class:`cedar.daemons.Daemon`
and checks both what the client reports and what our server saw.
"""

from __future__ import annotations

import getpass
import json

import pytest

from cedar.daemons import SharedPortRouter
from cedar.daemons.testing import mock_daemon, wait_for

pytestmark = pytest.mark.reference

QUERY_TWICE = """
    import htcondor2, json
    c = htcondor2.Collector({address!r})
    first = c.query(htcondor2.AdTypes.Startd, projection=["Name"])
    second = c.query(htcondor2.AdTypes.Startd)
    print(json.dumps([[ad.get("Name") for ad in first], [ad.get("Name") for ad in second]]))
"""

PING = """
    import htcondor2, json
    try:
        ad = htcondor2.ping({address!r}, {level!r})
        print(json.dumps({{k: ad.eval(k) for k in ad.keys()
                          if isinstance(ad.eval(k), (str, int, bool))}}))
    except Exception as exc:
        print(json.dumps({{"error": str(exc)}}))
"""


def test_fs_with_aes_gcm(reference, served):
    daemon, handler = served
    names = reference.run(QUERY_TWICE.format(address=daemon.address))
    assert names == [["slot1@mock"], ["slot1@mock"]], reference.log()
    first = handler.seen[0]
    assert first.method == "FS"
    assert first.user == f"{getpass.getuser()}@{daemon.policy.uid_domain}"
    assert first.encrypted and not first.resumed and not first.raw
    assert first.query["Projection"] == "Name"


def test_second_command_resumes_the_session(reference, served):
    daemon, handler = served
    reference.run(QUERY_TWICE.format(address=daemon.address))
    assert [seen.resumed for seen in handler.seen] == [False, True]
    assert handler.seen[1].encrypted and handler.seen[1].method == "FS"
    assert daemon.stats["new_sessions"] == 1 and daemon.stats["resumed_sessions"] == 1


def test_forgotten_session_makes_the_client_reauthenticate(reference, served):
    daemon, handler = served
    process = reference.start(
        f"""
        import htcondor2, json, sys
        c = htcondor2.Collector({daemon.address!r})
        def attempt():
            try:
                return [ad.get("Name") for ad in c.query(htcondor2.AdTypes.Startd)]
            except Exception as exc:
                return "error: " + str(exc)
        print(json.dumps(attempt()), flush=True)
        sys.stdin.readline()
        print(json.dumps([attempt(), attempt()]), flush=True)
        """
    )
    try:
        assert json.loads(process.stdout.readline()) == ["slot1@mock"]
        daemon.sessions.clear()
        process.stdin.write("go\n")
        process.stdin.flush()
        second, third = json.loads(process.stdout.readline())
        process.wait(timeout=60)
    finally:
        process.kill()
    # The reference library fails the command whose session was forgotten, then negotiates anew.
    assert isinstance(second, str) and second.startswith("error"), reference.log()
    assert third == ["slot1@mock"]
    assert daemon.stats["new_sessions"] == 2
    assert [seen.resumed for seen in handler.seen] == [False, False]


def test_claimtobe_without_encryption(reference, served):
    daemon, handler = served
    result = reference.run(
        PING.format(address=daemon.address, level="READ"),
        SEC_CLIENT_AUTHENTICATION_METHODS="CLAIMTOBE",
        SEC_CLIENT_ENCRYPTION="NEVER",
        SEC_CLIENT_INTEGRITY="NEVER",
        SEC_CLIENT_CRYPTO_METHODS="BLOWFISH",
    )
    assert result.get("AuthorizationSucceeded") is True, result
    assert result["AuthMethods"] == "CLAIMTOBE"
    assert result["Encryption"] == "NO" and result["Integrity"] == "NO"
    # Our server offers only AES, so no crypto method is shared and no key exists.
    assert result["CryptoMethodsList"] == ""


def test_denied_level_is_an_error_for_the_client(reference, served):
    daemon, _handler = served
    result = reference.run(PING.format(address=daemon.address, level="WRITE"))
    assert "error" in result, result
    assert wait_for(lambda: daemon.stats["denied"] == 1)


def test_ping(reference, served):
    daemon, _handler = served
    result = reference.run(PING.format(address=daemon.address, level="READ"))
    assert result["AuthorizationSucceeded"] is True
    assert result["AuthMethods"] == "FS"
    assert result["CryptoMethods"] == "AES" and result["Encryption"] == "YES"
    assert result["Command"] == 60040 and result["AuthCommand"] == 60020
    assert result["MyRemoteUserName"].endswith("@" + daemon.policy.uid_domain)
    assert result["RemoteVersion"] == daemon.policy.version


def test_through_the_shared_port_preamble(reference):
    daemon, handler = mock_daemon(name="schedd_1_ab")
    router = SharedPortRouter()
    router.attach(daemon, "schedd_1_ab")
    with router.run_in_thread():
        assert "sock=schedd_1_ab" in daemon.address
        names = reference.run(QUERY_TWICE.format(address=daemon.address))
    assert names == [["slot1@mock"], ["slot1@mock"]], reference.log()
    assert router.stats["routed"] == 2
    assert handler.seen[0].method == "FS" and handler.seen[0].encrypted
    assert handler.seen[1].resumed
