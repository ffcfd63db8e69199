"""Hostile handshake input: the server only ever closes or fails with a CedarError."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, put_classad
from cedar.daemons.testing import mock_daemon
from cedar.errors import CedarError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import ReplayChannel
from tests.support import ad_messages

DAEMON, _HANDLER = mock_daemon()

NAMES = [
    "Command", "AuthCommand", "Enact", "NewSession", "UseSession", "Sid", "ResumeResponse",
    "AuthMethods", "CryptoMethods", "ECDHPublicKey", "Authentication", "AuthenticationNew",
    "Encryption", "Integrity", "SessionDuration", "SessionLease", "RemoteVersion",
]  # fmt: skip
VALUES = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([5, 60010, 60040, 60020, 60021, 60011]),
    st.booleans(),
    st.text(alphabet=st.characters(blacklist_characters='\0"\\', codec="utf-8"), max_size=40),
    st.sampled_from(
        ["YES", "NO", "REQUIRED", "NEVER", "FS", "AES", "BLOWFISH", "", "FS,CLAIMTOBE"]
    ),
)


def serve(peer_bytes: bytes) -> None:
    channel = ReplayChannel(peer_bytes, conn=CedarConnection(max_message_size=1 << 16))
    with contextlib.suppress(CedarError):
        channel.run(DAEMON.connection_protocol(channel.conn, local_address=("127.0.0.1", 9618)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=len(NAMES)), st.binary(max_size=64))
def test_random_policy_ads(attributes, trailer):
    """A DC_AUTHENTICATE with any policy ad (and trailing bytes) ends the handshake with at most
    a CedarError, never another exception."""
    ad = ClassAd()
    for name, value in attributes.items():
        ad[name] = value
    writer = CedarConnection().writer().put_int(60010)
    put_classad(writer, ad)
    serve(CedarConnection().send_message(writer) + trailer)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes(data):
    """Arbitrary bytes, raw or framed, to the daemon end with at most a CedarError."""
    serve(data)
    serve(b"\x01" + len(data).to_bytes(4, "big") + data if data else b"")


M2_NAMES = [
    "Enact", "Authentication", "Encryption", "Integrity", "AuthMethods", "AuthMethodsList",
    "AuthRequired", "CryptoMethods", "CryptoMethodsList", "ECDHPublicKey", "SessionDuration",
    "SessionLease", "RemoteVersion", "Sid", "User", "ReturnCode", "ValidCommands",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.dictionaries(st.sampled_from(M2_NAMES), VALUES, max_size=10), max_size=3),
    st.binary(max_size=32),
)
def test_client_survives_random_server_ads(ads, trailer):
    """The client's handshake fed any server ads ends with a session or a CedarError, never
    another exception."""
    from cedar.auth import ClientSecurity, SecurityConfig, start_command

    channel = ReplayChannel(ad_messages(*ads, extra=trailer))
    security = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE", "ANONYMOUS"]))
    with contextlib.suppress(CedarError):
        channel.run(start_command(channel.conn, 5, security=security, target="<127.0.0.1:1>"))
