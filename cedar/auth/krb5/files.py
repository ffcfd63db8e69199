"""MIT Kerberos files: the FILE credential cache (formats 3 and 4), keytabs (format 2) and the
few ``krb5.conf`` settings a client needs (default realm, the realm's KDCs, the default cache).

Formats as MIT documents them ("ccache file format", "keytab file format").  Reading is bounded:
a count or length larger than the rest of the file is an error, never an allocation.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
from dataclasses import dataclass, field

from cedar.auth.errors import KerberosError
from cedar.auth.krb5.crypto import KEY_SIZES, Key
from cedar.auth.krb5.messages import Principal, Ticket

MAX_FILE = 16 * 1024 * 1024


class _Reader:
    """Big-endian fields of a credential file, bounded by its length."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = data, 0, what

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise KerberosError(f"{self.what} is truncated or corrupt")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        value: int = struct.unpack(">H", self.take(2))[0]
        return value

    def u32(self) -> int:
        value: int = struct.unpack(">I", self.take(4))[0]
        return value

    def counted(self, wide: bool = True) -> bytes:
        return self.take(self.u32() if wide else self.u16())

    def at_end(self) -> bool:
        return self.pos >= len(self.data)


def _read_file(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise KerberosError(f"no {what} at {path} (run kinit)") from None
    except OSError as exc:
        raise KerberosError(f"cannot read the {what} {path}: {exc.strerror}") from None
    if len(data) > MAX_FILE:
        raise KerberosError(f"the {what} {path} is implausibly large")
    return data


# -- credential cache ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """One cached ticket: client, service, session key, times (POSIX seconds) and the ticket."""

    client: Principal
    server: Principal
    key: Key = field(repr=False)
    starttime: float
    endtime: float
    ticket: Ticket = field(repr=False)
    #: The ticket's flags (RFC 4120 TicketFlags, bit 0 the most significant), as a ccache
    #: keeps them (``klist -f``).
    flags: int = 0


@dataclass(frozen=True)
class CredentialCache:
    """A FILE ccache's default principal and its usable (AES) credentials."""

    path: str
    principal: Principal
    credentials: tuple[Credential, ...]

    def find(self, server: Principal) -> Credential | None:
        """The cached ticket for ``server`` that lasts longest."""
        found = [c for c in self.credentials if c.server.same_name(server)]
        return max(found, key=lambda c: c.endtime) if found else None


def _cc_principal(r: _Reader, version: int) -> Principal:
    name_type = r.u32() if version != 1 else 1
    count = r.u32()
    if count > 64:
        raise KerberosError(f"{r.what} is corrupt (principal with {count} components)")
    realm = r.counted().decode("utf-8", "replace")
    parts = tuple(r.counted().decode("utf-8", "replace") for _ in range(count))
    return Principal(parts, realm, name_type)


def _cc_credential(r: _Reader, version: int) -> Credential | None:
    client, server = _cc_principal(r, version), _cc_principal(r, version)
    etype = r.u16()
    if version == 3:
        r.u16()
    key_data = r.counted()
    _authtime, starttime, endtime, _renew = (r.u32() for _ in range(4))
    r.u8()  # is_skey
    flags = r.u32()
    for _ in range(r.u32()):  # addresses
        r.u16()
        r.counted()
    for _ in range(r.u32()):  # authorization data
        r.u16()
        r.counted()
    ticket_raw = r.counted()
    r.counted()  # second ticket
    if server.realm == "X-CACHECONF:" or etype not in KEY_SIZES or not ticket_raw:
        return None  # configuration entries, and enctypes cedar cannot use
    try:
        ticket = Ticket.decode(ticket_raw)
        key = Key(etype, key_data)
    except KerberosError:
        return None
    return Credential(client, server, key, float(starttime), float(endtime), ticket, flags)


def parse_ccache(data: bytes, path: str) -> CredentialCache:
    """A ccache file's content (formats 3 and 4, as MIT writes them)."""
    r = _Reader(data, f"the Kerberos credential cache {path}")
    magic = r.u16()
    if magic not in (0x0503, 0x0504):
        raise KerberosError(f"{path} is not a Kerberos credential cache cedar can read")
    version = magic & 0xFF
    if version == 4:
        r.take(r.u16())  # header tags (KDC time offset): not needed
    principal = _cc_principal(r, version)
    creds: list[Credential] = []
    while not r.at_end():
        cred = _cc_credential(r, version)
        if cred is not None:
            creds.append(cred)
    return CredentialCache(path, principal, tuple(creds))


def read_ccache(name: str) -> CredentialCache:
    """The cache a ``KRB5CCNAME``-style name denotes; only ``FILE:`` (or a bare path) is read."""
    kind, sep, rest = name.partition(":")
    if sep and kind.upper() == "FILE":
        path = rest
    elif sep and kind and "/" not in kind:
        raise KerberosError(
            f"the Kerberos credential cache {name!r} is of type {kind}, which cedar cannot read "
            "(FILE: caches only; set KRB5CCNAME=FILE:/path and kinit)"
        )
    else:
        path = name
    if not os.path.exists(path):
        raise KerberosError(f"no Kerberos credential cache {path} (run kinit)")
    return parse_ccache(_read_file(path, "Kerberos credential cache"), path)


# -- keytab --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeytabEntry:
    """One key of a keytab."""

    principal: Principal
    kvno: int
    key: Key = field(repr=False)


def parse_keytab(data: bytes, path: str) -> list[KeytabEntry]:
    """A keytab's entries with AES keys (format 0x0502; holes and other enctypes skipped)."""
    r = _Reader(data, f"the keytab {path}")
    if r.u16() != 0x0502:
        raise KerberosError(f"{path} is not a keytab cedar can read (format 0x0502)")
    entries: list[KeytabEntry] = []
    while not r.at_end():
        size = struct.unpack(">i", r.take(4))[0]
        record = r.take(abs(size))
        if size <= 0:
            continue  # a hole left by a deleted entry
        entry = _keytab_entry(_Reader(record, r.what))
        if entry is not None:
            entries.append(entry)
    return entries


def _keytab_entry(r: _Reader) -> KeytabEntry | None:
    count = r.u16()
    realm = r.counted(wide=False).decode("utf-8", "replace")
    parts = tuple(r.counted(wide=False).decode("utf-8", "replace") for _ in range(count))
    name_type = r.u32()
    r.u32()  # timestamp
    kvno = r.u8()
    etype = r.u16()
    key_data = r.counted(wide=False)
    if len(r.data) - r.pos >= 4:
        kvno = r.u32() or kvno
    if etype not in KEY_SIZES or len(key_data) != KEY_SIZES[etype]:
        return None
    return KeytabEntry(Principal(parts, realm, name_type), kvno, Key(etype, key_data))


def read_keytab(name: str) -> list[KeytabEntry]:
    """The AES keys of a ``FILE:``/``WRFILE:`` keytab or a bare path."""
    kind, sep, rest = name.partition(":")
    path = rest if sep and kind.upper() in ("FILE", "WRFILE") else name
    return parse_keytab(_read_file(path, "keytab"), path)


def write_keytab(path: str, entries: list[KeytabEntry]) -> None:
    """Write a keytab (tests and the mock pool: a realm's keys without kadmin)."""
    out = bytearray(b"\x05\x02")
    for entry in entries:
        p = entry.principal
        body = struct.pack(">H", len(p.components))
        for text in (p.realm, *p.components):
            raw = text.encode()
            body += struct.pack(">H", len(raw)) + raw
        body += struct.pack(">IIBH", p.name_type, 0, entry.kvno & 0xFF, entry.key.etype)
        body += struct.pack(">H", len(entry.key.data)) + entry.key.data
        body += struct.pack(">I", entry.kvno)
        out += struct.pack(">i", len(body)) + body
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(out)


def _cc_name(p: Principal) -> bytes:
    raw = struct.pack(">II", p.name_type, len(p.components))
    for text in (p.realm, *p.components):
        data = text.encode()
        raw += struct.pack(">I", len(data)) + data
    return raw


def _cc_entry(c: Credential) -> bytes:
    """One credential as a format-4 ccache holds it (no addresses, no authorization data)."""
    out = _cc_name(c.client) + _cc_name(c.server)
    out += struct.pack(">HI", c.key.etype, len(c.key.data)) + c.key.data
    start, end = int(c.starttime), int(c.endtime)
    out += struct.pack(">IIIIBIII", start, start, end, 0, 0, c.flags, 0, 0)
    return out + struct.pack(">I", len(c.ticket.raw)) + c.ticket.raw + struct.pack(">I", 0)


def write_ccache(path: str, principal: Principal, creds: list[Credential]) -> None:
    """Write a format-4 FILE ccache (tests: a cache holding a ready service ticket)."""
    out = bytearray(b"\x05\x04\x00\x00") + _cc_name(principal)
    for c in creds:
        out += _cc_entry(c)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(out)


def store_credential(path: str, cred: Credential) -> None:
    """Add a service ticket to the FILE ccache at ``path``, as MIT's tools do after a TGS
    exchange, so that the next process (and ``klist``) finds it.

    Atomic: the cache with the new entry goes to a temporary file beside it, given the cache's
    mode and owner, then renamed over it; a reader sees the old cache or the new one, never half
    of one.  Only format 4 (what MIT 1.20 writes) is extended; raises ``OSError`` or
    :class:`KerberosError` (callers treat failing to store as harmless)."""
    data = _read_file(path, "Kerberos credential cache")
    if data[:2] != b"\x05\x04":
        raise KerberosError(f"{path} is not a format-4 credential cache; the ticket is not stored")
    before = os.stat(path)
    directory, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(directory, f".{name}.cedar-{os.getpid()}-{os.urandom(4).hex()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), before.st_mode & 0o7777)
            if os.geteuid() == 0:
                os.fchown(handle.fileno(), before.st_uid, before.st_gid)
            handle.write(data + _cc_entry(cred))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# -- krb5.conf -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Krb5Config:
    """The settings cedar reads from ``krb5.conf`` (``KRB5_CONFIG`` or ``/etc/krb5.conf``)."""

    default_realm: str | None = None
    default_ccache_name: str | None = None
    kdcs: dict[str, list[str]] = field(default_factory=dict)


def parse_krb5_conf(text: str) -> Krb5Config:
    """``[libdefaults]`` default_realm/default_ccache_name and each realm's ``kdc`` lines."""
    section, realm, depth = "", None, 0
    values: dict[str, str] = {}
    kdcs: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = (
            raw.split("#", 1)[0].split(";", 1)[0].strip()
            if not raw.lstrip().startswith(("#", ";"))
            else ""
        )
        if not line:
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            section, realm, depth = header.group(1), None, 0
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if line == "}":
            depth = max(0, depth - 1)
            realm = None if depth == 0 else realm
        elif sep and value == "{":
            depth += 1
            if section == "realms" and depth == 1:
                realm = key
        elif sep and section == "libdefaults" and depth == 0:
            values.setdefault(key, value)
        elif sep and section == "realms" and realm and depth == 1 and key == "kdc":
            kdcs.setdefault(realm, []).append(value)
    return Krb5Config(values.get("default_realm"), values.get("default_ccache_name"), kdcs)


def load_krb5_conf() -> Krb5Config:
    """The first readable file of ``KRB5_CONFIG`` (colon-separated), else ``/etc/krb5.conf``."""
    for path in (os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf").split(":"):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return parse_krb5_conf(handle.read(1024 * 1024))
        except OSError:
            continue
    return Krb5Config()


def default_ccache_name(conf: Krb5Config) -> str:
    """``KRB5CCNAME``, else ``default_ccache_name`` (``%{uid}`` expanded), else MIT's default."""
    name = os.environ.get("KRB5CCNAME") or conf.default_ccache_name
    if not name:
        return f"FILE:/tmp/krb5cc_{os.getuid()}"
    return name.replace("%{uid}", str(os.getuid())).replace("%{euid}", str(os.geteuid()))


__all__ = [
    "Credential",
    "CredentialCache",
    "KeytabEntry",
    "Krb5Config",
    "default_ccache_name",
    "load_krb5_conf",
    "parse_ccache",
    "parse_keytab",
    "parse_krb5_conf",
    "read_ccache",
    "read_keytab",
    "write_ccache",
    "write_keytab",
]
