"""The CEDAR dissector: what each recorded message means.

Dissection is stateful per conversation: a message can only be read knowing what came before
(raw or negotiated start, which command runs, which authentication method was chosen, whether
AES-GCM is on, which QMGMT call a reply answers).  :class:`_Flow` is written like the protocol
coroutines of :mod:`cedar.stream.protocol`: a generator that is sent each message in the order
the peers saw them and annotates it.  A message that does not fit is reported in place and the
rest of the conversation is shown undecoded, so one surprise never hides the whole transcript.

Numbers come from :mod:`cedar.numbers`, method bits from :mod:`cedar.auth.methods`,
ClassAds are read with :mod:`cedar.classad_wire`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import struct
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from cedar.auth.methods import names_of_bits
from cedar.capture import dissect_transfer
from cedar.capture.decrypt import Decryptor
from cedar.capture.errors import CaptureError
from cedar.capture.messages import Conversation, WireMessage, load_conversations
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd, get_classad, get_handshake_ad
from cedar.errors import CedarError
from cedar.numbers import (
    FORCE_AUTHENTICATION,
    KEY_PROTOCOLS,
    SET_ATTRIBUTE_FLAG_NAMES,
    Command,
    JobAction,
    QmgmtCall,
    expects_reply,
    read_arguments,
)
from cedar.stream.primitives import MessageReader

_UDP_SECURITY_MAGIC = b"CRAP"


def command_name(number: int | None) -> str:
    """``NAME(number)`` when the number is known, else the number."""
    if number is None:
        return "?"
    try:
        return f"{Command(number).name}({number})"
    except ValueError:
        return str(number)


def _qmgmt_name(number: int) -> str:
    try:
        return QmgmtCall(number).name
    except ValueError:
        return f"rpc {number}"


def _action_label(action: object) -> str:
    """``remove-x`` for JobAction 4 (the spelling of ``cedar`` action commands)."""
    if isinstance(action, int) and not isinstance(action, bool):
        try:
            return re.sub(r"(?<=[a-z])(?=[A-Z])", "-", JobAction(action).name).lower()
        except ValueError:
            pass
    return str(action)


def _flag_names(flags: int) -> str:
    names = [name for bit, name in SET_ATTRIBUTE_FLAG_NAMES.items() if flags & bit]
    rest = flags & ~sum(SET_ATTRIBUTE_FLAG_NAMES)
    if rest:
        names.append(f"{rest:#x}")
    return "|".join(names) or "0"


def _methods(mask: int) -> str:
    return f"{mask:#x}" + (f" = {'|'.join(names_of_bits(mask))}" if mask else " (none)")


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


class _Undecodable(Exception):
    """A message does not have the layout the conversation state predicts."""


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


class _Flow:
    """The dissection state machine of one conversation."""

    def __init__(self, conv: DissectedConversation, keys: list[bytes]) -> None:
        self.conv = conv
        self.decryptor = Decryptor(list(keys))
        self.encrypting = False  # AES-GCM is on for the rest of the conversation
        self._legacy_key = False  # the server sent an AES key in the key message (spec 04 §1.4)

    # -- plumbing -----------------------------------------------------------------------------

    def _next(self) -> Generator[None, tuple[WireMessage, DecodedMessage], DecodedMessage]:
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
            raise _Undecodable(f"{label}: {exc}") from None
        d.ads.append((label, ad))
        return ad

    @staticmethod
    def end(r: MessageReader, what: str) -> None:
        if not r.at_end():
            raise _Undecodable(f"{what}: {r.remaining} unexpected bytes left in the message")

    def expect(self, d: DecodedMessage, direction: str, what: str) -> MessageReader | None:
        """Check the direction; returns the reader (None when encrypted and not decrypted)."""
        if d.direction != direction:
            raise _Undecodable(
                f"expected {what} from the {'client' if direction == C2S else 'server'}"
            )
        r = self.reader(d)
        if r is None:
            self.encrypted_note(d, what)
        return r

    # -- the conversation ---------------------------------------------------------------------

    def run(self) -> Flow:
        d = yield from self._next()
        if self.conv.transport == "udp":
            yield from self.udp(d)
            return
        r = self.expect(d, C2S, "the client's first message")
        assert r is not None
        cmd = self._int(r, "command")
        if cmd == Command.SHARED_PORT_CONNECT:
            target = r.get_string()
            client_name = r.get_string()
            deadline = r.get_int()
            count = r.get_int()
            extra = [r.get_string() for _ in range(max(0, min(count, 100)))]
            self.end(r, "shared-port request")
            self.note(
                d,
                "SHARED_PORT_CONNECT",
                f"SHARED_PORT_CONNECT(75) id={_quote(target)} client={_quote(client_name)} "
                f"deadline={deadline}" + (f" extra={extra}" if extra else ""),
                target=target,
                client_name=client_name,
                deadline=deadline,
                extra=extra,
            )
            self.conv.facts["shared_port_id"] = target
            self.decryptor.history[-1].preamble = True
            d = yield from self._next()
            r = self.expect(d, C2S, "the command start")
            assert r is not None
            cmd = self._int(r, "command")
        if cmd == Command.DC_AUTHENTICATE:
            yield from self.negotiated(d, r)
        else:
            yield from self.raw(d, r, cmd)

    @staticmethod
    def _int(r: MessageReader, what: str) -> int:
        try:
            return r.get_int()
        except CedarError as exc:
            raise _Undecodable(f"{what}: {exc}") from None

    # -- starts --------------------------------------------------------------------------------

    def raw(self, d: DecodedMessage, r: MessageReader, cmd: int) -> Flow:
        self.conv.start = "raw"
        self.conv.command = cmd
        if cmd in FORCE_AUTHENTICATION and r.remaining == 8:
            mask = r.get_int()
            self.note(
                d,
                "RAW_COMMAND",
                f"RAW {command_name(cmd)} + in-band authentication, methods {_methods(mask)}",
                command=cmd,
                methods=mask,
            )
            ok = yield from self.authentication(None, key_message=False, first_mask=mask)
            if not ok:
                return
            yield from self.payload(cmd, None)
            return
        self.note(d, "RAW_COMMAND", f"RAW {command_name(cmd)}", command=cmd)
        yield from self.payload(cmd, (d, r))

    def negotiated(self, d: DecodedMessage, r: MessageReader) -> Flow:
        ad = self.ad(r, "security policy", d, handshake=True)
        self.end(r, "DC_AUTHENTICATE")
        command = ad.get("Command")
        auth_command = ad.get("AuthCommand")
        command = command if isinstance(command, int) else None
        resume = str(ad.get("UseSession", "")).upper().startswith("Y")
        self.conv.start = "resumed" if resume else "negotiated"
        self.conv.command = command
        if isinstance(auth_command, int):
            self.conv.facts["auth_command"] = command_name(auth_command)
        shown = [
            "AuthCommand",
            "AuthMethods",
            "CryptoMethods",
            "Authentication",
            "Encryption",
            "Integrity",
            "NewSession",
            "Sid",
            "ResumeResponse",
            "IssuerKeys",
            "Subsystem",
        ]
        extra = " ".join(
            f"{name}={ad.raw_text(name)}"
            if name != "AuthCommand"
            else f"AuthCommand={command_name(ad.get(name))}"
            for name in shown
            if name in ad
        )
        label = "resume session" if resume else "new session"
        self.note(
            d,
            "DC_AUTHENTICATE",
            f"DC_AUTHENTICATE ({label}) Command={command_name(command)} {extra}".rstrip(),
            command=command,
            resume=resume,
            ecdh="ECDHPublicKey" in ad,
        )
        if resume:
            self.conv.facts["session"] = ad.get("Sid")
            yield from self.resumption(ad, command)
            return
        client_ecdh = "ECDHPublicKey" in ad
        d = yield from self._next()
        r2 = self.expect(d, S2C, "the server's security response")
        assert r2 is not None
        r = r2
        m2 = self.ad(r, "security response", d, handshake=True)
        self.end(r, "security response")
        shown = [
            "Authentication",
            "Encryption",
            "Integrity",
            "AuthMethodsList",
            "CryptoMethods",
            "CryptoMethodsList",
            "AuthRequired",
            "SessionDuration",
            "SessionLease",
            "IssuerKeys",
            "TrustDomain",
        ]
        self.note(
            d,
            "SECURITY_RESPONSE",
            "SECURITY RESPONSE "
            + " ".join(f"{name}={m2.raw_text(name)}" for name in shown if name in m2),
        )
        authenticate = str(m2.get("Authentication", "")).upper().startswith("Y")
        crypto = str(m2.get("CryptoMethods", "")).upper()
        encryption = str(m2.get("Encryption", "")).upper().startswith("Y")
        if authenticate:
            ok = yield from self.authentication(m2, key_message=True)
            if not ok and m2.get("AuthRequired", True) is not False:
                return
        if crypto == "AES" and (client_ecdh and "ECDHPublicKey" in m2 or self._legacy_key):
            self.encrypting = True
        elif crypto in ("BLOWFISH", "3DES") and encryption:
            self.conv.facts["legacy_cipher"] = crypto
            yield from self.opaque(f"{crypto}-encrypted (legacy cipher, not decoded)")
            return
        self.conv.facts["encrypted"] = self.encrypting
        yield from self.post_auth(command)

    def post_auth(self, command: int | None) -> Flow:
        d = yield from self._next()
        r = self.expect(d, S2C, "post-authentication ad")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        p1 = self.ad(r, "post-authentication", d)
        self.end(r, "post-authentication ad")
        code = str(p1.get("ReturnCode", "AUTHORIZED"))
        valid = str(p1.get("ValidCommands", ""))
        self.conv.facts.update(user=p1.get("User"), session=p1.get("Sid"), return_code=code)
        self.note(
            d,
            "POST_AUTH",
            f"POST-AUTH ReturnCode={_quote(code)} User={_quote(str(p1.get('User', '')))} "
            f"Sid={_quote(str(p1.get('Sid', '')))} "
            f"ValidCommands={len([c for c in valid.split(',') if c])} commands"
            + (" TriedAuthentication=true" if p1.get("TriedAuthentication") is True else ""),
            return_code=code,
        )
        if code.upper() != "AUTHORIZED":
            yield from self.unexpected_rest()
            return
        if command == Command.DC_SEC_QUERY:
            d = yield from self._next()
            r = self.expect(d, S2C, "DC_SEC_QUERY result")
            if r is None:
                yield from self.unexpected_rest()
                return
            result = self.ad(r, "authorization result", d)
            self.end(r, "DC_SEC_QUERY result")
            self.note(
                d,
                "SEC_QUERY_RESULT",
                "DC_SEC_QUERY result " + " ".join(f"{n}={result.raw_text(n)}" for n in result),
                authorized=result.get("AuthorizationSucceeded"),
            )
            yield from self.unexpected_rest()
            return
        if command == Command.DC_AUTHENTICATE:
            yield from self.unexpected_rest()
            return
        yield from self.payload(command, None)

    def resumption(self, request: ClassAd, command: int | None) -> Flow:
        if request.get("ResumeResponse") is True:
            d = yield from self._next()
            r = self.expect(d, S2C, "resume response")
            assert r is not None
            r2 = self.ad(r, "resume response", d, handshake=True)
            self.end(r, "resume response")
            code = str(r2.get("ReturnCode", ""))
            self.note(
                d, "RESUME_RESPONSE", f"RESUME RESPONSE ReturnCode={_quote(code)}", return_code=code
            )
            if code.upper() not in ("", "AUTHORIZED"):
                yield from self.unexpected_rest()
                return
        if str(request.get("CryptoMethods", "")).upper() == "AES":
            self.encrypting = True
        self.conv.facts["encrypted"] = self.encrypting
        yield from self.payload(command, None)

    # -- authentication ------------------------------------------------------------------------

    def authentication(
        self, m2: ClassAd | None, *, key_message: bool, first_mask: int | None = None
    ) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        """The method negotiation loop (spec 04 §1.3); True when a method succeeded."""
        mask = first_mask
        pending: DecodedMessage | None = None
        while True:
            if mask is None:
                d = pending if pending is not None else (yield from self._next())
                pending = None
                r = self.expect(d, C2S, "authentication method mask")
                assert r is not None
                mask = self._int(r, "method mask")
                self.end(r, "method mask")
                self.note(d, "AUTH_METHODS", f"AUTH client offers {_methods(mask)}", mask=mask)
            d = yield from self._next()
            r = self.expect(d, S2C, "chosen authentication method")
            assert r is not None
            chosen = self._int(r, "chosen method")
            self.end(r, "chosen method")
            self.note(d, "AUTH_CHOSEN", f"AUTH server chooses {_methods(chosen)}", chosen=chosen)
            mask = None
            if chosen == 0:
                self.conv.facts["authentication"] = "failed"
                return False
            method = "|".join(names_of_bits(chosen))
            ok = yield from self.method(chosen)
            if not ok:
                continue
            if not key_message:
                self.conv.facts["method"] = method
                return True
            d = yield from self._next()
            if d.direction == C2S:
                # The server failed the method silently (spec 04 §5.8): a new round begins.
                pending = d
                continue
            self.conv.facts["method"] = method
            yield from self.key_exchange(d)
            return True

    def key_exchange(self, d: DecodedMessage) -> Flow:
        r = self.expect(d, S2C, "key message")
        assert r is not None
        has_key = self._int(r, "hasKey")
        self.end(r, "key message")
        if not has_key:
            self.note(d, "KEY", "KEY hasKey=0 (session key from ECDH)", has_key=0)
            return
        self.note(d, "KEY", "KEY hasKey=1 (server-generated key follows)", has_key=1)
        d = yield from self._next()
        r = self.expect(d, S2C, "wrapped session key")
        assert r is not None
        length, protocol, duration, wrapped_len = (self._int(r, "key field") for _ in range(4))
        wrapped = r.get_bytes(wrapped_len)
        self.end(r, "wrapped key")
        method = self.conv.facts.get("method", "")
        in_clear = method in ("FS", "FS_REMOTE", "CLAIMTOBE", "ANONYMOUS")
        self.note(
            d,
            "KEY",
            f"KEY length={length} protocol={KEY_PROTOCOLS.get(protocol, protocol)} "
            f"duration={duration} wrapped={wrapped_len} bytes"
            + (" (sent in clear by this method: used for decryption)" if in_clear else ""),
            key_length=length,
            protocol=protocol,
        )
        if in_clear and protocol == 3:
            self.decryptor.add_key(wrapped)
            self._legacy_key = True
        elif protocol == 3:
            self._legacy_key = True

    def method(self, bit: int) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        if bit in (0x4, 0x8):
            return (yield from self.fs())
        if bit == 0x2:
            return (yield from self.claimtobe())
        if bit == 0x80:
            d = yield from self._next()
            r = self.expect(d, S2C, "ANONYMOUS result")
            assert r is not None
            value = self._int(r, "ANONYMOUS result")
            self.note(d, "ANONYMOUS", f"ANONYMOUS result={value}", result=value)
            return value == 1
        if bit in (0x800, 0x200):
            return (yield from self.token("TOKEN" if bit == 0x800 else "PASSWORD"))
        yield from self.opaque(f"{'|'.join(names_of_bits(bit))} exchange (not decoded)")
        return False

    def fs(self) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self._next()
        r = self.expect(d, S2C, "FS directory")
        assert r is not None
        directory = r.get_string()
        self.end(r, "FS directory")
        self.note(d, "FS", f"FS server directory {_quote(directory)}", directory=directory)
        d = yield from self._next()
        r = self.expect(d, C2S, "FS client result")
        assert r is not None
        result = self._int(r, "FS client result")
        ext = None if r.at_end() else r.get_string()
        self.end(r, "FS client result")
        self.note(
            d,
            "FS",
            f"FS client result={result}" + (f" ext={_quote(ext)}" if ext is not None else ""),
            result=result,
            ext=ext,
        )
        d = yield from self._next()
        r = self.expect(d, S2C, "FS server result")
        assert r is not None
        status = self._int(r, "FS server result")
        self.end(r, "FS server result")
        self.note(
            d,
            "FS",
            f"FS server result={status} ({'authenticated' if status == 0 else 'rejected'})",
            result=status,
        )
        return status == 0

    def claimtobe(self) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self._next()
        r = self.expect(d, C2S, "CLAIMTOBE name")
        assert r is not None
        flag = self._int(r, "CLAIMTOBE flag")
        name = r.get_string() if flag == 1 else None
        self.end(r, "CLAIMTOBE claim")
        self.note(
            d,
            "CLAIMTOBE",
            f"CLAIMTOBE client claims {_quote(name)}" if name is not None else "CLAIMTOBE no name",
            name=name,
        )
        if flag != 1:
            return False
        d = yield from self._next()
        r = self.expect(d, S2C, "CLAIMTOBE reply")
        assert r is not None
        reply = self._int(r, "CLAIMTOBE reply")
        self.end(r, "CLAIMTOBE reply")
        self.note(d, "CLAIMTOBE", f"CLAIMTOBE server reply={reply}", result=reply)
        return reply == 1

    def token(self, name: str) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self._next()
        r = self.expect(d, C2S, f"{name} message 1")
        assert r is not None
        status, _, user = r.get_int(), r.get_int(), r.get_string()
        token = r.get_string()
        nonce = r.get_bytes(max(0, r.get_int()))
        self.end(r, f"{name} message 1")
        claims = _jwt_claims(token)
        self.note(
            d,
            name,
            f"{name} client status={status} A={_quote(user)} ra={len(nonce)} bytes"
            + (f" token header={claims[0]} claims={claims[1]}" if claims else ""),
            status=status,
            user=user,
            token_header=claims[0] if claims else None,
            token_claims=claims[1] if claims else None,
        )
        d = yield from self._next()
        r = self.expect(d, S2C, f"{name} message 2")
        assert r is not None
        status2, _, user2, _, server = (
            r.get_int(),
            r.get_int(),
            r.get_string(),
            r.get_int(),
            r.get_string(),
        )
        ra = r.get_bytes(max(0, r.get_int()))
        rb = r.get_bytes(max(0, r.get_int()))
        hkt = r.get_bytes(max(0, r.get_int()))
        self.end(r, f"{name} message 2")
        self.note(
            d,
            name,
            f"{name} server status={status2} A={_quote(user2)} B={_quote(server)} "
            f"ra={len(ra)} rb={len(rb)} hkt={hkt.hex() or '-'}",
            status=status2,
            server_name=server,
            hkt=hkt.hex(),
        )
        d = yield from self._next()
        r = self.expect(d, C2S, f"{name} message 3")
        assert r is not None
        status3, _, _ = r.get_int(), r.get_int(), r.get_string()
        rb3 = r.get_bytes(max(0, r.get_int()))
        hk = r.get_bytes(max(0, r.get_int()))
        self.end(r, f"{name} message 3")
        self.note(
            d,
            name,
            f"{name} client status={status3} rb={len(rb3)} hk={hk.hex() or '-'}",
            status=status3,
            hk=hk.hex(),
        )
        return status == status2 == status3 == 0

    # -- command payloads ----------------------------------------------------------------------

    def payload(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        """Decode the command's own exchange; ``first`` is a raw start's request message."""
        if self.encrypting and self.decryptor.key is None and first is None:
            yield from self.payload_encrypted(command)
            return
        handler = self._payload_handlers().get(command) if command is not None else None
        if handler is None and command is not None:
            try:
                name = Command(command).name
            except ValueError:
                name = ""
            if name.startswith("QUERY_"):
                handler = self.collector_query
            elif name.startswith(("UPDATE_", "INVALIDATE_", "MERGE_")):
                handler = self.update
            elif name.startswith("DC_NOP") or command in (
                Command.RESCHEDULE,
                Command.DC_RECONFIG,
                Command.DC_RECONFIG_FULL,
            ):
                handler = self.no_payload
        if handler is None:
            handler = self.generic
        yield from handler(command, first)

    def _payload_handlers(
        self,
    ) -> dict[int, Callable[[int | None, tuple[DecodedMessage, MessageReader] | None], Flow]]:
        return {
            Command.QUERY_JOB_ADS: self.job_query,
            Command.QUERY_JOB_ADS_WITH_AUTH: self.job_query,
            Command.QUERY_USERREC_ADS: self.job_query,
            Command.QUERY_SCHEDD_HISTORY: self.history,
            Command.GET_HISTORY: self.history,
            Command.ACT_ON_JOBS: self.act_on_jobs,
            Command.QMGMT_READ_CMD: self.qmgmt,
            Command.QMGMT_WRITE_CMD: self.qmgmt,
            Command.CONFIG_VAL: self.config_val,
            Command.DC_CONFIG_VAL: self.config_val,
            Command.SPOOL_JOB_FILES_WITH_PERMS: lambda c, f: dissect_transfer.spool(self, c, f),
            Command.TRANSFER_DATA_WITH_PERMS: lambda c, f: dissect_transfer.transfer_data(
                self, c, f
            ),
        }

    def _request(
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
        d = yield from self._next()
        return d, self.expect(d, C2S, what)

    def payload_encrypted(self, command: int | None) -> Flow:
        """Without the key: name what each encrypted message most likely is."""
        client_seen = 0
        name = command_name(command)
        while True:
            d = yield from self._next()
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

    def collector_query(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self._request(command, first, "query ad")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        query = self.ad(r, "query", d)
        self.end(r, "query")
        self._request_note(d, command, "query", query)
        d = yield from self._next()
        r = self.expect(d, S2C, "query results")
        if r is None:
            yield from self.unexpected_rest()
            return
        names = []
        count = 0
        while True:
            more = self._int(r, "result flag")
            if not more:
                break
            count += 1
            ad = self.ad(r, f"result {count}", d)
            names.append(_ad_name(ad))
        self.end(r, "query results")
        self.note(
            d,
            "QUERY_RESULT",
            f"{command_name(command)} result: {count} ad{'s' if count != 1 else ''}"
            + (
                f" ({', '.join(n for n in names[:6] if n)}{', …' if len(names) > 6 else ''})"
                if any(names)
                else ""
            ),
            ads=count,
        )
        yield from self.unexpected_rest()

    def _request_note(self, d: DecodedMessage, command: int | None, what: str, ad: ClassAd) -> None:
        self.note(
            d,
            "REQUEST" if d.kind != "RAW_COMMAND" else "RAW_COMMAND",
            (
                f"RAW {command_name(command)} "
                if d.kind == "RAW_COMMAND"
                else f"{command_name(command)} "
            )
            + f"{what} "
            + _inline(ad),
            request=[[n, ad.raw_text(n)] for n in ad],
        )

    def job_query(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self._request(command, first, "job query ad")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        query = self.ad(r, "job query", d)
        self.end(r, "job query")
        self._request_note(d, command, "request", query)
        count = 0
        while True:
            d = yield from self._next()
            r = self.expect(d, S2C, "job ad")
            if r is None:
                continue
            ad = self.ad(r, "job", d)
            self.end(r, "job ad")
            if _int_attr(ad, "Owner") == 0:
                error = ad.get("ErrorCode", 0)
                kind = "summary" if error == 0 else "error"
                self.note(
                    d,
                    "JOB_QUERY_END",
                    f"final {kind} ad after {count} job ad{'s' if count != 1 else ''}: "
                    + _inline(
                        ad,
                        ["ErrorCode", "ErrorString", "Jobs", "Idle", "Running", "Held", "MyName"],
                    ),
                    job_ads=count,
                    error_code=error,
                )
                break
            count += 1
            self.note(d, "JOB_AD", f"job ad {_job_id(ad)} ({len(ad)} attributes)", job=_job_id(ad))
        yield from self.unexpected_rest()

    def history(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self._request(command, first, "history request")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        request = self.ad(r, "history request", d)
        self.end(r, "history request")
        self._request_note(d, command, "request", request)
        records = 0
        while True:
            d = yield from self._next()
            r = self.expect(d, S2C, "history records")
            if r is None:
                continue
            parts = []
            final = None
            while not r.at_end():
                ad = self.ad(r, "history record", d)
                owner = _int_attr(ad, "Owner")
                if owner == 0:
                    final = ad
                elif owner == 1:
                    parts.append("streaming header")
                else:
                    records += 1
                    parts.append(f"record {_job_id(ad)}")
            if final is not None:
                parts.append(
                    "final ad "
                    + _inline(
                        final,
                        ["NumJobMatches", "AdCount", "MalformedAds", "ErrorCode", "ErrorString"],
                    )
                )
            self.note(d, "HISTORY", "history: " + "; ".join(parts), records=records)
            if final is not None:
                break
        yield from self.unexpected_rest()

    def act_on_jobs(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self._request(command, first, "job action ad")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        request = self.ad(r, "job action", d)
        self.end(r, "job action")
        action = request.get("JobAction")
        label = _action_label(action)
        self._request_note(d, command, label, request)
        d = yield from self._next()
        r = self.expect(d, S2C, "job action result")
        if r is None:
            yield from self.unexpected_rest()
            return
        if r.remaining == 8:
            value = r.get_int()
            self.note(d, "ACT_RESULT", f"ACT_ON_JOBS refused (int {value})", refused=True)
            yield from self.unexpected_rest()
            return
        result = self.ad(r, "job action result", d)
        self.end(r, "job action result")
        totals = {n: result.get(n) for n in result if str(n).startswith(("result_total_", "job_"))}
        success = result.get("ActionResult")
        self.note(
            d,
            "ACT_RESULT",
            "ACT_ON_JOBS result "
            + _inline(result, ["ActionResult", "TotalJobAds"])
            + " "
            + " ".join(f"{k}={v}" for k, v in totals.items() if v),
            action_result=success,
        )
        if success != 1:
            yield from self.unexpected_rest()
            return
        d = yield from self._next()
        r = self.expect(d, C2S, "commit confirmation")
        if r is not None:
            value = self._int(r, "confirmation")
            self.end(r, "confirmation")
            self.note(d, "ACT_CONFIRM", f"ACT_ON_JOBS client confirms ({value})", value=value)
        d = yield from self._next()
        r = self.expect(d, S2C, "commit result")
        if r is not None:
            value = self._int(r, "commit result")
            self.end(r, "commit result")
            self.note(d, "ACT_CONFIRM", f"ACT_ON_JOBS committed ({value})", value=value)
        yield from self.unexpected_rest()

    def qmgmt(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        pending: list[tuple[int, str]] = []  # calls awaiting a reply, oldest first
        if first is not None:
            d, r = first
            if not r.at_end():
                call = self._qmgmt_call(d, r, prefix=f"RAW {command_name(command)} ")
                if call is not None:
                    pending.append(call)
        while True:
            d = yield from self._next()
            reader = self.reader(d)
            if reader is None:
                self.encrypted_note(d, "QMGMT call" if d.direction == C2S else "QMGMT reply")
                continue
            if d.direction == C2S:
                call = self._qmgmt_call(d, reader)
                if call is not None:
                    pending.append(call)
            else:
                if not pending:
                    raise _Undecodable("QMGMT reply without a pending call")
                rpc, label = pending.pop(0)
                self._qmgmt_reply(d, reader, rpc, label)

    def _qmgmt_call(
        self, d: DecodedMessage, r: MessageReader, prefix: str = ""
    ) -> tuple[int, str] | None:
        rpc = self._int(r, "QMGMT call number")
        name = _qmgmt_name(rpc)
        values = read_arguments(rpc, r)
        fields: dict[str, Any] = {"rpc": rpc, **values}
        a = {k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in values.items()}
        if rpc in (QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2):
            fields.setdefault("flags", 0)
            args = f"{a['cluster']}.{a['proc']} {a['name']} = {a['value']}"
            if rpc == QmgmtCall.SetAttribute2:
                args += f" flags={_flag_names(int(a['flags']))}"
        elif rpc in (QmgmtCall.SetAttributeByConstraint, QmgmtCall.SetAttributeByConstraint2):
            fields.setdefault("flags", 0)
            args = f"[{a['constraint']}] {a['name']} = {a['value']}"
            if rpc == QmgmtCall.SetAttributeByConstraint2:
                args += f" flags={_flag_names(int(a['flags']))}"
        elif rpc in (QmgmtCall.SetTimerAttribute,):
            args = f"{a['cluster']}.{a['proc']} {a['name']} {a['duration']}s"
        elif set(a) == {"cluster", "proc"} or set(a) == {"cluster", "proc", "name"}:
            args = " ".join(
                [f"{a['cluster']}.{a['proc']}", *([str(a["name"])] if "name" in a else [])]
            )
        elif rpc in (QmgmtCall.GetNextJobByConstraint, QmgmtCall.GetNextDirtyJobByConstraint):
            args = f"init={a['init']} [{a['constraint']}]"
        elif rpc == QmgmtCall.GetAllJobsByConstraint:
            args = f"[{a['constraint']}] projection={_quote(str(a['projection']))}"
        elif rpc in (QmgmtCall.SetJobFactory, QmgmtCall.SetMaterializeData):
            args = (
                f"{a['cluster']} max={a['maximum']} file={_quote(str(a['filename']))} "
                f"digest={len(str(a['digest']))} chars"
            )
        elif rpc == QmgmtCall.SendMaterializeData:
            data = fields.pop("data")
            items = data.count(b"\n")
            args = f"{a['cluster']} flags={a['flags']} items={items} ({len(data)} bytes)"
        elif rpc == QmgmtCall.SendJobQueueAd:
            ad = self.ad(r, "job queue ad", d)
            args = f"{a['cluster']} type={a['ad_type']} flags={a['flags']} " + _inline(ad)
        elif rpc == QmgmtCall.SendSpoolFileIfNeeded:
            args = _inline(self.ad(r, "spool ad", d))
        elif len(a) == 1:
            # One int (NewProc, GetCapabilities, ...) or one string (SetEffectiveOwner, ...).
            (value,) = a.values()
            args = _quote(value) if isinstance(value, str) else str(value)
            if isinstance(value, int):
                fields = {"rpc": rpc, "arg": value}
        else:
            # NewCluster, CommitTransactionNoFlags, Begin/AbortTransaction take no argument.
            args = ""
        expects = expects_reply(rpc, values)
        self.end(r, name)
        label = f"{name}({args})"
        self.note(
            d,
            "QMGMT_CALL",
            f"{prefix}QMGMT {label}" + ("" if expects else "  [no reply expected]"),
            **fields,
        )
        return (rpc, label) if expects else None

    def _qmgmt_reply(self, d: DecodedMessage, r: MessageReader, rpc: int, label: str) -> None:
        fields: dict[str, Any] = {"rpc": rpc}
        if rpc == QmgmtCall.GetCapabilities:
            ad = self.ad(r, "capabilities", d)
            text = _inline(ad)
        elif rpc == QmgmtCall.SendMaterializeData:
            text = f"spool file {_quote(r.get_string())} rows={r.get_int()} rval={r.get_int()}"
            if not r.at_end():
                text += f" errno={r.get_int()}"
        elif rpc == QmgmtCall.GetAllJobsByConstraint:
            jobs = []
            while True:
                rval = r.get_int()
                if rval < 0:
                    errno = r.get_int()
                    break
                jobs.append(_job_id(self.ad(r, "job", d)))
            text = f"{len(jobs)} job ads, end errno={errno}"
        else:
            rval = r.get_int()
            fields["rval"] = rval
            if rval < 0:
                errno = r.get_int()
                fields["errno"] = errno
                text = f"rval={rval} errno={errno}"
                if not r.at_end():
                    ad = self.ad(r, "error", d)
                    text += " " + _inline(ad)
            elif rpc == QmgmtCall.GetAttributeFloat:
                text = f"rval={rval} value={r.get_double()}"
            elif rpc == QmgmtCall.GetAttributeInt:
                text = f"rval={rval} value={r.get_int()}"
            elif rpc in (QmgmtCall.GetAttributeString, QmgmtCall.GetAttributeExpr):
                text = f"rval={rval} value={_quote(r.get_string())}"
            elif rpc in (
                QmgmtCall.GetJobAd,
                QmgmtCall.GetJobByConstraint,
                QmgmtCall.GetNextJobByConstraint,
                QmgmtCall.GetNextJob,
                QmgmtCall.GetDirtyAttributes,
                QmgmtCall.GetNextDirtyJobByConstraint,
            ):
                ad = self.ad(r, "job", d)
                text = f"rval={rval} job ad {_job_id(ad)} ({len(ad)} attributes)"
            elif rpc in (QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags):
                text = f"rval={rval}"
                if not r.at_end():
                    ad = self.ad(r, "commit result", d)
                    text += " " + (_inline(ad) if len(ad) else "+ empty ad")
            else:
                text = f"rval={rval}"
        self.end(r, f"{_qmgmt_name(rpc)} reply")
        self.note(d, "QMGMT_REPLY", f"QMGMT {label} → {text}", **fields)

    def update(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        """UPDATE_*/INVALIDATE_*: ads; later messages on the connection repeat ``int cmd`` + ads."""
        d, r = yield from self._request(command, first, "update ad")
        current = command
        while True:
            if r is not None:
                if d.direction == S2C:
                    value = self._int(r, "acknowledgement")
                    self.end(r, "acknowledgement")
                    self.note(d, "UPDATE_ACK", f"{command_name(current)} acknowledged ({value})")
                else:
                    prefix = "RAW " if d.kind == "RAW_COMMAND" else ""
                    if d.kind == "":
                        current = self._int(r, "command")
                        prefix = ""
                    ads: list[ClassAd] = []
                    while not r.at_end():
                        ads.append(self.ad(r, f"ad {len(ads) + 1}", d))
                    self.note(
                        d,
                        d.kind or "UPDATE",
                        f"{prefix}{command_name(current)} " + "; ".join(_inline(a) for a in ads),
                    )
            d = yield from self._next()
            r = self.reader(d)
            if r is None:
                self.encrypted_note(d, f"{command_name(current)} message")

    def config_val(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self._request(command, first, "knob name")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        knob = r.get_string()
        self.end(r, "knob name")
        self.note(d, d.kind or "REQUEST", f"{command_name(command)} knob={_quote(knob)}")
        d = yield from self._next()
        r = self.expect(d, S2C, "configuration value")
        if r is not None:
            values = []
            while not r.at_end():
                values.append(r.get_nullable_string())
            self.note(d, "CONFIG_VALUE", f"{command_name(command)} reply {values}")
        yield from self.unexpected_rest()

    def no_payload(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if first is not None:
            d, r = first
            self.end(r, command_name(command))
        yield from self.unexpected_rest()

    def generic(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if first is not None:
            d, r = first
            if not r.at_end():
                d.summary += f" + {r.remaining} payload bytes (layout not known to the dissector)"
        while True:
            d = yield from self._next()
            if d.payload is None:
                self.encrypted_note(d, f"{command_name(command)} message")
            else:
                self.note(
                    d,
                    "DATA",
                    f"{command_name(command)} message, {d.size} bytes "
                    f"(layout not known to the dissector)",
                )

    def unexpected_rest(self) -> Flow:
        """Nothing more belongs to this conversation; anything that comes is flagged."""
        while True:
            yield from self._next()
            raise _Undecodable("message after the end of the exchange")

    def opaque(self, what: str) -> Flow:
        while True:
            d = yield from self._next()
            self.note(d, "OPAQUE", f"{what}, {d.size} bytes")

    # -- UDP -----------------------------------------------------------------------------------

    def udp(self, d: DecodedMessage) -> Flow:
        self.conv.start = "udp"
        payload = d.payload or b""
        if payload.startswith(_UDP_SECURITY_MAGIC) and len(payload) >= 10:
            flags, mac_len, key_len = struct.unpack_from(">HHH", payload, 4)
            pos = 10
            mac_id = payload[pos : pos + mac_len].decode("ascii", "replace")
            pos += mac_len
            if flags & 1:
                pos += 16
            key_id = payload[pos : pos + key_len].decode("ascii", "replace")
            pos += key_len
            rest = payload[pos:]
            if flags & 2:
                self.conv.facts["session"] = key_id or mac_id
                self.note(
                    d,
                    "UDP_ENCRYPTED",
                    f"UDP datagram encrypted with the legacy key of session {_quote(key_id)}, "
                    f"{len(rest)} bytes (command not visible)",
                    session=key_id,
                    mac=bool(flags & 1),
                )
                d.encrypted = True
                return
            payload = rest
        r = MessageReader(payload)
        cmd = self._int(r, "command")
        if cmd == Command.DC_AUTHENTICATE:
            ad = self.ad(r, "security policy", d, handshake=True)
            command = ad.get("Command")
            self.conv.command = command if isinstance(command, int) else None
            self.conv.facts["session"] = ad.get("Sid")
            resume = str(ad.get("UseSession", "")).upper().startswith("Y")
            extra = f" + {r.remaining} payload bytes" if not r.at_end() else ""
            sid = ad.raw_text("Sid") if "Sid" in ad else "-"
            self.note(
                d,
                "DC_AUTHENTICATE",
                f"UDP DC_AUTHENTICATE ({'resume session' if resume else 'new session'}) "
                f"Command={command_name(self.conv.command)} Sid={sid}{extra}",
                command=self.conv.command,
            )
        else:
            self.conv.command = cmd
            extra = f" + {r.remaining} payload bytes" if not r.at_end() else ""
            self.note(d, "RAW_COMMAND", f"UDP RAW {command_name(cmd)}{extra}", command=cmd)
        yield from self.unexpected_rest()


def _jwt_claims(token: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Header and claims of the ``header.payload`` token text (never a signature)."""
    parts = token.split(".")
    if len(parts) < 2:
        return None
    try:
        decoded = [json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2]]
    except (ValueError, binascii.Error):
        return None
    if not all(isinstance(x, dict) for x in decoded):
        return None
    return decoded[0], decoded[1]


def _int_attr(ad: ClassAd, name: str) -> int | None:
    try:
        value = ad.get(name)
    except CedarError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _job_id(ad: ClassAd) -> str:
    cluster, proc = _int_attr(ad, "ClusterId"), _int_attr(ad, "ProcId")
    if cluster is None:
        return "(no ClusterId)"
    return f"{cluster}.{proc}" if proc is not None else str(cluster)


def _ad_name(ad: ClassAd) -> str:
    for key in ("Name", "MyType"):
        if key in ad:
            try:
                return str(ad.get(key))
            except CedarError:
                return ad.raw_text(key)
    return ""


def _inline(ad: ClassAd, names: list[str] | None = None, limit: int = 8) -> str:
    """``{A = 1; B = "x"; …}`` with at most ``limit`` attributes (or just ``names``)."""
    chosen = [n for n in ad if names is None or n.lower() in {x.lower() for x in names}]
    shown = chosen[:limit]
    body = "; ".join(f"{n} = {ad.raw_text(n)}" for n in shown)
    more = len(ad) - len(shown)
    if more:
        body += f"; … +{more} more" if body else f"{more} attributes"
    return "{" + body + "}"


def dissect_conversation(
    conv: Conversation, keys: list[bytes] | None = None
) -> DissectedConversation:
    """Decode every message of one conversation."""
    result = DissectedConversation(
        conv.number, conv.transport, conv.client, conv.server, conv.first_frame, conv.first_time
    )
    flow = _Flow(result, list(keys or []))
    running = flow.run()
    next(running)
    gen: Flow | None = running
    for index, wire in enumerate(conv.messages, start=1):
        decoded = DecodedMessage(
            conversation=conv.number,
            index=index,
            direction=wire.direction,
            offset=wire.offset,
            frame=wire.frame,
            time=wire.time,
            wire_size=len(wire.wire),
            size=len(wire.body),
            packets=len(wire.packets),
            wire=wire.wire,
            raw=wire.raw,
        )
        result.messages.append(decoded)
        if gen is None:
            decoded.kind = "UNDECODED"
            decoded.encrypted = flow.encrypting
            if any(m.problem for m in result.messages):
                decoded.summary = f"{decoded.size} bytes (not decoded after an earlier problem)"
            else:
                decoded.problem = "message after the end of the exchange"
                decoded.summary = f"{decoded.size} bytes"
            continue
        try:
            gen.send((wire, decoded))
        except StopIteration:
            gen = None  # the flow ended with this message; more would be flagged below
        except (_Undecodable, CedarError, UnicodeError, ValueError) as exc:
            gen = None
            decoded.problem = str(exc)
        if decoded.problem and not decoded.summary:
            decoded.kind = decoded.kind or "UNDECODED"
            decoded.summary = f"{decoded.size} bytes"
    result.error = conv.error
    return result


def dissect(
    source: str | os.PathLike[str] | bytes | BinaryIO,
    *,
    keys: list[bytes] | None = None,
    strict: bool = False,
) -> list[DissectedConversation]:
    """Decode a whole capture.

    ``keys`` are AES session keys to try on encrypted conversations.  With ``strict`` the first
    framing error or undecodable message raises :class:`CaptureError` (naming conversation,
    direction and offset); otherwise problems are reported on the conversations.
    """
    result = [dissect_conversation(c, keys) for c in load_conversations(source)]
    if strict:
        check(result)
    return result


def check(conversations: list[DissectedConversation]) -> None:
    """Raise :class:`CaptureError` for the first problem in dissected conversations."""
    for conv in conversations:
        for m in conv.messages:
            if m.problem:
                raise CaptureError(
                    f"message {m.index} cannot be decoded: {m.problem}",
                    conversation=conv.number,
                    direction=m.direction,
                    offset=m.offset,
                )
        if conv.error is not None:
            raise conv.error


def iter_messages(conversations: list[DissectedConversation]) -> Iterator[DecodedMessage]:
    """All messages of all conversations, conversation by conversation."""
    for conv in conversations:
        yield from conv.messages
