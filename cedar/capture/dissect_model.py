"""The dissector's model: the records it produces and the plumbing every part of it shares.

:class:`DecodedMessage` and :class:`DissectedConversation` are what :func:`cedar.capture.dissect`
returns.  :class:`FlowBase` holds the per-conversation state (the decryptor, whether AES-GCM
is on) and the helpers the handshake part (:mod:`cedar.capture.dissect_handshake`) and the
payload part (:mod:`cedar.capture.dissect_payloads`) are written with: wait for the next
message, check its direction, read ads, annotate.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from cedar.auth.methods import names_of_bits
from cedar.capture.decrypt import Decryptor
from cedar.capture.errors import CaptureError, Undecodable
from cedar.capture.messages import WireMessage
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd, get_classad, get_handshake_ad
from cedar.errors import CedarError
from cedar.numbers import Command
from cedar.stream.primitives import MessageReader


def command_name(number: int | None) -> str:
    """``NAME(number)`` when the number is known, else the number."""
    if number is None:
        return "?"
    try:
        return f"{Command(number).name}({number})"
    except ValueError:
        return str(number)


def method_names(mask: int) -> str:
    return f"{mask:#x}" + (f" = {'|'.join(names_of_bits(mask))}" if mask else " (none)")


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def inline(ad: ClassAd, names: list[str] | None = None, limit: int = 8) -> str:
    """``{A = 1; B = "x"; …}`` with at most ``limit`` attributes (or just ``names``)."""
    chosen = [n for n in ad if names is None or n.lower() in {x.lower() for x in names}]
    shown = chosen[:limit]
    body = "; ".join(f"{n} = {ad.raw_text(n)}" for n in shown)
    more = len(ad) - len(shown)
    if more:
        body += f"; … +{more} more" if body else f"{more} attributes"
    return "{" + body + "}"


@dataclass
class DecodedMessage:
    """One message with what the dissector made of it."""

    conversation: int
    index: int
    direction: str
    offset: int
    frame: int
    time: float
    wire_size: int
    #: Payload bytes: the plaintext when known, else what the packets carried (IV, tag included).
    size: int
    packets: int
    encrypted: bool = False
    decrypted: bool = False
    kind: str = ""
    summary: str = ""
    #: Structured decode (JSON-friendly values).
    fields: dict[str, Any] = field(default_factory=dict)
    #: ClassAds in the message, labelled, for verbose output.
    ads: list[tuple[str, ClassAd]] = field(default_factory=list)
    #: Why the message could not be decoded (None when it was).
    problem: str | None = None
    wire: bytes = b""
    #: The decoded payload (plaintext), when known.
    payload: bytes | None = None
    #: Unframed bytes (a clear file body), not a packet.
    raw: bool = False

    def to_json(self, *, verbose: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; ``verbose`` adds the ads in full and the payload in hex."""
        out: dict[str, Any] = {
            "index": self.index,
            "direction": self.direction,
            "offset": self.offset,
            "frame": self.frame,
            "time": self.time,
            "wire_size": self.wire_size,
            "size": self.size,
            "packets": self.packets,
            "encrypted": self.encrypted,
            "decrypted": self.decrypted,
            "kind": self.kind,
            "summary": self.summary,
            "fields": self.fields,
        }
        if self.problem:
            out["problem"] = self.problem
        if verbose:
            out["ads"] = [
                {"label": label, "attributes": [[n, ad.raw_text(n)] for n in ad]}
                for label, ad in self.ads
            ]
            if self.payload is not None:
                out["payload_hex"] = self.payload.hex()
        return out


@dataclass
class DissectedConversation:
    """A conversation and its decoded messages."""

    number: int
    transport: str
    client: tuple[str, int]
    server: tuple[str, int]
    first_frame: int
    first_time: float
    #: The command the conversation ran (None if it could not be seen).
    command: int | None = None
    #: ``raw``, ``negotiated``, ``resumed`` or ``udp`` (how the command was started).
    start: str = ""
    #: Extra facts for the header line (shared-port id, method, user, session, ...).
    facts: dict[str, Any] = field(default_factory=dict)
    messages: list[DecodedMessage] = field(default_factory=list)
    #: The framing/capture error after the last message, if the capture breaks off.
    error: CaptureError | None = None
    #: Session keys learned in clear (a claim id in a connect-info reply) for the conversations
    #: that follow; never shown.
    learned_keys: list[bytes] = field(default_factory=list, repr=False)
    #: The AES key that opened this conversation's encrypted part (None: clear, or unopened);
    #: a replay re-protects recorded messages with it.  Never shown.
    session_key: bytes | None = field(default=None, repr=False)

    @property
    def command_name(self) -> str:
        return command_name(self.command)

    @property
    def label(self) -> str:
        (ch, cp), (sh, sp) = self.client, self.server
        return f"{ch}:{cp} → {sh}:{sp}" + (" (UDP)" if self.transport == "udp" else "")

    @property
    def problems(self) -> list[DecodedMessage]:
        return [m for m in self.messages if m.problem]

    def to_json(self, *, verbose: bool = False) -> dict[str, Any]:
        return {
            "conversation": self.number,
            "transport": self.transport,
            "client": f"{self.client[0]}:{self.client[1]}",
            "server": f"{self.server[0]}:{self.server[1]}",
            "first_frame": self.first_frame,
            "command": self.command,
            "command_name": self.command_name,
            "start": self.start,
            "facts": self.facts,
            "messages": [m.to_json(verbose=verbose) for m in self.messages],
            "error": str(self.error) if self.error else None,
        }


Flow = Generator[None, "tuple[WireMessage, DecodedMessage]", None]


class FlowBase:
    """The dissection state of one conversation and the helpers every part reads with."""

    def __init__(self, conv: DissectedConversation, keys: list[bytes]) -> None:
        self.conv = conv
        self.decryptor = Decryptor(list(keys))
        self.encrypting = False  # AES-GCM is on for the rest of the conversation
        self.legacy_key = False  # the server sent an AES key in the key message (spec 04 §1.4)

    # -- plumbing -----------------------------------------------------------------------------

    def next_message(self) -> Generator[None, tuple[WireMessage, DecodedMessage], DecodedMessage]:
        """Wait for the next message and prepare its reader (decrypting when needed)."""
        wire, decoded = yield
        if wire.raw:
            decoded.payload = wire.body  # a clear file body: never part of a transcript
        elif not self.encrypting:
            self.decryptor.clear(wire)
            decoded.payload = wire.body
        else:
            decoded.encrypted = True
            reader = self.decryptor.open(wire)
            if reader is not None:
                decoded.decrypted = True
                decoded.payload = reader.payload
                decoded.size = len(reader.payload)
        return decoded

    def reader(self, decoded: DecodedMessage) -> MessageReader | None:
        """A fresh reader over the message's plaintext, or None if it stays encrypted."""
        if decoded.payload is None:
            return None
        return MessageReader(decoded.payload, crypto=self.encrypting)

    def note(self, d: DecodedMessage, kind: str, summary: str, **fields: Any) -> None:
        d.kind = kind
        # One line per message: show raw newlines (e.g. in condor_q projections) as ⏎.
        d.summary = summary.replace("\n", "⏎").replace("\r", "␍")
        d.fields.update(fields)

    def encrypted_note(self, d: DecodedMessage, expected: str) -> None:
        """Describe a message that cannot be decrypted."""
        self.note(
            d,
            "ENCRYPTED",
            f"[AES-GCM, {d.size} bytes] {expected} (not decrypted: {self.decryptor.failure})",
            expected=expected,
        )

    def ad(
        self, r: MessageReader, label: str, d: DecodedMessage, *, handshake: bool = False
    ) -> ClassAd:
        try:
            ad = get_handshake_ad(r) if handshake else get_classad(r)
        except CedarError as exc:
            raise Undecodable(f"{label}: {exc}") from None
        d.ads.append((label, ad))
        return ad

    @staticmethod
    def end(r: MessageReader, what: str) -> None:
        if not r.at_end():
            raise Undecodable(f"{what}: {r.remaining} unexpected bytes left in the message")

    def expect(self, d: DecodedMessage, direction: str, what: str) -> MessageReader | None:
        """Check the direction; returns the reader (None when encrypted and not decrypted)."""
        if d.direction != direction:
            raise Undecodable(
                f"expected {what} from the {'client' if direction == C2S else 'server'}"
            )
        r = self.reader(d)
        if r is None:
            self.encrypted_note(d, what)
        return r

    @staticmethod
    def int_field(r: MessageReader, what: str) -> int:
        try:
            return r.get_int()
        except CedarError as exc:
            raise Undecodable(f"{what}: {exc}") from None

    def unexpected_rest(self) -> Flow:
        """Nothing more belongs to this conversation; anything that comes is flagged."""
        while True:
            yield from self.next_message()
            raise Undecodable("message after the end of the exchange")

    def opaque(self, what: str) -> Flow:
        while True:
            d = yield from self.next_message()
            self.note(d, "OPAQUE", f"{what}, {d.size} bytes")

    # -- the shape every command payload starts with ---------------------------------------------

    def request(
        self,
        command: int | None,
        first: tuple[DecodedMessage, MessageReader] | None,
        what: str,
    ) -> Generator[
        None, tuple[WireMessage, DecodedMessage], tuple[DecodedMessage, MessageReader | None]
    ]:
        """The request message: the rest of a raw start, or the next client message."""
        if first is not None:
            return first
        d = yield from self.next_message()
        return d, self.expect(d, C2S, what)

    def note_request(self, d: DecodedMessage, command: int | None, what: str, ad: ClassAd) -> None:
        self.note(
            d,
            "REQUEST" if d.kind != "RAW_COMMAND" else "RAW_COMMAND",
            (
                f"RAW {command_name(command)} "
                if d.kind == "RAW_COMMAND"
                else f"{command_name(command)} "
            )
            + f"{what} "
            + inline(ad),
            request=[[n, ad.raw_text(n)] for n in ad],
        )

    def request_ad(
        self,
        command: int | None,
        first: tuple[DecodedMessage, MessageReader] | None,
        what: str,
        *,
        name: str | None = None,
        label: str | None = None,
    ) -> Generator[None, tuple[WireMessage, DecodedMessage], tuple[DecodedMessage, ClassAd] | None]:
        """The request message holding one ad (called ``name``, default ``what``), read and,
        with ``label``, noted; ``None`` when it stays encrypted, after the rest of the
        conversation was named by :meth:`payload_encrypted`.  The shape every ad-carrying
        command starts with, in one place."""
        d, r = yield from self.request(command, first, what)
        if r is None:
            yield from self.payload_encrypted(command)
            return None
        ad = self.ad(r, name or what, d)
        self.end(r, name or what)
        if label is not None:
            self.note_request(d, command, label, ad)
        return d, ad

    def reply_ad(
        self, what: str
    ) -> Generator[None, tuple[WireMessage, DecodedMessage], tuple[DecodedMessage, ClassAd | None]]:
        """The server's next message holding one ad, read; the ad is ``None`` when the message
        stays encrypted (already noted so), and the caller decides what follows."""
        d = yield from self.next_message()
        r = self.expect(d, S2C, what)
        if r is None:
            return d, None
        ad = self.ad(r, what, d)
        self.end(r, what)
        return d, ad

    def payload_encrypted(self, command: int | None) -> Flow:
        """Without the key: name what each encrypted message most likely is."""
        client_seen = 0
        name = command_name(command)
        while True:
            d = yield from self.next_message()
            if d.direction == S2C:
                expected = f"{name} reply"
            else:
                expected = f"{name} request" if client_seen == 0 else f"{name} message"
                client_seen += 1
            if d.decrypted:
                # A key learned late (cannot happen today) would land here; keep it honest.
                self.note(d, "DECRYPTED", f"decrypted {d.size} bytes ({expected})")
            else:
                self.encrypted_note(d, expected)

    # -- provided by the payload part (cedar.capture.dissect_payloads) --------------------------

    def payload(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        """Decode the command's own exchange; ``first`` is a raw start's request message."""
        raise NotImplementedError
