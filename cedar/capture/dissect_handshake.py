"""The dissector's handshake part: how a command starts.

The client's first message (a shared-port request, a raw command or DC_AUTHENTICATE), the
security negotiation (spec 04: policy ads, the authentication-method rounds FS, CLAIMTOBE,
ANONYMOUS, TOKEN/PASSWORD, the key message, the post-authentication ad), session resumption and
UDP datagrams.  When the command's own exchange begins it hands over to
:meth:`FlowBase.payload <cedar.capture.dissect_model.FlowBase.payload>`.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Generator
from typing import Any

from cedar.auth.errors import KerberosError
from cedar.auth.krb5.messages import parse_ap_req
from cedar.auth.methods import names_of_bits
from cedar.capture import dissect_ccb
from cedar.capture.dissect_model import (
    DecodedMessage,
    Flow,
    FlowBase,
    command_name,
    method_names,
    quote,
)
from cedar.capture.errors import Undecodable
from cedar.capture.messages import WireMessage
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd
from cedar.numbers import FORCE_AUTHENTICATION, KEY_PROTOCOLS, Command
from cedar.stream.primitives import MessageReader

_UDP_SECURITY_MAGIC = b"CRAP"


class HandshakeFlow(FlowBase):
    """The command start and the security handshake of one conversation."""

    # -- the conversation ---------------------------------------------------------------------

    def run(self) -> Flow:
        d = yield from self.next_message()
        if self.conv.transport == "udp":
            yield from self.udp(d)
            return
        r = self.expect(d, C2S, "the client's first message")
        assert r is not None
        cmd = self.int_field(r, "command")
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
                f"SHARED_PORT_CONNECT(75) id={quote(target)} client={quote(client_name)} "
                f"deadline={deadline}" + (f" extra={extra}" if extra else ""),
                target=target,
                client_name=client_name,
                deadline=deadline,
                extra=extra,
            )
            self.conv.facts["shared_port_id"] = target
            self.decryptor.history[-1].preamble = True
            d = yield from self.next_message()
            r = self.expect(d, C2S, "the command start")
            assert r is not None
            cmd = self.int_field(r, "command")
        if cmd == Command.DC_AUTHENTICATE:
            yield from self.negotiated(d, r)
        elif d.payload is not None and dissect_ccb.held_midstream(d.payload):
            r.seek(0)
            yield from dissect_ccb.held(self, d, r)
        else:
            yield from self.raw(d, r, cmd)

    # -- starts --------------------------------------------------------------------------------

    def raw(self, d: DecodedMessage, r: MessageReader, cmd: int) -> Flow:
        self.conv.start = "raw"
        self.conv.command = cmd
        if cmd in FORCE_AUTHENTICATION and r.remaining == 8:
            mask = r.get_int()
            self.note(
                d,
                "RAW_COMMAND",
                f"RAW {command_name(cmd)} + in-band authentication, methods {method_names(mask)}",
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
        d = yield from self.next_message()
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
        if crypto == "AES" and (client_ecdh and "ECDHPublicKey" in m2 or self.legacy_key):
            self.encrypting = True
        elif crypto in ("BLOWFISH", "3DES") and encryption:
            self.conv.facts["legacy_cipher"] = crypto
            yield from self.opaque(f"{crypto}-encrypted (legacy cipher, not decoded)")
            return
        self.conv.facts["encrypted"] = self.encrypting
        yield from self.post_auth(command)

    def post_auth(self, command: int | None) -> Flow:
        d = yield from self.next_message()
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
            f"POST-AUTH ReturnCode={quote(code)} User={quote(str(p1.get('User', '')))} "
            f"Sid={quote(str(p1.get('Sid', '')))} "
            f"ValidCommands={len([c for c in valid.split(',') if c])} commands"
            + (" TriedAuthentication=true" if p1.get("TriedAuthentication") is True else ""),
            return_code=code,
        )
        if code.upper() != "AUTHORIZED":
            yield from self.unexpected_rest()
            return
        if command == Command.DC_SEC_QUERY:
            d = yield from self.next_message()
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
            d = yield from self.next_message()
            r = self.expect(d, S2C, "resume response")
            assert r is not None
            r2 = self.ad(r, "resume response", d, handshake=True)
            self.end(r, "resume response")
            code = str(r2.get("ReturnCode", ""))
            self.note(
                d, "RESUME_RESPONSE", f"RESUME RESPONSE ReturnCode={quote(code)}", return_code=code
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
                d = pending if pending is not None else (yield from self.next_message())
                pending = None
                r = self.expect(d, C2S, "authentication method mask")
                assert r is not None
                mask = self.int_field(r, "method mask")
                self.end(r, "method mask")
                self.note(d, "AUTH_METHODS", f"AUTH client offers {method_names(mask)}", mask=mask)
            d = yield from self.next_message()
            r = self.expect(d, S2C, "chosen authentication method")
            assert r is not None
            chosen = self.int_field(r, "chosen method")
            self.end(r, "chosen method")
            self.note(
                d, "AUTH_CHOSEN", f"AUTH server chooses {method_names(chosen)}", chosen=chosen
            )
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
            d = yield from self.next_message()
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
        has_key = self.int_field(r, "hasKey")
        self.end(r, "key message")
        if not has_key:
            self.note(d, "KEY", "KEY hasKey=0 (session key from ECDH)", has_key=0)
            return
        self.note(d, "KEY", "KEY hasKey=1 (server-generated key follows)", has_key=1)
        d = yield from self.next_message()
        r = self.expect(d, S2C, "wrapped session key")
        assert r is not None
        length, protocol, duration, wrapped_len = (self.int_field(r, "key field") for _ in range(4))
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
            self.legacy_key = True
        elif protocol == 3:
            self.legacy_key = True

    def method(self, bit: int) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        if bit in (0x4, 0x8):
            return (yield from self.fs())
        if bit == 0x2:
            return (yield from self.claimtobe())
        if bit == 0x80:
            d = yield from self.next_message()
            r = self.expect(d, S2C, "ANONYMOUS result")
            assert r is not None
            value = self.int_field(r, "ANONYMOUS result")
            self.note(d, "ANONYMOUS", f"ANONYMOUS result={value}", result=value)
            return value == 1
        if bit in (0x800, 0x200):
            return (yield from self.token("TOKEN" if bit == 0x800 else "PASSWORD"))
        if bit == 0x40:
            return (yield from self.kerberos())
        yield from self.opaque(f"{'|'.join(names_of_bits(bit))} exchange (not decoded)")
        return False

    def fs(self) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self.next_message()
        r = self.expect(d, S2C, "FS directory")
        assert r is not None
        directory = r.get_string()
        self.end(r, "FS directory")
        self.note(d, "FS", f"FS server directory {quote(directory)}", directory=directory)
        d = yield from self.next_message()
        r = self.expect(d, C2S, "FS client result")
        assert r is not None
        result = self.int_field(r, "FS client result")
        ext = None if r.at_end() else r.get_string()
        self.end(r, "FS client result")
        self.note(
            d,
            "FS",
            f"FS client result={result}" + (f" ext={quote(ext)}" if ext is not None else ""),
            result=result,
            ext=ext,
        )
        d = yield from self.next_message()
        r = self.expect(d, S2C, "FS server result")
        assert r is not None
        status = self.int_field(r, "FS server result")
        self.end(r, "FS server result")
        self.note(
            d,
            "FS",
            f"FS server result={status} ({'authenticated' if status == 0 else 'rejected'})",
            result=status,
        )
        return status == 0

    def _krb_word(
        self, direction: str, what: str, field: str
    ) -> Generator[None, tuple[WireMessage, DecodedMessage], int]:
        """One KERBEROS control word (spec 10 §2), noted under ``field``."""
        d = yield from self.next_message()
        r = self.expect(d, direction, f"KERBEROS {what}")
        assert r is not None
        value = self.int_field(r, f"KERBEROS {what}")
        self.end(r, f"KERBEROS {what}")
        self.note(d, "KERBEROS", f"KERBEROS {what} {value}", **{field: value})
        return value

    def _krb_blob(
        self, direction: str, what: str
    ) -> Generator[None, tuple[WireMessage, DecodedMessage], None]:
        """K-Q or K-P: ``I(4) I(n) B(n)``; the ticket's clear fields are shown, never a key."""
        d = yield from self.next_message()
        r = self.expect(d, direction, f"KERBEROS {what}")
        assert r is not None
        marker, size = self.int_field(r, what), self.int_field(r, what)
        if marker != 4 or not 0 < size <= 65536:
            raise Undecodable(f"KERBEROS {what}: control word {marker}, length {size}")
        blob = r.get_bytes(size)
        self.end(r, f"KERBEROS {what}")
        fields: dict[str, Any] = {}
        summary = f"KERBEROS {what}, {size} bytes"
        if what == "AP-REQ":
            try:
                ticket, _sealed = parse_ap_req(blob)
            except KerberosError as exc:
                raise Undecodable(f"KERBEROS AP-REQ: {exc}") from None
            fields = {"service": str(ticket.server), "etype": ticket.enc_part.etype}
            summary += f": ticket for {ticket.server}, enctype {ticket.enc_part.etype}"
        self.note(d, "KERBEROS", summary, **fields)

    def kerberos(self) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        """The six messages of spec 10 §2 (K-R, K-Q, K-M, K-P, K-G, K-F); a failure ends early."""
        ready = yield from self._krb_word(C2S, "client ready", "ready")
        if ready != 4:
            return False
        yield from self._krb_blob(C2S, "AP-REQ")
        answer = yield from self._krb_word(S2C, "server answer", "answer")
        if answer != 3:
            return False
        yield from self._krb_blob(S2C, "AP-REP")
        yield from self._krb_word(C2S, "client confirms", "confirm")
        verdict = yield from self._krb_word(S2C, "server verdict", "verdict")
        return bool(verdict == 1)

    def claimtobe(self) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self.next_message()
        r = self.expect(d, C2S, "CLAIMTOBE name")
        assert r is not None
        flag = self.int_field(r, "CLAIMTOBE flag")
        name = r.get_string() if flag == 1 else None
        self.end(r, "CLAIMTOBE claim")
        self.note(
            d,
            "CLAIMTOBE",
            f"CLAIMTOBE client claims {quote(name)}" if name is not None else "CLAIMTOBE no name",
            name=name,
        )
        if flag != 1:
            return False
        d = yield from self.next_message()
        r = self.expect(d, S2C, "CLAIMTOBE reply")
        assert r is not None
        reply = self.int_field(r, "CLAIMTOBE reply")
        self.end(r, "CLAIMTOBE reply")
        self.note(d, "CLAIMTOBE", f"CLAIMTOBE server reply={reply}", result=reply)
        return reply == 1

    def token(self, name: str) -> Generator[None, tuple[WireMessage, DecodedMessage], bool]:
        d = yield from self.next_message()
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
            f"{name} client status={status} A={quote(user)} ra={len(nonce)} bytes"
            + (f" token header={claims[0]} claims={claims[1]}" if claims else ""),
            status=status,
            user=user,
            token_header=claims[0] if claims else None,
            token_claims=claims[1] if claims else None,
        )
        d = yield from self.next_message()
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
            f"{name} server status={status2} A={quote(user2)} B={quote(server)} "
            f"ra={len(ra)} rb={len(rb)} hkt={hkt.hex() or '-'}",
            status=status2,
            server_name=server,
            hkt=hkt.hex(),
        )
        d = yield from self.next_message()
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
                    f"UDP datagram encrypted with the legacy key of session {quote(key_id)}, "
                    f"{len(rest)} bytes (command not visible)",
                    session=key_id,
                    mac=bool(flags & 1),
                )
                d.encrypted = True
                return
            payload = rest
        r = MessageReader(payload)
        cmd = self.int_field(r, "command")
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
