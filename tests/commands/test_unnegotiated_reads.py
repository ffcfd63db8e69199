"""Anonymous reads started unnegotiated (``SecurityConfig.unnegotiated_reads``), against the
mock pool: answered raw where the daemon's READ level allows it, negotiated (anonymously) where
it refuses, and that refusal remembered per daemon and command in a small bounded memo."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from cedar.auth.client_config import (
    MAX_RAW_REFUSALS,
    ClientSecurity,
    SecurityConfig,
)
from cedar.auth.policy import Requirement
from cedar.auth.server_policy import LevelPolicy
from cedar.commands import Collector, Schedd
from cedar.daemons.pool import MockPool, pool_policy
from cedar.errors import InvalidArgument
from cedar.numbers import Command


def anonymous() -> ClientSecurity:
    return ClientSecurity(SecurityConfig(methods=[], unnegotiated_reads=True))


@pytest.fixture(scope="module")
def open_read() -> Iterator[MockPool]:
    """READ asks for nothing (a minicondor's default): raw reads are served."""
    with MockPool().run_in_thread() as pool:
        Schedd(pool.schedd_address).submit("executable = /bin/true\nqueue 3\n")
        yield pool


def read_ads(address: str, security: ClientSecurity) -> list[object]:
    """A READ of the schedd's jobs, or of the collector's schedd ads (the collector's address
    carries no ``sock=schedd``)."""
    if "sock=schedd" in address:
        return list(Schedd(address, security=security).query(projection=["ProcId"]))
    return list(Collector(address, security=security).query("schedd"))


def read_requiring(knob: str) -> MockPool:
    """The default mock pool but with one READ knob REQUIRED (the others as the default's)."""
    policy = pool_policy()
    setattr(policy.levels["READ"], knob, Requirement.REQUIRED)
    return MockPool(policy=policy)


@pytest.fixture(scope="module")
def negotiated_read() -> Iterator[MockPool]:
    """READ needs a negotiated start (no authentication): a raw read is closed unanswered."""
    read = LevelPolicy(authentication=Requirement.OPTIONAL, negotiation=Requirement.REQUIRED)
    with MockPool(policy=pool_policy(levels={"READ": read})).run_in_thread() as pool:
        Schedd(pool.schedd_address).submit("executable = /bin/true\nqueue 3\n")
        yield pool


def test_an_anonymous_read_goes_raw_without_a_session(open_read: MockPool) -> None:
    security = anonymous()
    before = open_read.schedd.stats["raw_commands"]
    ads = Schedd(open_read.schedd_address, security=security).query(projection=["ProcId"])
    assert sorted(ad["ProcId"] for ad in ads) == [0, 1, 2]
    assert open_read.schedd.stats["raw_commands"] == before + 1
    assert len(security.sessions) == 0  # no handshake, no key
    startds = Collector(open_read.address, security=security).query("startd")
    assert len(security.sessions) == 0
    assert isinstance(startds, list)


def test_the_same_ads_as_the_negotiated_anonymous_read(open_read: MockPool) -> None:
    plain = ClientSecurity(SecurityConfig(methods=[]))
    raw = Schedd(open_read.schedd_address, security=anonymous()).query()
    negotiated = Schedd(open_read.schedd_address, security=plain).query()
    assert len(plain.sessions) == 1
    assert [dict(ad.items()) for ad in raw] == [dict(ad.items()) for ad in negotiated]


def test_a_refused_raw_read_falls_back_and_is_remembered(negotiated_read: MockPool) -> None:
    security = anonymous()
    schedd = Schedd(negotiated_read.schedd_address, security=security)
    stats = negotiated_read.schedd.stats
    denied = stats["denied"]
    assert len(schedd.query(projection=["ProcId"])) == 3  # refused raw, then negotiated
    assert stats["denied"] == denied + 1
    assert not security.raw_allowed(str(schedd.address), Command.QUERY_JOB_ADS)
    assert len(security.sessions) == 1  # the fallback's anonymous session
    assert len(schedd.query(projection=["ProcId"])) == 3  # remembered: no second refusal
    assert stats["denied"] == denied + 1
    # only that daemon and command: the collector is still tried raw
    assert security.raw_allowed(negotiated_read.address, Command.QUERY_STARTD_ADS)


def test_the_memo_is_bounded_and_forgets(monkeypatch: pytest.MonkeyPatch) -> None:
    import cedar.auth.client_config as client_config

    security = anonymous()
    for port in range(MAX_RAW_REFUSALS + 10):
        security.raw_refused(f"<127.0.0.1:{port}>", 516)
    assert security.raw_allowed("<127.0.0.1:0>", 516)  # the oldest were dropped
    assert not security.raw_allowed(f"<127.0.0.1:{MAX_RAW_REFUSALS + 9}>", 516)
    monkeypatch.setattr(client_config, "RAW_REFUSAL_TTL", -1.0)
    assert security.raw_allowed(f"<127.0.0.1:{MAX_RAW_REFUSALS + 9}>", 516)  # tried again


def test_never_for_a_client_with_a_credential() -> None:
    with pytest.raises(InvalidArgument, match="anonymous"):
        SecurityConfig(methods=["TOKEN"], unnegotiated_reads=True)
    security = ClientSecurity(SecurityConfig(methods=[], unnegotiated_reads=True))
    security.config.methods = ["TOKEN"]  # changed after the fact: still never raw
    assert not security.raw_allowed("<127.0.0.1:9618>", 516)
    assert not ClientSecurity(SecurityConfig(methods=[])).raw_allowed("<127.0.0.1:9618>", 516)


def test_a_write_is_never_started_raw(open_read: MockPool) -> None:
    """Only read-only queries start unnegotiated; anything else negotiates as before (here an
    anonymous hold, which the pool refuses as it always did)."""
    from cedar.errors import CedarError

    security = anonymous()
    before = open_read.schedd.stats["raw_commands"]
    with pytest.raises(CedarError):
        Schedd(open_read.schedd_address, security=security).hold("ProcId == 0")
    assert open_read.schedd.stats["raw_commands"] == before


def test_a_client_that_never_negotiates_keeps_the_refusal(negotiated_read: MockPool) -> None:
    from cedar.errors import CedarError

    never = ClientSecurity(
        SecurityConfig(methods=[], unnegotiated_reads=True, negotiation=Requirement.NEVER)
    )
    with pytest.raises(CedarError):
        Schedd(negotiated_read.schedd_address, security=never).query()
    assert len(never.sessions) == 0


def test_the_default_pool_reads_as_a_real_pools() -> None:
    """Recommended_v9_0: READ authentication, encryption and integrity OPTIONAL, whatever the
    other levels ask (a raw read needs all four knobs short of REQUIRED); a clear pool stays
    clear."""
    read = pool_policy().resolve("READ")
    assert (read.authentication, read.encryption, read.integrity) == (Requirement.OPTIONAL,) * 3
    assert read.negotiation is Requirement.PREFERRED
    write = pool_policy().resolve("WRITE")
    assert (write.authentication, write.encryption, write.integrity) == (Requirement.REQUIRED,) * 3
    clear = pool_policy(encryption="NEVER").resolve("READ")
    assert (clear.encryption, clear.integrity) == (Requirement.NEVER,) * 2


@pytest.mark.parametrize("knob", ["negotiation", "authentication", "encryption", "integrity"])
def test_any_one_required_read_knob_refuses_a_raw_read(
    knob: str, caplog: pytest.LogCaptureFixture
) -> None:
    """As a 25.x daemon (collector and schedd alike): any one of the four REQUIRED at READ
    closes a raw read unanswered.  The client remembers and negotiates, which an anonymous
    client gets through unless authentication is the one REQUIRED (then the negotiated start
    is closed too, as the real pool closes it: checked with SEC_READ_AUTHENTICATION)."""
    from cedar.auth import CommandDenied

    caplog.set_level(logging.INFO, logger="cedar.daemons")
    with read_requiring(knob).run_in_thread() as pool:
        pool.advertise()  # the schedd's ad, for the collector's read
        if knob != "authentication":
            Schedd(pool.schedd_address).submit("executable = /bin/true\nqueue 2\n")
        for daemon, address, command in (
            (pool.schedd, pool.schedd_address, Command.QUERY_JOB_ADS),
            (pool.collector, pool.address, Command.QUERY_SCHEDD_ADS),
        ):
            security = anonymous()
            stats = daemon.stats
            denied, raw = stats["denied"], stats["raw_commands"]

            caplog.clear()
            if knob == "authentication":  # raw refused, and the negotiated start too
                with pytest.raises(CommandDenied):
                    read_ads(address, security)
                assert stats["denied"] == denied + 2
                assert len(security.sessions) == 0
            else:
                answered = read_ads(address, security)
                assert len(answered) == (2 if daemon is pool.schedd else 1)
                assert stats["denied"] == denied + 1
                assert len(security.sessions) == 1  # the fallback's anonymous session
            assert stats["raw_commands"] == raw
            assert f"requires {knob}" in caplog.text
            assert not security.raw_allowed(str(address), command)
            if knob != "authentication":  # remembered: negotiated at once, no new refusal
                assert len(read_ads(address, security)) == len(answered)
                assert stats["denied"] == denied + 1
