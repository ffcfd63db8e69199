"""The recorded peer of an encrypted conversation, its AES-GCM messages protected anew for ours.

The first encrypted packet of each direction authenticates the transcript digests of the
clear-text handshake as its sender saw it (spec 01 §4.2.4).  Ours sends other clear bytes than
the recorded peer saw (another ECDH-less M1 pid, a fresh Kerberos authenticator), so the
recorded ciphertext cannot open on our side even with the right key.  Given the session key
(derived from the recording), :class:`ResealingChannel` plays the recorded peer's clear
messages as recorded and, when ours first reads past them, seals the recorded *plaintexts* of
the peer's encrypted messages again with the transcript of this very conversation -- the
recorded peer's messages, only re-protected.  The way :mod:`cedar.capture.decrypt` opens a
recording, run from the other end.
"""

from __future__ import annotations

from cedar.capture.dissect import DecodedMessage
from cedar.capture.errors import CaptureError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import WAIT_TIMEOUT, ReplayChannel
from cedar.stream.driving import Waits

#: The shared-port preamble: sent before the transcript starts, never seen by the daemon.
PREAMBLE = "SHARED_PORT_CONNECT"


class ResealingChannel(ReplayChannel):
    """A :class:`ReplayChannel` playing the recorded ``peer`` direction (``C2S``/``S2C``).

    :attr:`resealed` maps a recorded message index to the wire bytes ours received for it
    (only the encrypted ones differ from the recording).  ``key`` is never shown.
    """

    def __init__(self, recorded: list[DecodedMessage], peer: str, key: bytes) -> None:
        self.conn = CedarConnection()
        self.waits = Waits(WAIT_TIMEOUT, "the recording", None)
        self.sent: list[bytes] = []
        self.resealed: dict[int, bytes] = {}
        self._recorded = recorded
        self._peer = peer
        self._key = key
        played = [m for m in recorded if m.direction == peer and m.kind != PREAMBLE]
        clear = [m for m in played if not m.encrypted]
        self._pending: list[DecodedMessage] | None = [m for m in played if m.encrypted]
        self.conn.receive_data(b"".join(m.wire for m in clear))
        if not self._pending:
            self._pending = None
            self.conn.receive_data(b"")

    def __repr__(self) -> str:
        return f"ResealingChannel(peer={self._peer!r}, {len(self._recorded)} recorded messages)"

    def _receive(self, limit: float) -> bytes:
        if self._pending is None:
            return b""  # the recording ends here: the peer closed
        pending, self._pending = self._pending, None
        view = self._peer_view()
        for message in pending:
            if message.payload is None:
                raise CaptureError(
                    "a recorded encrypted message was not opened",
                    direction=message.direction,
                    offset=message.offset,
                )
            self.resealed[message.index] = view.send_message(message.payload)
        return b"".join(self.resealed[m.index] for m in pending)

    def _peer_view(self) -> CedarConnection:
        """The recorded peer's connection fed this conversation's clear part, key installed."""
        view = CedarConnection()
        ours = iter(self.sent)
        for message in self._recorded:
            if message.encrypted:
                break  # the transcript ends where encryption starts
            if message.direction == self._peer:
                if message.payload is None or view.send_message(message.payload) != message.wire:
                    raise CaptureError(
                        "a recorded clear-text message cannot be sent again byte for byte; "
                        "its transcript digest cannot be reproduced",
                        direction=message.direction,
                        offset=message.offset,
                    )
            else:
                wire = next(ours, None)
                if wire is None:
                    break  # ours sent less: its own comparison reports it
                view.receive_data(wire)
                if view.next_message() is None:
                    raise CaptureError("our message did not parse as one whole message")
            if message.kind == PREAMBLE:
                view.reset_transcript()
        view.install_aes_key(self._key)
        return view


__all__ = ["PREAMBLE", "ResealingChannel"]
