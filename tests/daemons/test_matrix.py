"""Our client against our daemon over TCP, through the sync driver and the Trio driver.

The same matrix the reference client passes (tests/auth/test_reference_client.py): FS + AES-GCM,
resumption, a forgotten session, CLAIMTOBE without encryption, a denied level, ping, and the
shared-port preamble.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import Any

import pytest
import trio

from cedar.auth import ClientSecurity, CommandDenied, SecurityConfig
from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd
from cedar.commands import (
    iterate_command,
    iterate_command_async,
    ping,
    ping_async,
    run_command,
    run_command_async,
)
from cedar.commands.ping import PingResult
from cedar.daemons import SharedPortRouter
from cedar.daemons.testing import mock_daemon, wait_for
from cedar.stream.protocol import Emit
from tests.support import query_names


def query(session: CommandSession):
    ad = ClassAd()
    ad["MyType"] = "Query"
    names = yield from query_names(session, ad)
    return session, names


def streamed_query(session: CommandSession):
    _session, names = yield from query(session)
    for name in names:
        yield Emit(name)


class SyncDriver:
    def run(self, address: str, body: Callable[..., Any], **kw: Any) -> Any:
        return run_command(address, 5, body, **kw)

    def iterate(self, address: str, body: Callable[..., Any], **kw: Any) -> list[Any]:
        return list(iterate_command(address, 5, body, **kw))

    def ping(self, address: str, level: str, **kw: Any) -> PingResult:
        return ping(address, level, **kw)


class TrioDriver:
    def run(self, address: str, body: Callable[..., Any], **kw: Any) -> Any:
        return trio.run(lambda: run_command_async(address, 5, body, **kw))

    def iterate(self, address: str, body: Callable[..., Any], **kw: Any) -> list[Any]:
        async def collect() -> list[Any]:
            return [v async for v in iterate_command_async(address, 5, body, **kw)]

        return trio.run(collect)

    def ping(self, address: str, level: str, **kw: Any) -> PingResult:
        return trio.run(lambda: ping_async(address, level, **kw))


@pytest.fixture(params=["sync", "trio"])
def driver(request):
    return SyncDriver() if request.param == "sync" else TrioDriver()


@pytest.fixture
def served():
    daemon, handler = mock_daemon(allow={"READ": ["*"]})
    with daemon.run_in_thread():
        yield daemon, handler


def fs_client(**kwargs: Any) -> ClientSecurity:
    kwargs.setdefault("authentication", "PREFERRED")
    return ClientSecurity(SecurityConfig(methods=["FS"], **kwargs))


def me(daemon) -> str:
    return f"{getpass.getuser()}@{daemon.policy.uid_domain}"


def test_fs_with_aes_gcm(driver, served):
    daemon, handler = served
    session, names = driver.run(daemon.address, query, security=fs_client())
    assert names == ["slot1@mock"]
    assert session.method == "FS" and session.encrypted and session.authenticated_user == me(daemon)
    assert handler.seen[0].user == me(daemon) and handler.seen[0].encrypted


def test_second_command_resumes(driver, served):
    daemon, handler = served
    security = fs_client()
    driver.run(daemon.address, query, security=security)
    session, _ = driver.run(daemon.address, query, security=security)
    assert session.resumed and [s.resumed for s in handler.seen] == [False, True]
    assert handler.seen[1].encrypted and handler.seen[1].user == me(daemon)


def test_forgotten_session_falls_back_to_a_new_handshake(driver, served):
    daemon, handler = served
    security = fs_client()
    driver.run(daemon.address, query, security=security)
    daemon.sessions.clear()
    session, names = driver.run(daemon.address, query, security=security)
    assert names == ["slot1@mock"] and not session.resumed
    assert daemon.stats["new_sessions"] == 2 and wait_for(lambda: daemon.stats["denied"] == 1)


def test_pipelined_resumption_of_a_query(driver, served):
    daemon, handler = served
    security = fs_client()
    driver.run(daemon.address, query, security=security, pipeline_resume=True)
    session, names = driver.run(daemon.address, query, security=security, pipeline_resume=True)
    assert names == ["slot1@mock"] and session.resumed and session.pipelined
    assert [s.resumed for s in handler.seen] == [False, True] and handler.seen[1].encrypted


def test_pipelined_forgotten_session_falls_back_to_a_new_handshake(driver, served):
    # Without a resume response the server just closes; the client drops the session and
    # retries once with a full handshake, within the same call.
    daemon, handler = served
    security = fs_client()
    driver.run(daemon.address, query, security=security, pipeline_resume=True)
    daemon.sessions.clear()
    session, names = driver.run(daemon.address, query, security=security, pipeline_resume=True)
    assert names == ["slot1@mock"] and not session.resumed
    assert daemon.stats["new_sessions"] == 2 and len(security.sessions) == 1


def test_pipelined_resumption_of_a_denied_command_is_a_clear_error(driver):
    daemon, handler = mock_daemon()
    security = fs_client()
    with daemon.run_in_thread():
        driver.run(daemon.address, query, security=security, pipeline_resume=True)
        daemon.policy.allow = {"READ": ["nobody@nowhere"]}
        with pytest.raises(CommandDenied) as denied:
            driver.run(daemon.address, query, security=security, pipeline_resume=True)
    # The retry's full handshake says why: the server's verdict for our user.
    assert "DENIED" in str(denied.value) and "command 5" in str(denied.value)
    assert len(handler.seen) == 1 and len(security.sessions) == 0


def test_claimtobe_without_encryption(driver, served):
    daemon, handler = served
    security = ClientSecurity(
        SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[], authentication="REQUIRED")
    )
    session, _ = driver.run(daemon.address, query, security=security)
    assert session.method == "CLAIMTOBE" and not session.encrypted
    assert handler.seen[0].user == me(daemon) and not handler.seen[0].encrypted


def test_denied_level(driver, served):
    daemon, _ = served
    result = driver.ping(daemon.address, "WRITE", security=fs_client())
    assert not result.authorized and result.method == "FS" and result.user == me(daemon)
    assert 'Received "DENIED"' in (result.error or "")


def test_denied_command_raises(driver):
    daemon, handler = mock_daemon(allow={"READ": ["nobody@nowhere"]})
    with daemon.run_in_thread(), pytest.raises(CommandDenied, match="DENIED"):
        driver.run(daemon.address, query, security=fs_client())
    assert handler.seen == []


def test_ping(driver, served):
    daemon, _ = served
    result = driver.ping(daemon.address, "READ", security=fs_client())
    assert result.authorized and result.method == "FS" and result.crypto == "AES"
    assert result.user == me(daemon) and result.remote_version == daemon.policy.version


def test_shared_port(driver):
    collector, collector_handler = mock_daemon(name="collector")
    schedd, schedd_handler = mock_daemon(name="schedd_7_ab")
    router = SharedPortRouter()
    router.attach(collector, default=True)
    router.attach(schedd)
    with router.run_in_thread():
        security = fs_client()
        session, _ = driver.run(schedd.address, query, security=security)
        again, _ = driver.run(schedd.address, query, security=security)
        plain = f"127.0.0.1:{router.port}"  # no preamble: the default daemon answers
        driver.run(plain, query, security=security)
        assert driver.ping(schedd.address, "READ", security=security).authorized
    assert session.method == "FS" and session.encrypted and again.resumed
    assert len(schedd_handler.seen) == 2 and len(collector_handler.seen) == 1
    assert router.stats == {"routed": 3, "unknown_id": 0, "default": 1}


def test_unknown_shared_port_id(driver):
    daemon, _ = mock_daemon(name="known")
    router = SharedPortRouter()
    router.attach(daemon)
    with router.run_in_thread(), pytest.raises(CommandDenied, match="id 'unknown' is unknown"):
        driver.run(f"<127.0.0.1:{router.port}?sock=unknown>", query, security=fs_client())
    assert router.stats["unknown_id"] == 1


def test_streamed_results(driver, served):
    daemon, _ = served
    assert driver.iterate(daemon.address, streamed_query, security=fs_client()) == ["slot1@mock"]


def test_raw_command(driver, served):
    daemon, handler = served
    security = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    session, names = driver.run(daemon.address, query, security=security)
    assert session.raw and names == ["slot1@mock"] and handler.seen[0].raw


def test_daemon_and_client_in_one_trio_loop():
    daemon, handler = mock_daemon()

    async def main() -> Any:
        async with trio.open_nursery() as nursery:
            await nursery.start(daemon.serve)
            result = await run_command_async(daemon.address, 5, query, security=fs_client())
            nursery.cancel_scope.cancel()
        return result

    session, names = trio.run(main)
    assert names == ["slot1@mock"] and session.encrypted and handler.seen[0].method == "FS"


def _ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this host")
def test_ipv6(driver):
    daemon, handler = mock_daemon()
    daemon.host = "::1"
    with daemon.run_in_thread():
        assert daemon.address.startswith("<[::1]:") and "addrs=[--1]-" in daemon.address
        session, names = driver.run(daemon.address, query, security=fs_client())
    assert names == ["slot1@mock"] and session.method == "FS"  # FS binds to [::1]:port
    assert handler.seen[0].user == me(daemon)


def test_dc_nop_raw_and_negotiated(driver, served):
    daemon, _ = served

    def nop(session):
        yield from session.send_empty_payload()
        return session

    raw = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    assert driver_run(driver, daemon.address, 60020, nop, security=raw).raw
    session = driver_run(driver, daemon.address, 60020, nop, security=fs_client())
    assert not session.raw and session.method == "FS"
    assert wait_for(lambda: daemon.stats["raw_commands"] == 1 and daemon.stats["new_sessions"] == 1)


def test_resumed_but_denied_command_is_a_clear_error(driver):
    daemon, handler = mock_daemon()
    security = fs_client()
    with daemon.run_in_thread():
        driver.run(daemon.address, query, security=security)
        daemon.policy.allow = {"READ": ["nobody@nowhere"]}  # authorization changes meanwhile
        with pytest.raises(CommandDenied, match="after resuming"):
            driver.run(daemon.address, query, security=security)
    assert len(handler.seen) == 1


def driver_run(driver, address, command, body, **kw):
    if isinstance(driver, SyncDriver):
        return run_command(address, command, body, **kw)
    return trio.run(lambda: run_command_async(address, command, body, **kw))


def test_raw_command_refused(driver):
    from cedar.auth.server_policy import LevelPolicy

    daemon, handler = mock_daemon(levels={"DEFAULT": LevelPolicy(authentication="REQUIRED")})
    raw = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    with daemon.run_in_thread(), pytest.raises(CommandDenied, match="raw .* unauthenticated"):
        driver.run(daemon.address, query, security=raw)
    assert handler.seen == [] and wait_for(lambda: daemon.stats["denied"] == 1)
