"""Ping, FS and CLAIMTOBE against a real pool (spec 03 §3-§6.5, spec 04 §2-§3).

Expectations come from the specification's [live] observations of 25.13.2 daemons.
"""

from __future__ import annotations

import os

import pytest

from cedar.auth import CommandDenied
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands import ping, run_command
from cedar.stream.protocol import Receive, Send

QUERY_STARTD_ADS = 5


def startd_query(session):
    """A projected collector query; returns (session, number of ads)."""
    ad = ClassAd()
    ad["MyType"] = "Query"
    ad["TargetType"] = "Machine"
    ad["Requirements"] = True
    ad["Projection"] = "Name"
    writer = session.payload_writer()
    put_classad(writer, ad)
    yield Send(writer)
    reply = yield Receive()
    count = 0
    while reply.get_int() == 1:
        get_classad(reply)
        count += 1
        if reply.at_end():
            reply = yield Receive()
    return session, count


def test_ping_read_with_fs(live_collector, live_security, live_timeout):
    result = ping(live_collector, "READ", security=live_security(["FS"]), timeout=live_timeout)
    assert result.authorized, result.error
    assert result.method == "FS"
    assert result.crypto == "AES" and result.encrypted  # FS + AES forces encryption (§3.3.1)
    assert result.user and "@" in result.user and not result.user.endswith("@unmapped")
    assert result.remote_version and result.remote_version.startswith("$CondorVersion: ")
    domain = os.environ.get("CEDAR_LIVE_UID_DOMAIN")
    if domain:
        assert result.user.endswith("@" + domain)


def test_ping_read_with_claimtobe(live_collector, live_security, live_timeout):
    user = os.environ.get("CEDAR_LIVE_CLAIM_USER", "cedar-live-test")
    security = live_security(["CLAIMTOBE"], options={"SEC_CLAIMTOBE_USER": user})
    result = ping(live_collector, "READ", security=security, timeout=live_timeout)
    assert result.authorized, result.error
    assert result.method == "CLAIMTOBE"
    assert result.user == f"{user}@{security.config.uid_domain.lower()}"


def test_claimtobe_denied_level(live_collector, live_security, live_timeout):
    level = os.environ.get("CEDAR_LIVE_DENIED_LEVEL", "ADMINISTRATOR")
    if not level:
        pytest.skip("CEDAR_LIVE_DENIED_LEVEL is empty")
    user = os.environ.get("CEDAR_LIVE_CLAIM_USER", "cedar-live-test")
    security = live_security(["CLAIMTOBE"], options={"SEC_CLAIMTOBE_USER": user})
    result = ping(live_collector, level, security=security, timeout=live_timeout)
    assert not result.authorized
    assert result.error and 'Received "DENIED"' in result.error  # P1 DENIED, then close (§6.5)


def test_fs_query_then_resumption(live_collector, live_security, live_timeout):
    security = live_security(["FS"])
    first, _ = run_command(
        live_collector, QUERY_STARTD_ADS, startd_query, security=security, timeout=live_timeout
    )
    second, _ = run_command(
        live_collector, QUERY_STARTD_ADS, startd_query, security=security, timeout=live_timeout
    )
    assert first.method == "FS" and first.encrypted and not first.resumed
    assert second.resumed and second.encrypted  # R1/R2, then AES with the cached key (§6.3)


def test_unknown_command_is_closed(live_collector, live_security, live_timeout):
    with pytest.raises(CommandDenied, match="Connection closed during command authorization"):
        run_command(
            live_collector,
            12345,
            startd_query,
            security=live_security(["FS"]),
            timeout=live_timeout,
        )


def test_raw_query(live_collector, live_security, live_timeout):
    security = live_security(["FS"], negotiation="NEVER")
    session, _count = run_command(
        live_collector, QUERY_STARTD_ADS, startd_query, security=security, timeout=live_timeout
    )
    assert session.raw and not session.encrypted


def test_ping_through_the_shared_port(live_schedd, live_security, live_timeout):
    assert "sock=" in live_schedd
    result = ping(live_schedd, "READ", security=live_security(["FS"]), timeout=live_timeout)
    assert result.authorized and result.method == "FS" and result.encrypted, result.error
