"""Dissecting CCB (spec 09): ``CCB_REGISTER`` (67), ``CCB_REQUEST`` (68), ``CCB_REVERSE_CONNECT``
(69).

A registration is a long conversation: the registration ad, the broker's id and cookie, then
heartbeats (``Command = 441``) both ways, requests the broker forwards (``Command = 68``) and
the target's results.  A request is the requester's ad and the broker's reply; in streaming
mode the reply says ``ProxyMode``, the target's hello follows and the rest is relayed bytes.
A reversed connection is the hello, then the requester's command with the roles swapped (the
TCP client is the CEDAR server): shown as such here, replayed by
:mod:`cedar.capture.replay_ccb`.

On a session with a legacy cipher (BLOWFISH) and encryption off, the private ``ClaimId`` is
the one encrypted item of a clear message (02 §2.7): :func:`ccb_ad` reads the ad around it
and shows the secret as its size.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import TYPE_CHECKING

from cedar.capture.dissect_model import inline
from cedar.capture.errors import Undecodable
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd, get_classad
from cedar.classad_wire.wire import SECRET_MARKER
from cedar.errors import CedarError
from cedar.numbers import Command
from cedar.stream.primitives import MessageReader, MessageWriter, decode_text

if TYPE_CHECKING:
    from cedar.capture.dissect_model import DecodedMessage, FlowBase
    from cedar.capture.messages import WireMessage

Step = Generator[None, "tuple[WireMessage, DecodedMessage]", None]

#: A line of an ad: a name, ``=``, a value (what tells the clear items after a secret).
_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]* = ")
#: The only private attribute of CCB's ads (spec 09 §1.2): the name of an unreadable secret.
SECRET_NAME = "ClaimId"
#: The other attributes of CCB's ads (spec 09 §1.2): the first clear line after a secret is
#: one of them (a secret's last bytes may look like the start of a name).
_NAMES = frozenset({"Command", "CCBID", "Name", "MyAddress", "RequestID", "Result",
                    "ErrorString", "CCBStreamingRequired", "ProxyMode"})  # fmt: skip


def _clear_tail(data: bytes, items: int) -> list[str] | None:
    """``items`` clear lines and the two empty type strings, exactly filling ``data``."""
    reader = MessageReader(data)
    try:
        lines = [decode_text(reader.get_string_bytes()) for _ in range(items)]
        types = (reader.get_string_bytes(), reader.get_string_bytes())
    except CedarError:
        return None
    if types != (b"", b"") or not reader.at_end():
        return None
    if lines and lines[0].partition(" = ")[0] not in _NAMES:
        return None
    return lines if all(_LINE.match(line) for line in lines) else None


def ccb_ad(payload: bytes, offset: int = 0) -> tuple[ClassAd, int]:
    """The ad at ``offset`` of a CCB message and the size of a secret that could not be read
    (0 when there is none): a ``ZKM`` item followed by a clear line is read as usual; one
    followed by bytes under a legacy cipher is measured by the clear items after it."""
    reader = MessageReader(payload[offset:])
    count = reader.get_int()
    if not 0 <= count <= 1000:
        raise Undecodable(f"CCB ad: attribute count {count} outside 0..1000")
    lines: list[str] = []
    secret = 0
    while len(lines) < count:
        raw = reader.get_nullable_string_bytes()
        if raw != SECRET_MARKER:
            lines.append(decode_text(raw or b""))
            continue
        start = reader.offset
        try:
            text = decode_text(reader.get_string_bytes())
        except CedarError:
            text = ""
        if _LINE.match(text) and text.isprintable():
            lines.append(text)
            continue
        rest = payload[offset + start :]
        left = count - len(lines) - 1
        for size in range(9, len(rest) + 1):  # 8 bytes of length, then at least one
            tail = _clear_tail(rest[size:], left)
            if tail is not None:
                secret = size
                lines += [f'{SECRET_NAME} = "<secret: {size} bytes under a legacy cipher>"', *tail]
                return _ad(lines), secret
        raise Undecodable("CCB ad: a secret item whose end cannot be found")
    return _ad(lines), secret


def _ad(lines: list[str]) -> ClassAd:
    writer = MessageWriter().put_int(len(lines)).put_strings(lines).put_string("").put_string("")
    return get_classad(MessageReader(writer.getvalue()))


def _read(flow: FlowBase, r: MessageReader, label: str, d: DecodedMessage) -> ClassAd:
    if r.crypto:  # AES-GCM: secrets are plain lines, the usual reader takes them
        return flow.ad(r, label, d)
    ad, _secret = ccb_ad(r.get_bytes(r.remaining))
    d.ads.append((label, ad))
    return ad


def _first(
    flow: FlowBase,
    command: int | None,
    first: tuple[DecodedMessage, MessageReader] | None,
    what: str,
) -> Generator[None, tuple[WireMessage, DecodedMessage], tuple[DecodedMessage, ClassAd] | None]:
    """The ad a CCB conversation starts with (None: encrypted, the rest named so)."""
    d, r = yield from flow.request(command, first, what)
    if r is None:
        yield from flow.payload_encrypted(command)
        return None
    return d, _read(flow, r, what, d)


def register(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """67: the registration, the id and cookie, then the held connection's messages."""
    started = yield from _first(flow, command, first, "registration")
    if started is None:
        return
    d, ad = started
    again = " again as " + str(ad["CCBID"]) if "CCBID" in ad else ""
    flow.note(d, "CCB_REGISTER", f"register{again}: {inline(ad)}")
    replied = False
    while True:
        d = yield from flow.next_message()
        r = flow.reader(d)
        if r is None:
            flow.encrypted_note(d, "CCB message on the held connection")
            continue
        ad = _read(flow, r, "CCB message", d)
        kind = ad.get("Command") if "Command" in ad else None
        if kind == Command.ALIVE:
            flow.note(d, "CCB_ALIVE", "heartbeat {Command = 441}")
        elif d.direction == S2C and not replied:
            replied = True
            flow.note(d, "CCB_REGISTERED", f"registered: {inline(ad)}", ccbid=ad.get("CCBID"))
        elif d.direction == S2C:
            flow.note(d, "CCB_FORWARDED", f"forwarded request {inline(ad)}")
        else:
            flow.note(d, "CCB_RESULT", f"result {inline(ad)}")


def request(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """68: the request, the broker's reply; in streaming mode the relayed hello and bytes."""
    started = yield from _first(flow, command, first, "CCB request")
    if started is None:
        return
    d, ad = started
    flow.note_request(d, command, "for", ad)
    d = yield from flow.next_message()
    r = flow.expect(d, S2C, "the broker's reply")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    reply = _read(flow, r, "CCB reply", d)
    flow.note(d, "CCB_REPLY", f"reply {inline(reply)}", result=reply.get("Result"))
    if reply.get("ProxyMode") is not True:
        yield from flow.unexpected_rest()
        return
    d = yield from flow.next_message()
    r = flow.expect(d, S2C, "the relayed hello")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    hello = flow.int_field(r, "hello command")
    ad = _read(flow, r, "relayed hello", d)
    flow.note(d, "CCB_HELLO", f"relayed hello I({hello}) {inline(ad)}", command=hello)
    flow.encrypting = False  # the relay starts afresh: clear framing (spec 09 §7.3)
    yield from _swapped(flow, "relayed")


def reverse(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """69: the hello, then the requester's command (roles swapped, spec 09 §8)."""
    started = yield from _first(flow, command, first, "hello")
    if started is None:
        return
    d, ad = started
    flow.note(d, "CCB_HELLO", f"hello {inline(ad)}")
    yield from _swapped(flow, "reversed")


def held_midstream(payload: bytes) -> bool:
    """Whether a conversation that starts with this message is a registration's held
    connection recorded after it was opened (a forwarded request, a heartbeat or a result)."""
    try:
        ad, _secret = ccb_ad(payload)
    except (CedarError, Undecodable, UnicodeError, ValueError):
        return False
    command = ad.get("Command") if "Command" in ad else None
    return command in (Command.CCB_REQUEST, Command.ALIVE) or ("Result" in ad and "RequestID" in ad)


def held(flow: FlowBase, d: DecodedMessage, r: MessageReader) -> Step:
    """A held connection from its middle: which side is the broker is read from each ad."""
    flow.conv.start = "held"
    flow.conv.command = Command.CCB_REGISTER
    while True:
        ad = _read(flow, r, "CCB message", d)
        kind = ad.get("Command") if "Command" in ad else None
        if kind == Command.ALIVE:
            flow.note(d, "CCB_ALIVE", "heartbeat {Command = 441}")
        elif kind == Command.CCB_REQUEST:
            flow.note(d, "CCB_FORWARDED", f"forwarded request {inline(ad)}", sender="broker")
        else:
            flow.note(d, "CCB_RESULT", f"result {inline(ad)}", sender="target")
        d = yield from flow.next_message()
        r = flow.reader(d)  # type: ignore[assignment]
        if r is None:
            flow.encrypted_note(d, "CCB message on the held connection")
            return


def _swapped(flow: FlowBase, how: str) -> Step:
    while True:
        d = yield from flow.next_message()
        who = "requester" if (d.direction == S2C) == (how == "reversed") else "target"
        if how == "relayed":
            who = "requester" if d.direction == C2S else "target"
        flow.note(d, "CCB_" + how.upper(), f"{how}: from the {who}, {d.size} bytes", sender=who)


__all__ = ["SECRET_NAME", "ccb_ad", "held", "held_midstream", "register", "request", "reverse"]
