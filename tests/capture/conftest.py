"""Shared helpers of the capture tests: the repo's captures and synthetic conversations."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd, put_classad
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageWriter
from tests.support import CAPTURES

#: The captures the tests use live in the repository (CI must not depend on ../shared).


def capture_index() -> list[dict[str, str]]:
    """Rows of captures/index.tsv."""
    with open(CAPTURES / "index.tsv", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.fixture(scope="session")
def captures_dir() -> Path:
    return CAPTURES


def ad_message(ad: dict[str, object], *, prefix: int | None = None, crypto: bool = False) -> bytes:
    """Payload of a message holding ``[int prefix] ad``."""
    writer = MessageWriter(crypto=crypto)
    if prefix is not None:
        writer.put_int(prefix)
    put_classad(writer, ClassAd(ad))
    return writer.getvalue()


class Exchange:
    """Two CedarConnections talking to each other; records the wire chunks in order."""

    def __init__(self) -> None:
        self.client = CedarConnection()
        self.server = CedarConnection()
        self.chunks: list[tuple[str, bytes]] = []

    def send(self, direction: str, payload: bytes | MessageWriter) -> bytes:
        sender, receiver = (
            (self.client, self.server) if direction == C2S else (self.server, self.client)
        )
        wire = sender.send_message(payload)
        self.chunks.append((direction, wire))
        receiver.receive_data(wire)
        assert receiver.next_message() is not None
        return wire

    def preamble(self, target: str = "schedd_1_2") -> None:
        """A shared-port request: the server-side daemon never sees it (spec 03 §8.5)."""
        writer = MessageWriter().put_int(75).put_string(target).put_string("TOOL")
        wire = self.client.send_message(writer.put_int(20).put_int(0))
        self.chunks.append((C2S, wire))
        self.client.reset_transcript()

    def install(self, key: bytes) -> None:
        self.client.install_aes_key(key)
        self.server.install_aes_key(key)


KEY = bytes(range(32))


def aes_query_exchange(key: bytes = KEY, *, preamble: bool = True) -> Exchange:
    """A negotiated QUERY_STARTD_ADS without authentication, ECDH + AES (spec 03 §11b)."""
    ex = Exchange()
    if preamble:
        ex.preamble()
    ex.send(
        C2S,
        ad_message(
            {
                "Command": 5,
                "Enact": "NO",
                "AuthMethods": "FS",
                "CryptoMethods": "AES",
                "Authentication": "NEVER",
                "NewSession": "YES",
                "ECDHPublicKey": "BAIX",
            },
            prefix=60010,
        ),
    )
    ex.send(
        S2C,
        ad_message(
            {
                "Enact": "YES",
                "Authentication": "NO",
                "Encryption": "NO",
                "Integrity": "NO",
                "CryptoMethods": "AES",
                "ECDHPublicKey": "BNZa",
            }
        ),
    )
    ex.install(key)
    ex.send(
        S2C,
        ad_message(
            {
                "Sid": "host:1:2:3",
                "User": "unauthenticated@unmapped",
                "ReturnCode": "AUTHORIZED",
                "ValidCommands": "5,6",
            },
            crypto=True,
        ),
    )
    ex.send(
        C2S,
        ad_message({"MyType": "Query", "TargetType": "Machine", "Requirements": True}, crypto=True),
    )
    reply = MessageWriter(crypto=True).put_int(1)
    put_classad(reply, ClassAd({"Name": "slot1@host", "Memory": 1024}))
    ex.send(S2C, reply.put_int(0))
    return ex
