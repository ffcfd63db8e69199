"""The RFC 4120 messages the KERBEROS method exchanges (spec 10 §3, §7.1), built and read.

AP-REQ/AP-REP (with the CEDAR peer), TGS-REQ/TGS-REP/KRB-ERROR (with the KDC), the ticket's
encrypted part (server role) and the authenticator.  Key usages are RFC 4120 §7.5.1's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from cedar.auth.errors import KerberosError
from cedar.auth.krb5 import der
from cedar.auth.krb5.crypto import Key, checksum, decrypt, encrypt

NT_PRINCIPAL, NT_SRV_INST, NT_SRV_HST = 1, 2, 3
USAGE_TICKET, USAGE_TGS_REQ_CKSUM, USAGE_TGS_REQ_AUTH = 2, 6, 7
USAGE_TGS_REP_SESSION, USAGE_TGS_REP_SUBKEY = 8, 9
USAGE_AP_REQ_AUTH, USAGE_AP_REP = 11, 12
#: APOptions mutual-required (bit 2); TicketFlags initial (bit 9) and the rest are only read.
AP_MUTUAL_REQUIRED = 0x20000000
KRB_AP_REQ, KRB_AP_REP, KRB_TGS_REQ, KRB_TGS_REP, KRB_ERROR = 14, 15, 12, 13, 30


@dataclass(frozen=True)
class Principal:
    """A principal name: its components and realm (``host/localhost@REALM``)."""

    components: tuple[str, ...]
    realm: str
    name_type: int = NT_PRINCIPAL

    def __str__(self) -> str:
        return "/".join(self.components) + "@" + self.realm

    def encode_name(self) -> bytes:
        """The PrincipalName SEQUENCE (without the realm)."""
        return der.fields(
            (0, der.integer(self.name_type)),
            (1, der.sequence(*(der.string(c) for c in self.components))),
        )

    @classmethod
    def decode(cls, name: der.Tlv, realm: str) -> Principal:
        """From a PrincipalName and the realm beside it."""
        f = name.fields()
        if 0 not in f or 1 not in f:
            raise KerberosError("malformed Kerberos message: incomplete principal name")
        parts = tuple(c.as_str() for c in f[1].children())
        return cls(parts, realm, f[0].as_int())

    def same_name(self, other: Principal) -> bool:
        """Equal components and realm (the name type does not count, as in MIT)."""
        return self.components == other.components and self.realm == other.realm


@dataclass(frozen=True)
class EncryptedData:
    """An EncryptedData: enctype, optional kvno, ciphertext."""

    etype: int
    cipher: bytes = field(repr=False)
    kvno: int | None = None

    def encode(self) -> bytes:
        """DER."""
        kvno = der.integer(self.kvno) if self.kvno is not None else None
        return der.fields((0, der.integer(self.etype)), (1, kvno), (2, der.octets(self.cipher)))

    @classmethod
    def decode(cls, tlv: der.Tlv) -> EncryptedData:
        """From DER."""
        f = tlv.fields()
        if 0 not in f or 2 not in f:
            raise KerberosError("malformed Kerberos message: incomplete encrypted data")
        return cls(f[0].as_int(), f[2].as_bytes(), f[1].as_int() if 1 in f else None)

    def open(self, key: Key, usage: int) -> bytes:
        """Decrypt with ``key``; an enctype mismatch is a clear error."""
        if key.etype != self.etype:
            raise KerberosError(f"no key of enctype {self.etype} for this Kerberos message")
        return decrypt(key, usage, self.cipher)

    @classmethod
    def seal(cls, key: Key, usage: int, plain: bytes, kvno: int | None = None) -> EncryptedData:
        """Encrypt ``plain`` with ``key``."""
        return cls(key.etype, encrypt(key, usage, plain), kvno)


def encode_key(key: Key) -> bytes:
    """An EncryptionKey."""
    return der.fields((0, der.integer(key.etype)), (1, der.octets(key.data)))


def decode_key(tlv: der.Tlv) -> Key:
    """An EncryptionKey."""
    f = tlv.fields()
    if 0 not in f or 1 not in f:
        raise KerberosError("malformed Kerberos message: incomplete key")
    return Key(f[0].as_int(), f[1].as_bytes())


@dataclass(frozen=True)
class Ticket:
    """A ticket as the KDC issued it: the service principal, the sealed part and its DER."""

    server: Principal
    enc_part: EncryptedData
    raw: bytes = field(repr=False)

    @classmethod
    def decode(cls, raw: bytes) -> Ticket:
        """From the DER of a Ticket (``[APPLICATION 1]``)."""
        return cls.from_tlv(der.decode(raw), raw)

    @classmethod
    def from_tlv(cls, tlv: der.Tlv, raw: bytes) -> Ticket:
        """From an already decoded ``[APPLICATION 1]``."""
        f = tlv.unwrap(der.APPLICATION, 1).fields()
        if not {1, 2, 3} <= f.keys():
            raise KerberosError("malformed Kerberos ticket")
        return cls(Principal.decode(f[2], f[1].as_str()), EncryptedData.decode(f[3]), raw)


@dataclass(frozen=True)
class TicketContents:
    """What the server reads from a ticket's encrypted part."""

    session_key: Key = field(repr=False)
    client: Principal
    authtime: float
    starttime: float | None
    endtime: float
    addresses: tuple[bytes, ...]


def open_ticket(ticket: Ticket, key: Key) -> TicketContents:
    """Decrypt and read an EncTicketPart (usage 2, the service's long-term key)."""
    f = der.decode(ticket.enc_part.open(key, USAGE_TICKET)).unwrap(der.APPLICATION, 3).fields()
    if not {1, 2, 3, 5, 7} <= f.keys():
        raise KerberosError("malformed Kerberos ticket contents")
    addresses: tuple[bytes, ...] = ()
    if 9 in f:
        addresses = tuple(a.fields()[1].as_bytes() for a in f[9].children())
    return TicketContents(
        decode_key(f[1]),
        Principal.decode(f[3], f[2].as_str()),
        f[5].as_time(),
        f[6].as_time() if 6 in f else None,
        f[7].as_time(),
        addresses,
    )


def seal_ticket(
    service: Principal,
    service_key: Key,
    client: Principal,
    session: Key,
    times: tuple[float, float],
) -> Ticket:
    """A ticket as a KDC makes it (for tests and the mock: no KDC needed to exercise the method)."""
    part = der.application(
        3,
        der.fields(
            (0, der.bits32(0)),
            (1, encode_key(session)),
            (2, der.string(client.realm)),
            (3, client.encode_name()),
            (4, der.fields((0, der.integer(0)), (1, der.octets(b"")))),
            (5, der.time(times[0])),
            (7, der.time(times[1])),
        ),
    )
    enc = EncryptedData.seal(service_key, USAGE_TICKET, part, kvno=1)
    raw = der.application(
        1,
        der.fields(
            (0, der.integer(5)),
            (1, der.string(service.realm)),
            (2, service.encode_name()),
            (3, enc.encode()),
        ),
    )
    return Ticket(service, enc, raw)


@dataclass(frozen=True)
class Authenticator:
    """The fields of an authenticator cedar writes and checks."""

    client: Principal
    ctime: float
    cusec: int
    subkey: Key | None = field(default=None, repr=False)
    seq_number: int | None = None
    cksum: tuple[int, bytes] | None = field(default=None, repr=False)

    def encode(self) -> bytes:
        """DER ``[APPLICATION 2]``."""
        cksum = None
        if self.cksum is not None:
            cksum = der.fields((0, der.integer(self.cksum[0])), (1, der.octets(self.cksum[1])))
        return der.application(
            2,
            der.fields(
                (0, der.integer(5)),
                (1, der.string(self.client.realm)),
                (2, self.client.encode_name()),
                (3, cksum),
                (4, der.integer(self.cusec)),
                (5, der.time(self.ctime)),
                (6, encode_key(self.subkey) if self.subkey else None),
                (7, der.integer(self.seq_number) if self.seq_number is not None else None),
            ),
        )

    @classmethod
    def decode(cls, data: bytes) -> Authenticator:
        """From the decrypted DER."""
        f = der.decode(data).unwrap(der.APPLICATION, 2).fields()
        if not {1, 2, 4, 5} <= f.keys():
            raise KerberosError("malformed Kerberos authenticator")
        return cls(
            Principal.decode(f[2], f[1].as_str()),
            f[5].as_time(),
            f[4].as_int(),
            decode_key(f[6]) if 6 in f else None,
            f[7].as_int() if 7 in f else None,
        )


def random_seq() -> int:
    """A random initial sequence number below 2**30 (as observed, spec 10 §3.1)."""
    return int.from_bytes(os.urandom(4), "big") & 0x3FFFFFFF


def build_ap_req(ticket: Ticket, session: Key, auth: Authenticator, usage: int) -> bytes:
    """An AP-REQ with mutual-required (spec 10 §3.1)."""
    enc = EncryptedData.seal(session, usage, auth.encode())
    return der.application(
        KRB_AP_REQ,
        der.fields(
            (0, der.integer(5)),
            (1, der.integer(KRB_AP_REQ)),
            (2, der.bits32(AP_MUTUAL_REQUIRED)),
            (3, ticket.raw),
            (4, enc.encode()),
        ),
    )


def parse_ap_req(data: bytes) -> tuple[Ticket, EncryptedData]:
    """The ticket and the sealed authenticator of an AP-REQ."""
    f = der.decode(data).unwrap(der.APPLICATION, KRB_AP_REQ).fields()
    if not {0, 1, 3, 4} <= f.keys() or f[1].as_int() != KRB_AP_REQ:
        raise KerberosError("not a Kerberos AP-REQ")
    ticket_tlv = f[3]
    raw = der.tlv(ticket_tlv.cls, ticket_tlv.constructed, ticket_tlv.number, ticket_tlv.value)
    return Ticket.from_tlv(ticket_tlv, raw), EncryptedData.decode(f[4])


def build_ap_rep(session: Key, auth: Authenticator, seq: int) -> bytes:
    """The AP-REP: ctime/cusec echoed, the client's subkey echoed, our sequence number."""
    part = der.application(
        27,
        der.fields(
            (0, der.time(auth.ctime)),
            (1, der.integer(auth.cusec)),
            (2, encode_key(auth.subkey) if auth.subkey else None),
            (3, der.integer(seq)),
        ),
    )
    enc = EncryptedData.seal(session, USAGE_AP_REP, part)
    return der.application(
        KRB_AP_REP, der.fields((0, der.integer(5)), (1, der.integer(KRB_AP_REP)), (2, enc.encode()))
    )


def check_ap_rep(data: bytes, session: Key, auth: Authenticator) -> None:
    """RFC 4120 §3.2.5: the AP-REP decrypts with the session key and echoes ctime/cusec."""
    f = der.decode(data).unwrap(der.APPLICATION, KRB_AP_REP).fields()
    if 2 not in f:
        raise KerberosError("malformed Kerberos AP-REP")
    part = der.decode(EncryptedData.decode(f[2]).open(session, USAGE_AP_REP))
    g = part.unwrap(der.APPLICATION, 27).fields()
    if 0 not in g or 1 not in g:
        raise KerberosError("malformed Kerberos AP-REP")
    if int(g[0].as_time()) != int(auth.ctime) or g[1].as_int() != auth.cusec:
        raise KerberosError("the server's Kerberos AP-REP does not answer our authenticator")


__all__ = [
    "Authenticator",
    "EncryptedData",
    "Principal",
    "Ticket",
    "TicketContents",
    "build_ap_rep",
    "build_ap_req",
    "check_ap_rep",
    "checksum",
    "open_ticket",
    "parse_ap_req",
    "random_seq",
    "seal_ticket",
]
