"""Round trips the client saves on a new session, and that the exchange stays what spec 03 says.

* A read-only command (``pipeline_resume``) sends its first method mask (A1) in the same write
  as M1; a server that then answers ``Authentication = NO`` gets :class:`MaskRefused` (the
  connection is dropped unused, the target remembered, ``run_command*`` retry once).
* A client that knows FS fails (the server's directory name names another endpoint than the one
  we reached: a proxy) answers ``-1`` and sends its next mask without waiting for the verdict.

Both were checked against a real 25.13.2 collector through ``bench/latency_proxy.py``
(``tests/live_pool/test_auth_pipelining.py``).
"""

from __future__ import annotations

import pytest

from cedar.auth import ClientSecurity, SecurityConfig, start_command
from cedar.auth.errors import MaskRefused
from cedar.auth.methods import AuthContext
from cedar.auth.methods.fs import FileSystem
from cedar.auth.permissions import DC_AUTHENTICATE
from cedar.auth.server_policy import LevelPolicy
from cedar.classad_wire import get_handshake_ad
from cedar.daemons.testing import mock_daemon
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Receive, Send
from tests.auth.test_handshake import CLIENT, SERVER, TARGET, decode, exchange

QUERY_STARTD_ADS = 5


def _security(**kwargs: object) -> ClientSecurity:
    return ClientSecurity(SecurityConfig(methods=["FS", "CLAIMTOBE"], **kwargs))  # type: ignore[arg-type]


def _first_requests(security: ClientSecurity, read_only: bool) -> list[object]:
    """What the client yields before it first waits (nothing of the server is needed yet)."""
    conn = CedarConnection()
    protocol = start_command(
        conn, QUERY_STARTD_ADS, security=security, target=TARGET, local_address=CLIENT,
        peer_address=SERVER, pipeline_resume=read_only,
    )  # fmt: skip
    requests = [next(protocol)]
    while isinstance(requests[-1], Send):
        requests.append(protocol.send(None))
    protocol.close()
    return requests


def test_a_read_only_command_sends_the_first_mask_with_m1() -> None:
    requests = _first_requests(_security(authentication="PREFERRED"), read_only=True)
    assert [type(r) for r in requests] == [Send, Send, Receive]
    m1, mask = requests[0], requests[1]
    assert isinstance(m1, Send) and isinstance(mask, Send)
    assert m1.flush is False  # both leave in one write
    reader = decode([CedarConnection().send_message(m1.message.getvalue())])[0]  # type: ignore[union-attr]
    assert reader.get_int() == DC_AUTHENTICATE
    assert get_handshake_ad(reader)["AuthMethods"] == "FS,CLAIMTOBE"
    mask_reader = decode([CedarConnection().send_message(mask.message.getvalue())])[0]  # type: ignore[union-attr]
    assert mask_reader.get_int() == 4 | 2  # FS | CLAIMTOBE: everything offered


@pytest.mark.parametrize(
    ("read_only", "authentication"),
    [(False, "PREFERRED"), (True, "OPTIONAL"), (True, "NEVER")],
)
def test_no_early_mask_unless_read_only_and_wanting_authentication(
    read_only: bool, authentication: str
) -> None:
    requests = _first_requests(_security(authentication=authentication), read_only)
    assert [type(r) for r in requests] == [Send, Receive]
    assert requests[0].flush is True  # type: ignore[union-attr]


def test_early_mask_gets_the_same_session(pump) -> None:  # type: ignore[no-untyped-def]
    daemon, _ = mock_daemon(methods=["CLAIMTOBE", "FS"])
    security = _security(authentication="PREFERRED")
    session, names, request, harness = exchange(pump, daemon, security, pipeline_resume=True)
    assert session.method == "CLAIMTOBE"  # the server's first choice, as with the exact mask
    assert names and request is not None
    masks = decode(harness.sent["c2s"][1:2])
    assert masks[0].get_int() == 4 | 2


def test_a_server_answering_no_authentication_drops_the_early_mask(pump) -> None:  # type: ignore[no-untyped-def]
    daemon, _ = mock_daemon(levels={"DEFAULT": LevelPolicy(authentication="NEVER")})
    security = _security(authentication="PREFERRED")
    with pytest.raises(MaskRefused, match="retrying with a plain handshake"):
        exchange(pump, daemon, security, pipeline_resume=True)
    assert TARGET in security.plain_handshake_targets
    # The retry (as run_command does it) sends no early mask and works.
    session, names, _request, _harness = exchange(pump, daemon, security, pipeline_resume=True)
    assert session.method is None and names


def _fs_client(name: str) -> tuple[list[object], object]:
    """Run the FS client against a server that names ``name``; (requests, returned result)."""
    ctx = AuthContext(role="client", peer_address=("127.0.0.1", 40123))
    server = CedarConnection()
    conn = CedarConnection()
    protocol = FileSystem().client(conn, ctx)
    requests = [next(protocol)]
    assert isinstance(requests[0], Receive)
    conn.receive_data(server.send_message(server.writer().put_string(name).getvalue()))
    try:
        requests.append(protocol.send(conn.next_message()))
        while not isinstance(requests[-1], Receive):
            requests.append(protocol.send(None))
    except StopIteration as stop:
        return requests, stop.value
    protocol.close()  # waits for the verdict: stop here (its finally removes the directory)
    return requests, None


def test_fs_through_a_proxy_answers_minus_one_without_waiting() -> None:
    """The server names its end 127.0.0.1:9618; we reached 127.0.0.1:40123 (a proxy)."""
    requests, result = _fs_client("/tmp/FS_127.0.0.1_9618_XXXabcdef_")
    assert [type(r) for r in requests] == [Receive, Send]  # no wait for the verdict
    answer = decode([CedarConnection().send_message(requests[1].message.getvalue())])[0]  # type: ignore[attr-defined]
    assert answer.get_int() == -1 and answer.at_end()  # no directory, no extension
    assert result.success is False and result.unread == 1  # type: ignore[attr-defined]
    assert "proxy or NAT" in (result.error or "")  # type: ignore[attr-defined]


def test_fs_with_a_matching_name_still_waits_for_the_verdict() -> None:
    """Our view of the server's endpoint is the one in its name: create, send, wait."""
    requests, _result = _fs_client("/tmp/FS_127.0.0.1_40123_XXX" + "zz" * 3 + "_")
    assert [type(r) for r in requests][:3] == [Receive, Send, Receive]


def test_failed_fs_then_claimtobe_in_fewer_round_trips(pump) -> None:  # type: ignore[no-untyped-def]
    """End to end with our server: FS refused early, the verdict read after the next mask."""
    daemon, _ = mock_daemon(methods=["FS", "CLAIMTOBE"])
    harness = pump()
    security = _security(authentication="PREFERRED")

    def client():  # type: ignore[no-untyped-def]
        return (
            yield from start_command(
                harness.client_conn, QUERY_STARTD_ADS, security=security, target=TARGET,
                local_address=CLIENT, peer_address=("127.0.0.1", 1234),
            )
        )  # fmt: skip

    server = harness.closing(
        daemon.connection_protocol(harness.server_conn, local_address=SERVER, peer_address=CLIENT)
    )
    session, _request = harness.run(client(), server)
    assert session.method == "CLAIMTOBE"
    c2s = decode(harness.sent["c2s"][1:4])
    assert c2s[0].get_int() == 4 | 2  # A1
    assert c2s[1].get_int() == -1 and c2s[1].at_end()  # F2: refused, no extension
    assert c2s[2].get_int() == 2  # A1' (CLAIMTOBE) before the server's verdict was read


def _recording(protocol, log):  # type: ignore[no-untyped-def]
    """Delegate to ``protocol``, noting each request it makes ("S" send, "R" receive)."""
    value = None
    while True:
        try:
            request = protocol.send(value)
        except StopIteration as stop:
            return stop.value
        log.append("S" if isinstance(request, Send) else "R")
        value = yield request


def _through_proxy(pump, daemon, security, tamper=None):  # type: ignore[no-untyped-def]
    """A read-only command whose client sees another server endpoint (as through a proxy)."""
    harness = pump(tamper)
    requests: list[str] = []
    client = _recording(
        start_command(
            harness.client_conn, QUERY_STARTD_ADS, security=security, target=TARGET,
            local_address=CLIENT, peer_address=("127.0.0.1", 1234), pipeline_resume=True,
        ),
        requests,
    )  # fmt: skip
    server = harness.closing(
        daemon.connection_protocol(harness.server_conn, local_address=SERVER, peer_address=CLIENT)
    )
    session, _request = harness.run(client, server)
    return session, "".join(requests), harness


def test_after_a_failure_the_next_method_starts_with_its_mask(pump) -> None:  # type: ignore[no-untyped-def]
    """M1+A1 | M2 A2 F1 | F2(-1) A1' CLAIMTOBE-name | F3 A2' reply K1 P1: three round trips."""
    daemon, _ = mock_daemon(methods=["FS", "CLAIMTOBE"])
    session, requests, harness = _through_proxy(pump, daemon, _security(authentication="PREFERRED"))
    assert session.method == "CLAIMTOBE"
    assert requests.startswith("SSRRRSSSRRRRR")
    c2s = decode(harness.sent["c2s"][2:5])
    assert c2s[0].get_int() == -1 and c2s[1].get_int() == 2  # F2, A1' (CLAIMTOBE)
    assert c2s[2].get_int() == 1 and c2s[2].get_string()  # CLAIMTOBE: int 1, the name


def test_a_server_choosing_otherwise_gets_a_plain_handshake_next(pump) -> None:  # type: ignore[no-untyped-def]
    """The server answers 0 instead of the method started ahead: dropped, retried plainly."""
    daemon, _ = mock_daemon(methods=["FS", "CLAIMTOBE"])
    security = _security(authentication="PREFERRED")
    zero = CedarConnection().send_message(CedarConnection().writer().put_int(0).getvalue())

    def refuse_claimtobe(direction: str, index: int, data: bytes) -> bytes:
        return zero if (direction, index) == ("s2c", 4) else data  # A2' (after M2 A2 F1 F3)

    with pytest.raises(MaskRefused, match="did not choose CLAIMTOBE"):
        _through_proxy(pump, daemon, security, refuse_claimtobe)
    assert TARGET in security.plain_handshake_targets
    session, requests, _harness = _through_proxy(pump, daemon, security)
    assert session.method == "CLAIMTOBE"
    # M1 | M2 | A1 | A2 F1 | F2(-1) A1' | F3 A2' | CLAIMTOBE | reply K1 P1: nothing sent ahead
    # but the FS refusal, which never depends on the server's choice.
    assert requests.startswith("SRSRRSSRRSRRR")


def test_run_command_retries_a_refused_mask_with_a_plain_handshake() -> None:
    """Over a real socket: the query works, once, and the target is remembered as plain."""
    from cedar.commands import Collector
    from cedar.numbers import AdType

    daemon, handler = mock_daemon(levels={"DEFAULT": LevelPolicy(authentication="NEVER")})
    security = _security(authentication="PREFERRED")
    with daemon.run_in_thread():
        collector = Collector(daemon.address, security=security)
        assert collector.query(AdType.SLOT)
        assert len(security.plain_handshake_targets) == 1
        assert collector.query(AdType.SLOT)  # resumed or plain: no further refusal
    assert len(security.plain_handshake_targets) == 1
    assert len(handler.seen) == 2  # the refused attempt never reached the handler
