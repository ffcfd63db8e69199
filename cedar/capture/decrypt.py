"""Decrypting the AES-GCM part of a recorded conversation with a known session key.

Two :class:`CedarConnection` objects replay the conversation, one from each peer's point of
view: the client's view opens what the server sent, the server's view opens what the client
sent.  Each is fed the clear-text handshake exactly as its peer would have seen it (received
messages through ``receive_data``, its own messages through ``send_message``) so that its
transcript digests -- which authenticate the first encrypted packet of each direction (spec 01
§4.2.4) -- come out right; the shared-port preamble is excluded by resetting the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cedar.capture.errors import CaptureError
from cedar.capture.messages import WireMessage
from cedar.capture.tcp import C2S
from cedar.errors import CedarError
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader


@dataclass
class _History:
    message: WireMessage
    preamble: bool


@dataclass
class Decryptor:
    """Keeps the clear-text history of a conversation and opens its encrypted messages."""

    keys: list[bytes]
    history: list[_History] = field(default_factory=list)
    #: The key that worked, once the first encrypted message was opened.
    key: bytes | None = None
    #: Why nothing can be decrypted (no key, wrong key, transcript not reproducible).
    failure: str | None = None
    _views: dict[str, CedarConnection] | None = None
    _started: bool = False

    def add_key(self, key: bytes) -> None:
        """Offer a key learned from the capture itself (e.g. a legacy key sent in clear)."""
        if key not in self.keys:
            self.keys.insert(0, key)

    def clear(self, message: WireMessage, *, preamble: bool = False) -> None:
        """Record a clear-text message (they make up the transcript digests)."""
        if self._started:
            raise AssertionError("clear-text message after encryption started")
        self.history.append(_History(message, preamble))

    def _replay(self, key: bytes) -> dict[str, CedarConnection]:
        client, server = CedarConnection(), CedarConnection()
        for item in self.history:
            message = item.message
            sender, receiver = (client, server) if message.direction == C2S else (server, client)
            if sender.send_message(message.body) != message.wire:
                raise CaptureError(
                    "a clear-text message before encryption was split into several packets; "
                    "its transcript digest cannot be reproduced",
                    direction=message.direction,
                    offset=message.offset,
                )
            receiver.receive_data(message.wire)
            if receiver.next_message() is None:
                raise AssertionError("a whole recorded message did not parse")
            if item.preamble:
                client.reset_transcript()
                server.reset_transcript()
        client.install_aes_key(key)
        server.install_aes_key(key)
        # The client's view receives what the server sent, and vice versa.
        return {C2S: server, "S→C": client}

    def open(self, message: WireMessage) -> MessageReader | None:
        """The plaintext of an encrypted message, or ``None`` (see :attr:`failure`)."""
        if not self._started:
            self._started = True
            if not self.keys:
                self.failure = "no session key given (use --key HEX)"
                return None
            errors = []
            for key in self.keys:
                try:
                    views = self._replay(key)
                    reader = self._receive(views, message)
                except CaptureError as exc:
                    self.failure = exc.reason
                    return None
                except CedarError as exc:
                    errors.append(str(exc))
                    continue
                self.key, self._views = key, views
                return reader
            self.failure = "no given key opens the first encrypted packet (wrong session key?)"
            return None
        if self._views is None:
            return None
        try:
            return self._receive(self._views, message)
        except CedarError as exc:
            self.failure = f"decryption failed: {exc}"
            self._views = None
            return None

    @staticmethod
    def _receive(views: dict[str, CedarConnection], message: WireMessage) -> MessageReader:
        conn = views[message.direction]
        conn.receive_data(message.wire)
        reader = conn.next_message()
        if reader is None:
            raise AssertionError("a whole recorded message did not parse")
        return reader
