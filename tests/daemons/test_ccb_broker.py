"""cedar's broker (the mock collector, spec 09 §6-§7) between cedar's target and requester.

One process: a :class:`MockCollector` brokers, a cedar daemon registered through
:class:`CcbTarget` is reachable only through it, and the ordinary clients reach it: a ping and
a startd query over a reversed connection, the same through the relay (streaming mode), an
unknown id refused with the reference's words, a re-registration that keeps its id and cookie.
"""

from __future__ import annotations

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.sinful import Sinful
from cedar.commands import Collector, ping
from cedar.commands.ccb import broker_contacts
from cedar.daemons.ccb_model import ReconnectTable, Registration
from cedar.daemons.collector import MockCollector
from cedar.errors import CedarConnectionError
from cedar.numbers import AdType
from tests.daemons.ccb_setup import SECURITY, ccb_setup
from tests.robustness.helpers import plain_policy


def test_a_tool_reaches_the_target_through_our_broker() -> None:
    with ccb_setup() as setup:
        address = setup.address
        result = ping(address, "READ", security=SECURITY, timeout=20)
        slots = Collector(address, security=SECURITY, timeout=20).query(AdType.SLOT)
        own = Collector(setup.broker.address, security=SECURITY, timeout=20).query(AdType.COLLECTOR)
    (contact,) = broker_contacts(Sinful.parse(address))
    assert contact.ccbid == "1"
    assert contact.broker.endpoint == Sinful.parse(setup.broker.address).endpoint
    assert result.authorized
    assert result.route is not None and result.route.startswith("CCB reversed connection via")
    assert [str(ad["Name"]) for ad in slots] == ["slot1@mock"]
    (collector_ad,) = own
    assert collector_ad["CCBEndpointsConnected"] == 1
    assert collector_ad["CCBRequests"] == 2


def test_the_relay_carries_a_client_that_cannot_listen() -> None:
    """Streaming mode (spec 09 §7): the target connects back to the broker, which relays."""
    from cedar.commands._sync.ccb import open_channel
    from cedar.stream.drivers import Deadline

    with ccb_setup() as setup:
        target = Sinful.parse(setup.address)
        routes: list[str] = []
        channel = open_channel(target, timeout=20, deadline=Deadline(20), security=SECURITY,
                               streaming=True, route_taken=routes.append)  # fmt: skip
        channel.close()
        broker = setup.broker
        assert isinstance(broker, MockCollector) and broker.ccb is not None
        stats = broker.ccb.ad_attributes()
    assert routes and routes[0].startswith("CCB relayed via")
    assert stats["CCBStreamingSessions"] == 1


def test_an_unknown_id_is_refused_with_the_references_words() -> None:
    with ccb_setup() as setup:
        sinful = Sinful.parse(setup.address)
        contact = sinful.params["CCBID"].replace("#1", "#999")
        wrong = str(Sinful(sinful.host, sinful.port, {"CCBID": contact}))
        with pytest.raises(CedarConnectionError) as caught:
            ping(wrong, "READ", security=SECURITY, timeout=20)
    assert str(caught.value).endswith(
        "CCB server rejecting request for ccbid 999 because no daemon is currently registered "
        "with that id (perhaps it recently disconnected)."
    )


def test_a_restarted_broker_gives_the_target_its_id_back(tmp_path: object) -> None:
    """The reconnect file (spec 09 §6.2): a new broker reading it accepts the target's old
    id and cookie; a wrong cookie or another address gets a new id (§6.3)."""
    path = str(tmp_path) + "/broker.ccb_reconnect"
    first = ReconnectTable(path)
    ccbid, cookie = first.allocate("127.0.0.5", set())
    again = ReconnectTable(path)
    assert again.reclaim(Registration("STARTD", ccbid, cookie), "127.0.0.5")
    assert not again.reclaim(Registration("STARTD", ccbid, cookie + "0"), "127.0.0.5")
    assert not again.reclaim(Registration("STARTD", ccbid, cookie), "127.0.0.6")
    assert again.reclaim(Registration("STARTD", ccbid, cookie), "127.0.0.6", any_ip=True)
    assert again.allocate("127.0.0.5", set())[0] == ccbid + 1 + 100
    with open(path) as saved:
        assert saved.read().splitlines()[0] == f"127.0.0.5 {ccbid} {cookie}"


def test_a_target_registers_again_with_its_id_and_cookie() -> None:
    """The held connection breaks (the broker drops it): the target comes back as the same
    contact, and is reachable again."""
    broker = MockCollector(policy=plain_policy())
    with ccb_setup(broker) as setup:
        (target,) = setup.targets
        contact = target.contact
        assert broker.ccb is not None
        import trio

        trio.from_thread.run_sync(broker.ccb.targets[1].scope.cancel, trio_token=_token(broker))
        for _ in range(200):
            if target.registrations >= 2 and 1 in broker.ccb.targets:
                break
            import time

            time.sleep(0.05)
        assert target.registrations == 2
        assert target.contact == contact
        assert ping(setup.address, "READ", security=SECURITY, timeout=20).authorized
        assert broker.ccb.stats["Reconnects"] == 1


def _token(daemon: object) -> object:
    return daemon._token  # type: ignore[attr-defined]


@pytest.mark.parametrize("daemon", ["startd", "schedd"])
def test_cedar_pool_puts_a_daemon_behind_its_broker(daemon: str) -> None:
    """``cedar pool --ccb``: the daemon listens nowhere (a direct connection is refused), is
    advertised with its ``CCBID`` address, and the clients reach it through the broker."""
    from cedar.commands import Schedd
    from cedar.daemons.pool import MockPool
    from cedar.errors import CedarError

    pool = MockPool.for_setup("claimtobe-clear", ccb=daemon, schedd_name="ccb-schedd")
    security = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[]))
    with pool.run_in_thread():
        assert pool.behind_broker is not None
        address = pool.behind_broker.address
        host, port = Sinful.parse(address).endpoint
        with pytest.raises(CedarError):
            ping(f"<{host}:{port}>", "READ", security=security, timeout=5)
        result = ping(address, "READ", security=security, timeout=20)
        if daemon == "startd":
            slots = Collector(pool.address, security=security, timeout=20).query(AdType.SLOT)
            assert [str(ad["MyAddress"]) for ad in slots] == [address]
            direct = Collector(address, security=security, timeout=20).query(AdType.SLOT)
            assert [str(ad["State"]) for ad in direct] == ["Unclaimed"]
        else:
            schedd = Schedd(name="ccb-schedd", pool=pool.host_port, security=security, timeout=20)
            assert schedd.locate() == address
            assert schedd.query() == []
    assert "CCBID=" in address
    assert result.route is not None and result.route.startswith("CCB reversed connection")
