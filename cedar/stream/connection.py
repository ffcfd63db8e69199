"""The sans-I/O state of one CEDAR TCP connection.

:class:`CedarConnection` turns outgoing message payloads into wire bytes and incoming wire bytes
into complete messages, applying AES-GCM once a key is installed and keeping the handshake
transcript digests the first encrypted packet of each direction authenticates (spec 01 §4.2.4).
It never touches a socket: drivers feed it bytes and write out what it returns (the design of
h11).  Incoming bytes are only parsed when a message is asked for, so a key installed between two
messages applies to exactly the packets that follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cedar.errors import ConnectionClosed, NotCedarPeer, ProtocolError
from cedar.stream.crypto import TAG_SIZE, ZERO_DIGEST, AesGcmState, sha256
from cedar.stream.framing import (
    HEADER_SIZE,
    MAX_END_FLAG,
    MAX_PACKET_PAYLOAD,
    decode_header,
    encode_header,
    header_fields,
    split_payload,
)
from cedar.stream.primitives import MessageReader, MessageWriter

if TYPE_CHECKING:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

#: The reference stops feeding transcript digests after about this much data (spec 01 §4.2.4).
TRANSCRIPT_LIMIT = 1 << 20
#: Default bound on one reassembled incoming message; a peer announcing more is cut off.
DEFAULT_MAX_MESSAGE = 64 << 20


class _Transcript:
    """SHA-256 over the plaintext packets of one direction, before encryption starts."""

    __slots__ = ("_hash", "_size")

    def __init__(self) -> None:
        self._hash: hashes.Hash | None = None  # made on first use (most stay unused)
        self._size = 0

    def feed(self, packet: bytes) -> None:
        if self._size < TRANSCRIPT_LIMIT:
            if self._hash is None:
                self._hash = sha256()
            self._hash.update(packet)
            self._size += len(packet)

    def digest(self) -> bytes:
        if self._hash is None or not self._size:
            return ZERO_DIGEST
        return self._hash.copy().finalize()


class CedarConnection:
    """Framing, crypto and transcript state of one connection, in one role-agnostic object."""

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE,
        max_packet_size: int = MAX_PACKET_PAYLOAD,
    ) -> None:
        self.max_message_size = max_message_size
        #: The largest packet taken (the spec's 1 MiB; clients take more: CLIENT_MAX_PACKET).
        self.max_packet_size = max_packet_size
        self._inbox = bytearray()
        self._inbox_offset = 0  # stream offset of _inbox[0], for error messages
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._aes: AesGcmState | None = None
        self._sent = _Transcript()
        self._received = _Transcript()
        self._frozen: tuple[bytes, bytes] | None = None
        self._eof = False
        self._streaming = False  # part of a message was handed out, the rest is pending

    # -- crypto state -------------------------------------------------------------------------

    @property
    def encrypted(self) -> bool:
        """True once an AES key is installed: every later packet is protected, strings prefixed."""
        return self._aes is not None

    def install_aes_key(
        self, key: bytes, *, send_iv: bytes | None = None, aead: AESGCM | None = None
    ) -> None:
        """Switch both directions to AES-256-GCM, permanently (spec 01 §4.1).

        ``aead`` is the cipher object for ``key`` when the caller keeps one (a cached session).
        """
        self._aes = AesGcmState(key, send_iv=send_iv, aead=aead)

    def reset_transcript(self) -> None:
        """Restart the digests (after sending a shared-port preamble, spec 03 §8.5)."""
        self._sent = _Transcript()
        self._received = _Transcript()

    def _transcript(self, *, sending: bool) -> bytes:
        if self._frozen is None:
            self._frozen = (self._sent.digest(), self._received.digest())
        sent, received = self._frozen
        return sent + received if sending else received + sent

    def transcript_digests(self) -> tuple[bytes, bytes]:
        """``(D_sent, D_received)`` as they stand (frozen once encryption started)."""
        if self._frozen is not None:
            return self._frozen
        return self._sent.digest(), self._received.digest()

    # -- sending ------------------------------------------------------------------------------

    def writer(self) -> MessageWriter:
        """A message builder in the string mode the connection is in."""
        return MessageWriter(crypto=self.encrypted)

    def send_message(self, message: MessageWriter | bytes) -> bytes:
        """The wire bytes of one whole message (one packet when it fits in 1 MiB)."""
        payload = message.getvalue() if isinstance(message, MessageWriter) else bytes(message)
        if self._aes is None:
            if 0 < len(payload) <= MAX_PACKET_PAYLOAD:  # the common case: one packet
                packet = encode_header(True, len(payload)) + payload
                self._sent.feed(packet)
                return packet
            pieces = split_payload(payload, MAX_PACKET_PAYLOAD)
            out = bytearray()
            for index, piece in enumerate(pieces):
                packet = encode_header(index == len(pieces) - 1, len(piece)) + piece
                self._sent.feed(packet)
                out += packet
            return bytes(out)
        direction = self._aes.send
        out = bytearray()
        # Leave room for the IV and tag inside the 1 MiB packet limit.
        pieces = split_payload(payload, MAX_PACKET_PAYLOAD - 2 * TAG_SIZE)
        for index, piece in enumerate(pieces):
            transcript = self._transcript(sending=True) if direction.counter == 0 else b""
            out += direction.seal(index == len(pieces) - 1, piece, transcript)
        return bytes(out)

    def send_raw(self, data: bytes) -> bytes:
        """Bytes that go on the wire as they are, between packets (clear file bodies, 01 §7.2)."""
        if self._aes is not None:
            raise ProtocolError("raw bytes cannot be sent on an encrypted connection")
        return bytes(data)

    def detached(self) -> CedarConnection:
        """A fresh state for the same byte stream: no key, new framing and transcripts, the
        bytes received but not yet read kept.

        A CCB relay (spec 09 §7.3) drops the broker session's crypto right after the replayed
        hello; the end-to-end command then starts over on the same TCP connection.
        """
        if self._partial_size or self._streaming:
            raise ProtocolError("cannot drop the connection's state in the middle of a message")
        fresh = CedarConnection(max_message_size=self.max_message_size)
        fresh._inbox += self._inbox
        fresh._eof = self._eof
        return fresh

    # -- receiving ----------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes read from the socket; ``b""`` means the peer closed the connection."""
        if data:
            self._inbox += data
        else:
            self._eof = True

    @property
    def received_bytes(self) -> int:
        """Bytes received from the peer so far (0: it has said nothing on this connection)."""
        return self._inbox_offset + len(self._inbox)

    @property
    def buffered_bytes(self) -> int:
        """Bytes received but not yet returned as messages (what a peer makes us hold)."""
        return len(self._inbox) + self._partial_size

    @property
    def peer_closed(self) -> bool:
        """True once EOF was fed in."""
        return self._eof

    def next_message(self, part_size: int | None = None) -> MessageReader | None:
        """The next complete message, or ``None`` if more bytes are needed.

        With ``part_size``, the message is handed out in pieces instead (for replies of any
        size, decoded as they arrive): a reader over the plaintext received so far as soon as it
        holds ``part_size`` bytes, with ``complete`` false until the piece that ends the
        message.  Only whole messages count against :attr:`max_message_size`.

        Raises :class:`ConnectionClosed` if the peer closed before a message was complete, and
        :class:`ProtocolError`/:class:`IntegrityError` for a malformed or forged packet.
        """
        inbox = self._inbox
        if not self._partial and self._inbox_offset and len(inbox) > HEADER_SIZE:
            # The commonest case in a reply of many small messages (a job query sends one a
            # job): a whole one-packet message at hand and nothing pending.  The same steps as
            # the loop below, without its generality; anything else goes there.
            last, length = header_fields(inbox)
            stop = HEADER_SIZE + length
            if (
                0 < last <= MAX_END_FLAG
                and 0 < length <= self.max_packet_size
                and len(inbox) >= stop
                and length <= self.max_message_size
            ):
                aes = self._aes
                if aes is None:
                    packet = bytes(inbox[:stop])
                    self._received.feed(packet)
                    plaintext = packet[HEADER_SIZE:]
                elif aes.receive.counter:
                    plaintext = aes.receive.open(
                        bytes(inbox[:HEADER_SIZE]), bytes(inbox[HEADER_SIZE:stop]), b""
                    )
                else:
                    plaintext = None  # the first encrypted packet: the loop's care
                if plaintext is not None:
                    del inbox[:stop]
                    self._inbox_offset += stop
                    self._streaming = False
                    return MessageReader(plaintext, crypto=aes is not None, complete=True)
        while True:
            if part_size is not None and self._partial_size >= part_size:
                return self._take_partial(complete=False)
            inbox = self._inbox
            if len(inbox) < HEADER_SIZE:
                return self._need_more(part_size)
            header = bytes(inbox[:HEADER_SIZE])
            if self._inbox_offset == 0:
                last, length = _first_header(header, self.max_packet_size)
            else:
                last, length = decode_header(
                    header, offset=self._inbox_offset, limit=self.max_packet_size
                )
            if len(inbox) < HEADER_SIZE + length:
                return self._need_more(part_size)
            body = bytes(inbox[HEADER_SIZE : HEADER_SIZE + length])
            del inbox[: HEADER_SIZE + length]
            self._inbox_offset += HEADER_SIZE + length
            if self._aes is None:
                self._received.feed(header + body)
                plaintext = body
            else:
                direction = self._aes.receive
                transcript = self._transcript(sending=False) if direction.counter == 0 else b""
                plaintext = direction.open(header, body, transcript)
            self._partial_size += len(plaintext)
            if part_size is None and self._partial_size > self.max_message_size:
                raise ProtocolError(
                    f"incoming message exceeds the {self.max_message_size}-byte limit; "
                    "replies of any size are read with part_size",
                    offset=self._inbox_offset,
                )
            self._partial.append(plaintext)
            if last:
                return self._take_partial(complete=True)

    def early_piece(self, min_size: int) -> MessageReader | None:
        """The plaintext of a streamed message received so far, if it holds ``min_size`` bytes.

        For a driver whose socket has nothing more to read right now: decoding what has arrived
        while the peer is still producing beats waiting for a whole ``part_size`` piece.  Call
        only after :meth:`next_message` with ``part_size`` returned ``None``.
        """
        if self._partial_size >= min_size:
            return self._take_partial(complete=False)
        return None

    def _need_more(self, part_size: int | None) -> MessageReader | None:
        """No further whole packet: wait, or (peer closed) hand out what a stream has, or fail."""
        if self._eof and part_size is not None and self._partial:
            return self._take_partial(complete=False)
        self._check_eof()
        return None

    def _take_partial(self, *, complete: bool) -> MessageReader:
        """The plaintext gathered so far as one reader; the next piece starts empty."""
        self._streaming = not complete
        partial = self._partial
        payload = partial[0] if len(partial) == 1 else b"".join(partial)
        partial.clear()
        self._partial_size = 0
        return MessageReader(payload, crypto=self.encrypted, complete=complete)

    def next_raw(self, max_bytes: int) -> bytes | None:
        """Up to ``max_bytes`` unframed bytes (a clear file body), or ``None`` if none are buffered.

        Only valid between messages on a clear connection; EOF raises :class:`ConnectionClosed`.
        """
        if self._aes is not None or self._partial:
            raise ProtocolError("raw bytes expected where the stream is framed")
        if not self._inbox:
            if self._eof:
                raise ConnectionClosed(
                    "connection closed by the peer in the middle of a file", mid_message=True
                )
            return None
        data = bytes(self._inbox[:max_bytes])
        del self._inbox[:max_bytes]
        self._inbox_offset += len(data)
        return data

    def _check_eof(self) -> None:
        """More bytes are needed: fine unless the peer already closed."""
        if self._eof:
            if self._inbox or self._partial or self._streaming:
                raise ConnectionClosed(
                    "connection closed by the peer in the middle of a packet or message",
                    mid_message=True,
                )
            raise ConnectionClosed("connection closed by the peer")

    def __repr__(self) -> str:
        mode = "AES-GCM" if self._aes else "plain"
        return f"<CedarConnection {mode}>"


def _first_header(header: bytes, limit: int) -> tuple[bool, int]:
    """The first packet header from a peer: when it is not one, the peer is not a CEDAR
    daemon at all (``HTTP/1.1 400`` from a web server gives an "end flag" of 0x48)."""
    try:
        return decode_header(header, offset=0, limit=limit)
    except ProtocolError as exc:
        raise NotCedarPeer(
            f"this is not a CEDAR daemon: its first bytes, {header!r}, are no CEDAR packet ({exc})"
        ) from None
