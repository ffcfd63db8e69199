"""KERBEROS (spec 10) without a KDC: the crypto against published vectors and the recordings,
our client against our server in memory (a realm made of a keytab and a ccache written here),
and every refusal a user or a hostile peer meets, each one clear line."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest

from cedar.auth.errors import KerberosError
from cedar.auth.krb5 import der
from cedar.auth.krb5.crypto import Key, checksum, decrypt, encrypt, nfold, string_to_key
from cedar.auth.krb5.files import (
    Credential,
    KeytabEntry,
    parse_krb5_conf,
    read_ccache,
    read_keytab,
    write_ccache,
    write_keytab,
)
from cedar.auth.krb5.messages import (
    USAGE_AP_REQ_AUTH,
    Authenticator,
    Principal,
    check_ap_rep,
    open_ticket,
    parse_ap_req,
    seal_ticket,
)
from cedar.auth.methods import AuthContext
from cedar.auth.methods.kerberos import Kerberos, ReplayCache, legacy_wrappers
from cedar.auth.scitoken import MapFile
from cedar.capture import load_conversations
from cedar.errors import ConnectionClosed, ProtocolError
from tests.support import CAPTURES

#: 2026-12-07 09:00:00 UTC: a single-digit day, fixed (no test reads today's date).
#: The krb-* recordings (spec 10) and the keytabs that decrypt them, apart from the indexed ones.
KRB_CAPTURES = CAPTURES / "krb"
NOW = 1796634000.0
REALM = "TEST.REALM"
USER = Principal(("testuser",), REALM)


# -- crypto --------------------------------------------------------------------------------------


def test_nfold_matches_rfc3961_vectors() -> None:
    assert nfold(b"012345", 8).hex() == "be072631276b1955"
    assert nfold(b"password", 7).hex() == "78a07b6caf85fa"
    assert nfold(b"kerberos", 16).hex() == "6b65726265726f737b9b5b2b93132b93"


def test_string_to_key_matches_rfc3962_vectors() -> None:
    salt = "ATHENA.MIT.EDUraeburn"
    assert string_to_key(17, "password", salt, 1).data.hex() == "42263c6e89f4fc28b8df68ee09799f15"
    assert (
        string_to_key(18, "password", salt, 1200).data.hex()
        == "55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a"
    )


def test_aes_sha2_matches_rfc8009_vectors() -> None:
    salt = bytes.fromhex("10df9dd783e5bc8acea1730e74355f61") + b"ATHENA.MIT.EDUraeburn"
    assert string_to_key(19, "password", salt).data.hex() == "089bca48b105ea6ea77ca5d2f39dc5e7"
    assert string_to_key(20, "password", salt).data.hex() == (
        "45bd806dbf6a833a9cffc1c94589a222367a79bc21c413718906e9f578a78467"
    )
    key = Key(19, bytes.fromhex("3705d96080c17728a0e800eab6e0d23c"))
    confounder = bytes.fromhex("7e5895eaf2672435bad817f545a37148")
    assert encrypt(key, 2, b"", confounder).hex() == (
        "ef85fb890bb8472f4dab20394dca781dad877eda39d50c870c0d5a0a8e48c718"
    )
    assert checksum(key, 2, b"")[0] == 19 and len(checksum(Key.random(20), 2, b"")[1]) == 24


@pytest.mark.parametrize("etype", [17, 18, 19, 20])
@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 31, 32, 33, 100])
def test_encrypt_round_trips_and_detects_tampering(etype: int, size: int) -> None:
    key = Key.random(etype)
    plain = os.urandom(size)
    sealed = encrypt(key, 5, plain)
    assert decrypt(key, 5, sealed) == plain
    with pytest.raises(KerberosError, match="integrity"):
        decrypt(key, 6, sealed)
    flipped = bytes([sealed[0] ^ 1]) + sealed[1:]
    with pytest.raises(KerberosError, match="integrity"):
        decrypt(key, 5, flipped)


def test_legacy_key_wrap_matches_the_recorded_vector() -> None:
    """Spec 10 §9.3: the K1 key of krb-probe-legacy-aes, unwrapped with the session key."""
    session = Key(
        18, bytes.fromhex("37aec04c8fe532546ae061215b6daf9b98c48995b2a2fd6e3b439b2fdb2b05a9")
    )
    sealed = bytes.fromhex(
        "bb426b99bb6363bdc0da8793589d989a5027cab700c8fa3a30458ee4bf15d929fb22f8472db4210f980fbce8d3"
        "9bb2c55e55e17b49ad7feae65306eb"
    )
    wrapped = struct.pack(">III", 18, 0, len(sealed)) + sealed
    wrap, unwrap = legacy_wrappers(session)
    expected = "c75ead2d472589a350b6c074a6b330f30b44aed8a081ed279f82701c00f799d9"
    assert unwrap(wrapped).hex() == expected
    assert unwrap(wrap(bytes.fromhex(expected))).hex() == expected


# -- the recordings ------------------------------------------------------------------------------


def _recorded_ap(name: str) -> tuple[bytes, bytes | None]:
    """K-Q's AP-REQ and K-P's AP-REP (if any) of a recording's CEDAR conversation."""
    for conv in load_conversations(str(KRB_CAPTURES / f"{name}.pcap")):
        if conv.transport != "tcp":
            continue
        blobs = [
            m for m in conv.messages if len(m.body) > 100 and m.body[:8] == struct.pack(">q", 4)
        ]
        if blobs:
            req = blobs[0].body[16:]
            rep = blobs[1].body[16:] if len(blobs) > 1 else None
            return req, rep
    raise AssertionError(f"no AP-REQ in {name}")


def _recorded_server(tmp_path: Path, now: float) -> tuple[Kerberos, AuthContext]:
    ctx = AuthContext(
        role="server",
        peer_address=("127.0.0.1", 41060),
        options={
            "KERBEROS_SERVER_KEYTAB": str(KRB_CAPTURES / "krb-condor.keytab"),
            "KERBEROS_MAP_FILE": _map_file(tmp_path, "MINICONDOR.TEST = minicondor"),
            "kerberos_clock": lambda: now,
            "kerberos_replay_cache": ReplayCache(),
        },
    )
    return Kerberos(), ctx


def _map_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "realm.map"
    path.write_text(text + "\n")
    return str(path)


def test_the_recorded_ap_req_verifies_once_and_its_replay_is_refused(tmp_path: Path) -> None:
    """The 25.13.2 schedd accepted a replay (spec 10 §5.5); our server role refuses it."""
    ap_req, ap_rep = _recorded_ap("krb-ping-schedd-write-plain")
    ticket, sealed = parse_ap_req(ap_req)
    assert str(ticket.server) == "host/localhost@MINICONDOR.TEST"
    keys = read_keytab(str(KRB_CAPTURES / "krb-condor.keytab"))
    contents = open_ticket(
        ticket, next(e.key for e in keys if e.principal.same_name(ticket.server))
    )
    auth = Authenticator.decode(sealed.open(contents.session_key, USAGE_AP_REQ_AUTH))
    assert (str(auth.client), auth.cusec, auth.seq_number) == (
        "testuser@MINICONDOR.TEST",
        402626,
        1061078506,
    )
    assert ap_rep is not None
    check_ap_rep(ap_rep, contents.session_key, auth)  # the schedd's AP-REP answers it
    method, ctx = _recorded_server(tmp_path, auth.ctime + 10)
    client, _auth = method.verify(ap_req, ctx)
    assert method.map_principal(client.client, ctx) == ("testuser", "minicondor")
    with pytest.raises(KerberosError, match="replayed authenticator"):
        method.verify(ap_req, ctx)


@pytest.mark.parametrize("skew", [-400, 400])
def test_the_recorded_ap_req_out_of_the_skew_window_is_refused(tmp_path: Path, skew: int) -> None:
    ap_req, _ = _recorded_ap("krb-ping-schedd-write-plain")
    ticket, sealed = parse_ap_req(ap_req)
    method, ctx = _recorded_server(tmp_path, 0)
    keys = read_keytab(str(KRB_CAPTURES / "krb-condor.keytab"))
    contents = open_ticket(ticket, keys[0].key if keys[0].key.etype == 18 else keys[1].key)
    ctime = Authenticator.decode(sealed.open(contents.session_key, USAGE_AP_REQ_AUTH)).ctime
    method, ctx = _recorded_server(tmp_path, ctime + skew)
    with pytest.raises(KerberosError, match="clock skew"):
        method.verify(ap_req, ctx)


def test_the_wrong_service_recording_is_refused_as_not_in_the_keytab(tmp_path: Path) -> None:
    ap_req, ap_rep = _recorded_ap("krb-ping-wrongservice-plain")
    assert ap_rep is None
    method, ctx = _recorded_server(tmp_path, NOW)
    with pytest.raises(KerberosError, match="nokeytab/localhost@MINICONDOR.TEST, which is not"):
        method.verify(ap_req, ctx)


# -- our client against our server ---------------------------------------------------------------


class Realm:
    """A keytab, a ccache holding a TGT and a service ticket, and the contexts of both roles.

    ``now`` is the moment the tickets are issued (the fixed NOW, or the real clock for a daemon
    serving in a thread); ``host`` the service principal's host part."""

    def __init__(
        self,
        tmp_path: Path,
        *,
        service_ticket: bool = True,
        tgt_end: float | None = None,
        now: float = NOW,
        host: str = "localhost",
    ):
        self.dir = tmp_path
        self.service = Principal(("host", host), REALM, 3)
        self.service_key = Key.random(18)
        self.keytab = str(tmp_path / "server.keytab")
        write_keytab(self.keytab, [KeytabEntry(self.service, 2, self.service_key)])
        tgt_end = now + 36000 if tgt_end is None else tgt_end
        krbtgt = Principal(("krbtgt", REALM), REALM)
        tgt_session = Key.random(18)
        tgt = seal_ticket(krbtgt, Key.random(18), USER, tgt_session, (now - 60, tgt_end))
        creds = [Credential(USER, krbtgt, tgt_session, now - 60, tgt_end, tgt)]
        if service_ticket:
            session = Key.random(18)
            times = (now - 60, now + 36000)
            ticket = seal_ticket(self.service, self.service_key, USER, session, times)
            creds.append(Credential(USER, self.service, session, *times, ticket))
        self.ccache = str(tmp_path / "ccache")
        write_ccache(self.ccache, USER, creds)
        self.replays = ReplayCache()
        self.map_file = _map_file(tmp_path, f"{REALM} = test.domain")

    def client_ctx(self, **options: Any) -> AuthContext:
        opts = {
            "KRB5CCNAME": f"FILE:{self.ccache}",
            "kerberos_service_host": "localhost",
            "kerberos_clock": lambda: NOW,
        }
        opts.update(options)
        return AuthContext(role="client", peer_address=("127.0.0.1", 9618), options=opts)

    def server_ctx(self, **options: Any) -> AuthContext:
        opts = {
            "KERBEROS_SERVER_KEYTAB": self.keytab,
            "KERBEROS_MAP_FILE": self.map_file,
            "kerberos_clock": lambda: NOW,
            "kerberos_replay_cache": self.replays,
        }
        opts.update(options)
        return AuthContext(role="server", peer_address=("127.0.0.1", 40000), options=opts)


@pytest.fixture(autouse=True)
def _no_system_krb5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "krb5.conf"
    empty.write_text("")
    monkeypatch.setenv("KRB5_CONFIG", str(empty))
    monkeypatch.delenv("KRB5CCNAME", raising=False)


def _closed_is_result(protocol: Any) -> Any:
    """The client's result, or the ConnectionClosed it met (the server hung up on it)."""
    try:
        return (yield from protocol)
    except ConnectionClosed as exc:
        return exc


def run(
    pump: Any,
    realm: Realm,
    client_ctx: AuthContext | None = None,
    server_ctx: AuthContext | None = None,
    tamper: Any = None,
) -> tuple[Any, Any, Any]:
    harness = pump(tamper)
    method = Kerberos()
    client = _closed_is_result(method.client(harness.client_conn, client_ctx or realm.client_ctx()))
    server = harness.closing(method.server(harness.server_conn, server_ctx or realm.server_ctx()))
    client_result, server_result = harness.run(client, server)
    return client_result, server_result, harness


def test_our_client_and_server_authenticate_and_map_the_user(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    client, server, harness = run(pump, realm)
    assert client.success and server.success, (client.error, server.error)
    assert (server.user, server.domain, server.authenticated_name) == (
        "testuser",
        "test.domain",
        "testuser@TEST.REALM",
    )
    # six messages, C C S S C S (spec 10 §2)
    assert len(harness.sent["c2s"]) == 3 and len(harness.sent["s2c"]) == 3
    key = os.urandom(32)
    assert client.unwrap_key(server.wrap_key(key)) == key  # the legacy K1 wrap (§6.3)


def test_a_replayed_ap_req_is_refused(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    _c, _s, first = run(pump, realm)
    recorded = first.sent["c2s"]

    def replay(direction: str, index: int, data: bytes) -> bytes:
        return recorded[index] if direction == "c2s" and index == 1 else data

    client, server, _h = run(pump, realm, tamper=replay)
    assert not client.success and not server.success
    assert "replayed authenticator" in server.error
    assert "refused our ticket for host/localhost@TEST.REALM" in client.error


def test_no_credential_cache_sends_abort_and_says_run_kinit(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    ctx = realm.client_ctx(KRB5CCNAME=f"FILE:{tmp_path}/missing")
    client, server, harness = run(pump, realm, client_ctx=ctx)
    assert client.error == f"KERBEROS: no Kerberos credential cache {tmp_path}/missing (run kinit)"
    assert harness.sent["c2s"] == [harness.sent["c2s"][0]] and len(harness.sent["s2c"]) == 0
    assert not server.success


def test_an_expired_ticket_granting_ticket_is_named_with_its_end(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path, service_ticket=False, tgt_end=NOW - 3600)
    client, _server, _h = run(pump, realm)
    assert client.error == (
        f"KERBEROS: the Kerberos ticket of testuser@TEST.REALM in {realm.ccache} expired at "
        "2026-12-07 08:00:00 UTC (run kinit)"
    )


def test_a_service_in_another_realm_is_named(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path, service_ticket=False)
    (tmp_path / "krb5.conf").write_text("[libdefaults]\n default_realm = OTHER.REALM\n")
    client, _server, _h = run(pump, realm)
    assert client.error == (
        f"KERBEROS: host/localhost@OTHER.REALM is in realm OTHER.REALM, the ticket cache "
        f"{realm.ccache} holds a ticket-granting ticket for realm TEST.REALM only (cedar does "
        "not do cross-realm; check default_realm in krb5.conf)"
    )


def test_an_unreachable_kdc_is_one_line(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path, service_ticket=False)
    conf = tmp_path / "krb5.conf"
    conf.write_text(f"[realms]\n {REALM} = {{\n  kdc = 127.0.0.1:1\n }}\n")
    client, _server, _h = run(pump, realm)
    assert client.error == f"KERBEROS: the KDC for realm {REALM} is unreachable (127.0.0.1:1)"


def test_the_kdc_exchange_is_offloaded_and_bounded_by_the_limit(tmp_path: Path) -> None:
    """The client's first request hands the ticket fetch to the driver (an ``Offload``: a
    worker thread under Trio, tests/stream/test_offload.py); a KDC that accepts and never
    answers ends the fetch at the limit the driver gives, as one line."""
    from cedar.stream.connection import CedarConnection
    from cedar.stream.protocol import Offload
    from tests.loopback import serving, silent

    realm = Realm(tmp_path, service_ticket=False)
    with serving(silent()) as kdc:
        (tmp_path / "krb5.conf").write_text(f"[realms]\n {REALM} = {{\n  kdc = {kdc}\n }}\n")
        request = next(Kerberos().client(CedarConnection(), realm.client_ctx()))
        assert isinstance(request, Offload)
        found = request.function(0.3)
    assert isinstance(found, KerberosError)
    assert str(found) == f"the KDC for realm {REALM} is unreachable ({kdc})"


def test_a_ticket_for_another_service_is_refused(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    (tmp_path / "other").mkdir()
    other = Realm(tmp_path / "other")
    client, server, _h = run(pump, realm, server_ctx=other.server_ctx())
    assert "refused our ticket" in client.error
    assert "Kerberos integrity check failed" in server.error


def test_clock_skew_is_refused(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    client, server, _h = run(
        pump, realm, client_ctx=realm.client_ctx(kerberos_clock=lambda: NOW + 600)
    )
    assert server.error == "KERBEROS: clock skew too great" and not client.success


def test_a_realm_missing_from_the_map_file_fails_after_the_ap_rep(
    pump: Any, tmp_path: Path
) -> None:
    realm = Realm(tmp_path)
    ctx = realm.server_ctx(KERBEROS_MAP_FILE=_map_file(tmp_path, "OTHER.REALM = x"))
    client, server, _h = run(pump, realm, server_ctx=ctx)
    assert client.error == "KERBEROS: the server could not map testuser@TEST.REALM"
    assert "not in KERBEROS_MAP_FILE" in server.error


def test_the_service_principal_maps_to_the_server_user(tmp_path: Path) -> None:
    realm = Realm(tmp_path)
    method = Kerberos()
    ctx = realm.server_ctx()
    assert method.map_principal(Principal(("host", "vm"), REALM), ctx) == ("condor", "test.domain")
    ctx = realm.server_ctx(KERBEROS_SERVER_USER="daemon", KERBEROS_MAP_FILE="")
    assert method.map_principal(Principal(("alice", "admin"), REALM), ctx) == ("alice", REALM)
    assert method.map_principal(Principal(("host", "x"), REALM), ctx) == ("daemon", REALM)
    rules = MapFile.parse(
        r"KERBEROS ^alice/admin@TEST\.REALM$ root@admins" + "\nKERBEROS ^b(.*)@ \\1"
    )
    ctx = realm.server_ctx(certificate_mapfile=rules)
    assert method.map_principal(Principal(("alice", "admin"), REALM), ctx) == ("root", "admins")
    assert method.map_principal(Principal(("bob",), REALM), ctx) == ("ob", "")  # no @: UID_DOMAIN
    assert method.map_principal(Principal(("carol",), REALM), ctx) == ("carol", "test.domain")


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"\x6e",
        b"\x6e\x84\xff\xff\xff\xff",
        b"\x30\x03\x02\x01\x05",
        os.urandom(700),
        b"\x6e\x80" * 300,
    ],
)
def test_garbage_ap_reqs_are_denied(pump: Any, tmp_path: Path, garbage: bytes) -> None:
    realm = Realm(tmp_path)

    def swap(direction: str, index: int, data: bytes) -> bytes:
        if direction == "c2s" and index == 1:
            body = struct.pack(">qq", 4, len(garbage)) + garbage
            return data[:1] + struct.pack(">i", len(body)) + body
        return data

    client, server, harness = run(pump, realm, tamper=swap)
    if garbage:
        assert not client.success
        assert server.error.startswith("KERBEROS: ") and harness.server_error is None
    else:
        assert isinstance(harness.server_error, ProtocolError)
        assert isinstance(client, ConnectionClosed)


def test_an_unexpected_answer_to_the_ap_req_closes_the_connection(
    pump: Any, tmp_path: Path
) -> None:
    realm = Realm(tmp_path)

    def four(direction: str, index: int, data: bytes) -> bytes:  # K-M = 4, not 3 or 0
        return data[:-8] + struct.pack(">q", 4) if direction == "s2c" and index == 0 else data

    with pytest.raises(ProtocolError, match="answered 4 to our AP-REQ"):
        run(pump, realm, tamper=four)


def test_an_implausible_length_is_a_protocol_error(pump: Any, tmp_path: Path) -> None:
    realm = Realm(tmp_path)

    def huge(direction: str, index: int, data: bytes) -> bytes:
        if direction == "c2s" and index == 1:
            body = struct.pack(">qq", 4, 1 << 40)
            return data[:1] + struct.pack(">i", len(body)) + body
        return data

    _c, _s, harness = run(pump, realm, tamper=huge)
    assert isinstance(harness.server_error, ProtocolError)
    assert "implausible" in str(harness.server_error)


def test_the_replay_cache_is_bounded_and_fails_closed() -> None:
    cache = ReplayCache(limit=2)
    assert cache.check_and_add(("a", "s", int(NOW), 1), NOW) is None
    assert cache.check_and_add(("a", "s", int(NOW), 2), NOW) is None
    assert cache.check_and_add(("a", "s", int(NOW), 3), NOW) == (
        "replay cache full; refusing until entries expire"
    )
    assert cache.check_and_add(("a", "s", int(NOW), 3), NOW + 700) is None  # old ones expired


def test_files_are_read_bounded(tmp_path: Path) -> None:
    bad = tmp_path / "cc"
    bad.write_bytes(b"\x05\x04\x00\x00\x00\x00\x00\x01\xff\xff\xff\xff")
    with pytest.raises(KerberosError, match="is corrupt"):
        read_ccache(str(bad))
    with pytest.raises(KerberosError, match="type KEYRING, which cedar cannot read"):
        read_ccache("KEYRING:persistent:0")
    with pytest.raises(KerberosError, match="not a keytab"):
        read_keytab(str(bad))


def test_krb5_conf_settings() -> None:
    conf = parse_krb5_conf(
        "[libdefaults]\n default_realm = R\n# x\n[realms]\n R = {\n  kdc = h:88\n"
        "  admin_server = a\n"
        "  kdc = tcp/k:750\n }\n S = {\n kdc = s\n}\n"
    )
    assert conf.default_realm == "R"
    assert conf.kdcs == {"R": ["h:88", "tcp/k:750"], "S": ["s"]}


def test_der_integers_round_trip() -> None:
    for value in (0, 1, 127, 128, 255, 256, -1, -128, -129, 2**31 - 1, 2**32):
        assert der.decode(der.integer(value)).as_int() == value


def test_a_service_ticket_is_stored_in_the_file_cache(tmp_path: Path) -> None:
    """As the real tools do: the new entry follows the old ones (which stay byte for byte), the
    cache keeps its mode, and a cache cedar cannot extend is left alone."""
    from cedar.auth.krb5.files import store_credential

    realm = Realm(tmp_path, service_ticket=False)
    os.chmod(realm.ccache, 0o640)
    before = Path(realm.ccache).read_bytes()
    (tmp_path / "other").mkdir()
    other = Realm(tmp_path / "other")  # a ready service ticket to store
    ticket = read_ccache(other.ccache).find(other.service)
    assert ticket is not None
    store_credential(realm.ccache, ticket)
    after = Path(realm.ccache).read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert os.stat(realm.ccache).st_mode & 0o777 == 0o640
    stored = read_ccache(realm.ccache).find(other.service)
    assert stored == ticket
    assert sorted(os.listdir(tmp_path)).count("ccache") == 1  # no temporary file left
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".ccache")]
    old_format = tmp_path / "v3"
    old_format.write_bytes(b"\x05\x03" + before[4:])
    with pytest.raises(KerberosError, match="not a format-4"):
        store_credential(str(old_format), ticket)
