"""Our client against our server in memory, message by message (spec 03 §2-§6, spec 04 §1-§4)."""

from __future__ import annotations

import base64
import getpass

import pytest

from cedar.auth import ClientSecurity, CommandDenied, SecurityConfig, SessionRejected, start_command
from cedar.auth.client import CommandSession
from cedar.auth.permissions import DC_AUTHENTICATE, DC_SEC_QUERY
from cedar.auth.server_policy import LevelPolicy
from cedar.auth.version import parse_version
from cedar.classad_wire import ClassAd, get_classad, get_handshake_ad, put_classad
from cedar.commands.ping import sec_query_body
from cedar.daemons.testing import mock_daemon
from cedar.errors import AuthenticationError, ConnectionClosed, SecurityError
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Receive, Send
from tests.support import query_names

SERVER = ("127.0.0.1", 9618)
CLIENT = ("127.0.0.1", 40000)
TARGET = "<127.0.0.1:9618>"


def query(session: CommandSession):
    """Minimal QUERY_STARTD_ADS body: returns the names the daemon sent."""
    ad = ClassAd()
    ad["MyType"] = "Query"
    ad["Requirements"] = True
    return (yield from query_names(session, ad))


def exchange(pump, daemon, security, command=5, body=query, **options):
    """One connection: returns (session, body result, served request, pump)."""
    harness = pump()

    def client():
        session = yield from start_command(
            harness.client_conn,
            command,
            security=security,
            target=TARGET,
            local_address=CLIENT,
            peer_address=SERVER,
            **options,
        )
        result = yield from body(session) if body is not None else iter(())
        return session, result

    server = harness.closing(
        daemon.connection_protocol(harness.server_conn, local_address=SERVER, peer_address=CLIENT)
    )
    (session, result), request = harness.run(client(), server)
    return session, result, request, harness


def decode(messages):
    """Plaintext messages as readers (wire bytes -> MessageReader)."""
    conn = CedarConnection()
    for data in messages:
        conn.receive_data(data)
    out = []
    while (message := conn.next_message()) is not None:
        out.append(message)
    return out


def fs_security(**kwargs):
    return ClientSecurity(SecurityConfig(methods=["FS", "CLAIMTOBE"], **kwargs))


def test_policy_ad_has_every_attribute(pump):
    daemon, _ = mock_daemon()
    _s, _r, _q, harness = exchange(pump, daemon, fs_security())
    m1 = decode(harness.sent["c2s"][:1])[0]
    assert m1.get_int() == DC_AUTHENTICATE
    ad = get_handshake_ad(m1)
    m1.end_of_message()
    assert set(ad.keys()) == {
        "Enact", "Command", "Integrity", "ServerPid", "Subsystem", "Encryption", "NewSession",
        "AuthMethods", "TrustDomain", "SessionLease", "ConnectSinful", "CryptoMethods",
        "ECDHPublicKey", "RemoteVersion", "Authentication", "SessionDuration",
        "AuthenticationNew", "NegotiatedSession", "OutgoingNegotiation",
    }  # fmt: skip
    assert ad["Enact"] == "NO" and ad["NewSession"] == "YES" and ad["NegotiatedSession"] is True
    assert ad["Command"] == 5 and ad["Subsystem"] == "TOOL" and ad["ConnectSinful"] == TARGET
    assert ad["AuthMethods"] == "FS,CLAIMTOBE" and ad["CryptoMethods"] == "AES"
    assert ad["SessionDuration"] == "60" and ad["SessionLease"] == 3600  # string vs int
    assert (ad["Authentication"], ad["AuthenticationNew"]) == ("OPTIONAL", "OPTIONAL")
    assert ad["OutgoingNegotiation"] == "PREFERRED"
    point = base64.b64decode(ad["ECDHPublicKey"], validate=True)
    assert len(point) == 65 and point[0] == 4
    assert parse_version(ad["RemoteVersion"]) >= (9, 9, 0)
    assert ad["RemoteVersion"].startswith("$CondorVersion: ") and ad["RemoteVersion"].endswith(" $")


def test_ping_adds_auth_command(pump):
    daemon, _ = mock_daemon()
    session, ok, request, harness = exchange(
        pump, daemon, fs_security(), command=DC_SEC_QUERY, body=sec_query_body, auth_command=60020
    )
    m1 = decode(harness.sent["c2s"][:1])[0]
    assert m1.get_int() == DC_AUTHENTICATE
    ad = get_handshake_ad(m1)
    assert ad["Command"] == DC_SEC_QUERY and ad["AuthCommand"] == 60020
    assert ok is True and request is None  # DC_SEC_QUERY runs no handler
    assert session.method == "FS" and session.encrypted


def test_fs_aes_boundaries_and_server_ad(pump):
    daemon, handler = mock_daemon()
    session, names, request, harness = exchange(
        pump, daemon, fs_security(authentication="PREFERRED")
    )
    assert names == ["slot1@mock"]
    assert session.method == "FS" and session.crypto_method == "AES" and session.encrypted
    assert session.authenticated_user == f"{getpass.getuser()}@{daemon.policy.uid_domain}"
    assert request.user == session.authenticated_user and request.method == "FS"
    s2c = harness.sent["s2c"]
    # M2, A2, F1, F3, K1 in clear; P1 (and the reply) encrypted
    m2, a2, f1, f3, k1 = decode(s2c[:5])
    ad = get_handshake_ad(m2)
    assert list(ad.keys()) == [
        "Enact", "Integrity", "Encryption", "AuthMethods", "TrustDomain", "AuthRequired",
        "SessionLease", "CryptoMethods", "ECDHPublicKey", "RemoteVersion", "Authentication",
        "AuthMethodsList", "SessionDuration", "CryptoMethodsList", "NegotiatedSession",
    ]  # fmt: skip
    assert (ad["Authentication"], ad["Encryption"], ad["Integrity"]) == ("YES", "YES", "YES")
    assert ad["AuthRequired"] is False and ad["SessionDuration"] == "60"
    assert a2.get_int() == 4
    assert f1.get_string().startswith("/tmp/FS_127.0.0.1_9618_XXX")
    assert f3.get_int() == 0
    assert s2c[4] == bytes.fromhex("01 00000008 0000000000000000")  # K1: hasKey = 0
    assert b"Sid" not in s2c[5] and b"AUTHORIZED" not in s2c[5]
    a1, f2 = decode(harness.sent["c2s"][1:3])
    assert a1.get_int() == 6  # FS | CLAIMTOBE
    assert f2.get_int() == 0 and f2.get_string() == "127.0.0.1:9618"
    assert b"Query" not in harness.sent["c2s"][3]  # C1 is encrypted


def test_resumption(pump):
    daemon, handler = mock_daemon()
    security = fs_security(authentication="PREFERRED")
    first, *_ = exchange(pump, daemon, security)
    second, names, request, harness = exchange(pump, daemon, security)
    assert names == ["slot1@mock"] and second.resumed and request.resumed
    assert second.method == "FS" and second.encrypted and request.user == first.authenticated_user
    r1 = decode(harness.sent["c2s"][:1])[0]
    assert r1.get_int() == DC_AUTHENTICATE
    ad = get_handshake_ad(r1)
    assert list(ad.keys()) == [
        "Command", "ConnectSinful", "CryptoMethods", "Nonce", "RemoteVersion",
        "ResumeResponse", "Sid", "UseSession",
    ]  # fmt: skip
    assert len(base64.b64decode(ad["Nonce"])) == 33 and ad["UseSession"] == "YES"
    r2 = get_handshake_ad(decode(harness.sent["s2c"][:1])[0])
    assert list(r2.keys()) == ["Nonce", "ReturnCode", "RemoteVersion"]
    assert r2["ReturnCode"] == "AUTHORIZED"
    assert b"Query" not in harness.sent["c2s"][1]


def test_forgotten_session_is_rejected_and_dropped(pump):
    daemon, _ = mock_daemon()
    security = fs_security()
    exchange(pump, daemon, security)
    assert len(security.sessions) == 1
    daemon.sessions.clear()
    with pytest.raises(SessionRejected, match="no longer knows"):
        exchange(pump, daemon, security)
    assert len(security.sessions) == 0
    session, names, _req, _h = exchange(pump, daemon, security)
    assert not session.resumed and names == ["slot1@mock"]


def resume_ad(harness) -> ClassAd:
    """The resume ad of the client's first message (R1)."""
    (r1,) = decode(harness.sent["c2s"][:1])
    assert r1.get_int() == DC_AUTHENTICATE
    return get_handshake_ad(r1)


def test_pipelined_resumption_sends_the_payload_without_waiting(pump):
    # No resume response is asked for: R1 and C1 leave together and the server answers C1.
    daemon, _ = mock_daemon()
    security = fs_security(authentication="PREFERRED")
    exchange(pump, daemon, security)
    session, names, request, harness = exchange(pump, daemon, security, pipeline_resume=True)
    assert names == ["slot1@mock"] and session.resumed and session.pipelined and request.resumed
    ad = resume_ad(harness)
    assert ad["ResumeResponse"] is False and ad["UseSession"] == "YES"
    assert len(harness.sent["s2c"]) >= 1 and b"ReturnCode" not in harness.sent["s2c"][0]


def test_resume_messages_differ_only_in_the_nonce_and_go_with_the_session(pump):
    daemon, _ = mock_daemon()
    security = fs_security(authentication="PREFERRED")
    exchange(pump, daemon, security)
    ads = []
    for _ in range(2):
        _session, _names, _req, harness = exchange(pump, daemon, security)
        ads.append(resume_ad(harness))
    assert ads[0]["Nonce"] != ads[1]["Nonce"]
    assert {k: v for k, v in ads[0].items() if k != "Nonce"} == {
        k: v for k, v in ads[1].items() if k != "Nonce"
    }
    (cached,) = security.sessions._sessions.values()
    assert cached.resume_messages and cached.cipher is not None
    # The session expires: the next command negotiates a new one, whose resumptions carry
    # its own id (nothing of the old session's messages is reused).
    cached.duration, cached.created = 1.0, cached.created - 10
    fresh, *_ = exchange(pump, daemon, security)
    assert not fresh.resumed and fresh.session_id != cached.sid
    _session, _names, _req, harness = exchange(pump, daemon, security)
    ad = resume_ad(harness)
    assert ad["Sid"] == fresh.session_id != ads[0]["Sid"]


def test_method_fall_through(pump, tmp_path):
    # The server cannot name an FS directory (no such parent): FS fails, CLAIMTOBE follows.
    daemon, _ = mock_daemon()
    daemon.policy.options["FS_LOCAL_DIR"] = str(tmp_path / "missing")
    security = fs_security(authentication="REQUIRED")
    security.config.options["FS_LOCAL_DIR"] = str(tmp_path / "missing")
    session, _names, request, harness = exchange(pump, daemon, security)
    assert session.method == "CLAIMTOBE" and request.method == "CLAIMTOBE"
    masks = decode(harness.sent["c2s"][1:2]) + decode(harness.sent["c2s"][3:4])
    assert [m.get_int() for m in masks] == [6, 2]
    assert request.user == f"{getpass.getuser()}@{daemon.policy.uid_domain}"


def test_optional_authentication_failure_continues_unauthenticated(pump, tmp_path):
    daemon, _ = mock_daemon(methods=["FS"])
    daemon.policy.options["FS_LOCAL_DIR"] = str(tmp_path / "missing")
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="PREFERRED"))
    session, names, request, _h = exchange(pump, daemon, security)
    assert names == ["slot1@mock"] and session.method is None
    assert session.authenticated_user == "unauthenticated@unmapped" and request.user is None
    assert session.encrypted  # ECDH still gave a key


def test_required_authentication_failure(pump, tmp_path):
    daemon, _ = mock_daemon(methods=["FS"])
    daemon.policy.options["FS_LOCAL_DIR"] = str(tmp_path / "missing")
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))
    with pytest.raises(AuthenticationError, match="required authentication .* failed.*FS"):
        exchange(pump, daemon, security)


def test_claimtobe_without_encryption(pump):
    daemon, _ = mock_daemon()
    security = ClientSecurity(
        SecurityConfig(
            methods=["CLAIMTOBE"],
            crypto_methods=[],
            authentication="REQUIRED",
            options={"SEC_CLAIMTOBE_USER": "alice"},
            uid_domain="example.org",
        )
    )
    session, names, request, harness = exchange(pump, daemon, security)
    assert names == ["slot1@mock"] and not session.encrypted and session.crypto_method is None
    assert request.user == "alice@example.org" and request.method == "CLAIMTOBE"
    assert b"AUTHORIZED" in harness.sent["s2c"][-2]  # P1 in clear


def test_denied_level(pump):
    daemon, _ = mock_daemon(allow={"READ": ["*"]})
    with pytest.raises(CommandDenied) as info:
        exchange(
            pump, daemon, fs_security(authentication="PREFERRED"),
            command=DC_SEC_QUERY, body=sec_query_body, auth_command=60021,
            permission_hint="WRITE",
        )  # fmt: skip
    assert info.value.method == "FS" and info.value.user.startswith(getpass.getuser())
    assert 'Received "DENIED"' in str(info.value) and "WRITE" in str(info.value)


def test_unknown_command_closes(pump):
    daemon, _ = mock_daemon()
    with pytest.raises(CommandDenied, match="Probably due to an unknown command") as info:
        exchange(pump, daemon, fs_security(), command=12345)
    assert "command 12345" in str(info.value) and "FS, CLAIMTOBE" in str(info.value)


def test_irreconcilable_policies_close(pump):
    daemon, _ = mock_daemon(levels={"DEFAULT": LevelPolicy(methods=["FS"], encryption="NEVER")})
    with pytest.raises(CommandDenied, match="encryption REQUIRED"):
        exchange(pump, daemon, fs_security(encryption="REQUIRED"))


def test_raw_start_shares_the_first_message(pump):
    daemon, handler = mock_daemon()
    security = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    session, names, request, harness = exchange(pump, daemon, security)
    assert session.raw and names == ["slot1@mock"] and request.raw and request.user is None
    first = decode(harness.sent["c2s"])[0]
    assert first.get_int() == 5 and get_classad(first)["MyType"] == "Query"


def test_raw_start_refused_when_authentication_required(pump):
    daemon, _ = mock_daemon(levels={"DEFAULT": LevelPolicy(authentication="REQUIRED")})
    security = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    with pytest.raises(ConnectionClosed):
        exchange(pump, daemon, security)
    assert daemon.stats["denied"] == 1


def test_raw_force_authentication_runs_inband(pump):
    daemon, handler = mock_daemon()
    daemon.register(1112, handler, permission="WRITE", force_authentication=True)
    harness = pump()

    def client():
        writer = harness.client_conn.writer().put_int(1112).put_int(2)  # one message
        yield Send(writer)
        chosen = yield Receive()
        assert chosen.get_int() == 2
        yield Send(harness.client_conn.writer().put_int(1).put_string("bob@example.org"))
        verdict = yield Receive()
        assert verdict.get_int() == 1
        ad = ClassAd()
        ad["MyType"] = "Query"
        payload = harness.client_conn.writer()
        put_classad(payload, ad)
        yield Send(payload)
        reply = yield Receive()
        return reply.get_int()

    server = daemon.connection_protocol(harness.server_conn, local_address=SERVER)
    first, request = harness.run(client(), server)
    assert first == 1 and request.user == "bob@example.org" and request.raw
    assert harness.sent["s2c"][1] == bytes.fromhex("01 00000008 0000000000000001")  # no K1


def test_blowfish_insisting_server_is_refused():
    from cedar.stream.drivers import ReplayChannel

    conn = CedarConnection()
    m2 = ClassAd()
    for name, value in [
        ("Enact", "YES"), ("Integrity", "YES"), ("Encryption", "YES"), ("AuthMethods", ""),
        ("Authentication", "NO"), ("CryptoMethods", "BLOWFISH"), ("CryptoMethodsList", "BLOWFISH"),
    ]:  # fmt: skip
        m2[name] = value
    writer = conn.writer()
    put_classad(writer, m2)
    channel = ReplayChannel(conn.send_message(writer))
    with pytest.raises(SecurityError, match="BLOWFISH.*AES"):
        channel.run(start_command(channel.conn, 5, security=fs_security(), target=TARGET))


def _ads(*ads: dict[str, object]) -> bytes:
    """Server messages, one ad each, as wire bytes."""
    conn, out = CedarConnection(), b""
    for attributes in ads:
        writer = conn.writer()
        put_classad(writer, ClassAd(attributes))
        out += conn.send_message(writer)
    return out


_CLEAR_BLOWFISH_M2 = {
    "Enact": "YES", "Integrity": "NO", "Encryption": "NO", "AuthMethods": "",
    "Authentication": "NO", "CryptoMethods": "BLOWFISH", "CryptoMethodsList": "BLOWFISH",
    "RemoteVersion": "$CondorVersion: 25.13.2 2026-11-22 $",
}  # fmt: skip


def _authenticate_ad(wire: bytes) -> ClassAd:
    (reader,) = decode([wire])
    assert reader.get_int() == DC_AUTHENTICATE
    return get_handshake_ad(reader)


def _clear_blowfish_security() -> ClientSecurity:
    return ClientSecurity(
        SecurityConfig(crypto_methods=["BLOWFISH"], encryption="NEVER", integrity="NEVER")
    )


def test_offered_blowfish_session_stays_clear_and_is_never_resumed():
    """The real tools' "plain" setting (spec 03 §5.4): BLOWFISH negotiated, never switched on.

    Such a session has no key, so its id alone would be the credential (issue 13 §2): the
    client does not cache it, and the next command negotiates a new session."""
    from cedar.stream.drivers import ReplayChannel

    security = _clear_blowfish_security()
    p1 = {"Sid": "s:1", "User": "unauthenticated@unmapped", "ReturnCode": "AUTHORIZED",
          "ValidCommands": "5,6"}  # fmt: skip
    channel = ReplayChannel(_ads(_CLEAR_BLOWFISH_M2, p1))
    session = channel.run(start_command(channel.conn, 5, security=security, target=TARGET))
    m1 = _authenticate_ad(channel.sent[0])
    assert m1["CryptoMethods"] == "BLOWFISH" and "ECDHPublicKey" in m1
    assert not session.encrypted and session.crypto_method is None
    again = ReplayChannel(_ads(_CLEAR_BLOWFISH_M2, p1))
    second = again.run(start_command(again.conn, 6, security=security, target=TARGET))
    assert not second.resumed
    assert "UseSession" not in _authenticate_ad(again.sent[0])


def test_offered_blowfish_is_refused_when_the_server_turns_it_on():
    from cedar.stream.drivers import ReplayChannel

    channel = ReplayChannel(_ads({**_CLEAR_BLOWFISH_M2, "Encryption": "YES"}))
    with pytest.raises(SecurityError, match="BLOWFISH"):
        channel.run(
            start_command(channel.conn, 5, security=_clear_blowfish_security(), target=TARGET)
        )


def test_anonymous(pump):
    daemon, _ = mock_daemon(methods=["ANONYMOUS"])
    security = ClientSecurity(SecurityConfig(methods=["ANONYMOUS"], authentication="REQUIRED"))
    session, names, request, harness = exchange(pump, daemon, security)
    assert session.method == "ANONYMOUS" and request.user == "CONDOR_ANONYMOUS_USER"
    assert session.encrypted and names == ["slot1@mock"]
    # A2 = 0x80, then the server's int 1, then K1
    assert decode(harness.sent["s2c"][1:4])[0].get_int() == 0x80
    assert harness.sent["s2c"][2] == bytes.fromhex("01 00000008 0000000000000001")


def test_fs_remote(pump, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    daemon, _ = mock_daemon(methods=["FS_REMOTE"])
    daemon.policy.options["FS_REMOTE_DIR"] = str(shared)
    security = ClientSecurity(
        SecurityConfig(
            methods=["FS_REMOTE"],
            authentication="REQUIRED",
            options={"FS_REMOTE_DIR": str(shared)},
        )
    )
    session, _names, request, harness = exchange(pump, daemon, security)
    assert session.method == "FS_REMOTE" and request.user.startswith(getpass.getuser() + "@")
    name = decode(harness.sent["s2c"][2:3])[0].get_string()
    assert name.startswith(f"{shared}/FS_REMOTE_127.0.0.1_9618_XXX") and name.endswith("_")
    assert list(shared.iterdir()) == []  # the client removed its directory


def test_fs_refuses_a_directory_outside_the_expected_parent(pump, tmp_path):
    daemon, _ = mock_daemon(methods=["FS"])
    daemon.policy.options["FS_LOCAL_DIR"] = str(tmp_path)  # the client still expects /tmp
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))
    with pytest.raises(AuthenticationError, match="outside the expected parent"):
        exchange(pump, daemon, security)
    assert list(tmp_path.iterdir()) == []


def test_fs_channel_binding_mismatch(pump):
    daemon, _ = mock_daemon(methods=["FS"])
    harness = pump()
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))

    def client():
        # The client believes it talks to another endpoint than the server's local address.
        return (
            yield from start_command(
                harness.client_conn, 5, security=security, target=TARGET,
                peer_address=("127.0.0.1", 1234),
            )
        )  # fmt: skip

    server = harness.closing(daemon.connection_protocol(harness.server_conn, local_address=SERVER))
    # The client sees the mismatch in the name itself and answers -1 (the server's verdict
    # would be -1 anyway): see tests/auth/test_pipelining.py.
    with pytest.raises(AuthenticationError, match="a proxy or NAT is in between"):
        harness.run(client(), server)


def test_legacy_key_message_without_ecdh(pump):
    """A peer that sends no ECDHPublicKey gets K1 = 1 and a 32-byte AES key (spec 04 §1.4)."""
    from cedar.auth.client import _authenticate, _read_key_message

    daemon, _ = mock_daemon(methods=["CLAIMTOBE"])
    harness = pump()
    config = SecurityConfig(methods=["CLAIMTOBE"], authentication="REQUIRED")

    def client():
        ad = ClassAd()
        for name, value in [
            ("Command", 5), ("Enact", "NO"), ("NewSession", "YES"), ("AuthMethods", "CLAIMTOBE"),
            ("CryptoMethods", "AES"), ("Authentication", "REQUIRED"),
            ("AuthenticationNew", "REQUIRED"), ("SessionDuration", "60"),
        ]:  # fmt: skip
            ad[name] = value
        writer = harness.client_conn.writer().put_int(DC_AUTHENTICATE)
        put_classad(writer, ad)
        yield Send(writer)
        m2 = get_handshake_ad((yield Receive()))
        assert "ECDHPublicKey" not in m2 and m2["CryptoMethods"] == "AES"
        result = yield from _authenticate(
            harness.client_conn, config.method_context(), m2, ["CLAIMTOBE"], "test"
        )
        key = yield from _read_key_message(harness.client_conn, result)
        harness.client_conn.install_aes_key(key)
        p1 = get_handshake_ad((yield Receive()))
        return key, p1["ReturnCode"]

    server = harness.closing(daemon.connection_protocol(harness.server_conn, local_address=SERVER))
    (key, code), _request = harness.run(client(), server)
    assert len(key) == 32 and code == "AUTHORIZED"
    # s2c: M2, A2, the CLAIMTOBE verdict, K1 = 1, the key message
    assert harness.sent["s2c"][3] == bytes.fromhex("01 00000008 0000000000000001")
    key_message = decode(harness.sent["s2c"][4:5])[0]
    assert [key_message.get_int() for _ in range(4)] == [32, 3, 0, 32]
    assert key_message.get_bytes(32) == key


def test_a_client_without_ecdh_takes_the_servers_legacy_key(pump):
    """``offer_ecdh=False``: M1 carries no ECDHPublicKey, so the server sends its AES key
    wrapped after authentication (spec 04 §1.4) -- the one its ``legacy_key_source`` gave --
    and the command runs encrypted under it."""
    given = bytes(range(32))
    daemon, _ = mock_daemon(methods=["CLAIMTOBE"], legacy_key_source=lambda size: given[:size])
    security = ClientSecurity(
        SecurityConfig(methods=["CLAIMTOBE"], authentication="REQUIRED", offer_ecdh=False)
    )
    session, names, _request, harness = exchange(pump, daemon, security)
    first = decode(harness.sent["c2s"][:1])[0]
    assert first.get_int() == DC_AUTHENTICATE
    m1 = get_handshake_ad(first)
    assert "ECDHPublicKey" not in m1 and m1["CryptoMethods"] == "AES"
    assert names == ["slot1@mock"] and session.encrypted
    cached = daemon.sessions.get(str(session.session_id))
    assert cached is not None and cached.key == given
    assert given.hex() not in repr(daemon.policy) and given.hex() not in repr(security.config)
