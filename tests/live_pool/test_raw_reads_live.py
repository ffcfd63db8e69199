"""The real pool at its defaults (``SECURITY : Recommended_v9_0``: READ authentication,
encryption and integrity OPTIONAL) answers an unnegotiated read at the collector and at the
schedd, as the mock pool does by default; a negotiated anonymous read still gets AES-GCM.

The refusal matrix (any one READ knob REQUIRED closes a raw read) is checked against the mock
in ``tests/commands/test_unnegotiated_reads.py``: the suite's shared pool is never reconfigured.
"""

from __future__ import annotations

from typing import Any

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.policy import Requirement
from cedar.classad_wire import ClassAd
from cedar.commands import Collector, Schedd, run_command
from cedar.daemons.pool import pool_policy
from cedar.numbers import Command
from tests.support import query_names


def anonymous() -> ClientSecurity:
    return ClientSecurity(SecurityConfig(methods=[], unnegotiated_reads=True))


def test_raw_reads_are_answered_at_the_defaults(live_collector: str) -> None:
    security = anonymous()
    collector = Collector(live_collector, security=security)
    startds = collector.query("startd", projection=["Name"])
    assert startds and all("Name" in ad for ad in startds)
    schedd_ad = collector.locate("schedd")
    schedd = Schedd(schedd_ad, security=security)
    jobs = schedd.query(projection=["ProcId"])
    assert isinstance(jobs, list)
    # answered raw (a refusal would have left the fallback's session): no handshake, no key
    assert len(security.sessions) == 0
    # the mock's default READ level asks for what this pool asks for: nothing REQUIRED
    read = pool_policy().resolve("READ")
    assert Requirement.REQUIRED not in (
        read.authentication,
        read.encryption,
        read.integrity,
        read.negotiation,
    )


def query(session: Any) -> Any:
    ad = ClassAd()
    ad["MyType"] = "Query"
    names = yield from query_names(session, ad)
    return session, names


def test_a_negotiated_anonymous_read_is_encrypted(live_collector: str) -> None:
    security = ClientSecurity(SecurityConfig(methods=[]))
    session, names = run_command(live_collector, Command.QUERY_STARTD_ADS, query, security=security)
    assert names
    assert session.crypto_method == "AES" and session.encrypted
