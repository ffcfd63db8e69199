"""CEDAR framing, primitive encodings, AES-GCM stream crypto and I/O drivers (spec 01).

Everything here except :mod:`cedar.stream.drivers` is free of I/O.
"""

from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import EcdhKeyPair, derive_session_key
from cedar.stream.drivers import (
    WAIT_TIMEOUT,
    Deadline,
    MemoryPair,
    ReplayChannel,
    SyncChannel,
    TrioChannel,
)
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Emit, Protocol, ProtocolRunner, Receive, Send

__all__ = [
    "WAIT_TIMEOUT",
    "CedarConnection",
    "Deadline",
    "EcdhKeyPair",
    "MemoryPair",
    "Emit",
    "MessageReader",
    "MessageWriter",
    "Protocol",
    "ProtocolRunner",
    "Receive",
    "ReplayChannel",
    "Send",
    "SyncChannel",
    "TrioChannel",
    "derive_session_key",
]
