"""Getting a service ticket: from the credential cache, else by a TGS exchange with the KDC.

RFC 4120 §3.3: a TGS-REQ whose PA-TGS-REQ authenticator carries the keyed checksum of the
request body (an MIT KDC refuses one without it, spec 10 §7.1), over TCP (§7.2.2, 4-byte length
prefix) with UDP as the fallback.  Each attempt has a deadline, every error is one line naming
what to do.  The service tickets obtained are kept in this process and added to the FILE cache
(atomically, its mode and owner kept), as the real tools add them.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Callable

from cedar.auth.errors import KerberosError
from cedar.auth.krb5 import der
from cedar.auth.krb5.crypto import checksum
from cedar.auth.krb5.files import Credential, CredentialCache, Krb5Config, store_credential
from cedar.auth.krb5.messages import (
    KRB_ERROR,
    KRB_TGS_REP,
    KRB_TGS_REQ,
    USAGE_TGS_REP_SESSION,
    USAGE_TGS_REQ_AUTH,
    USAGE_TGS_REQ_CKSUM,
    Authenticator,
    EncryptedData,
    Principal,
    Ticket,
    decode_key,
)
from cedar.lazy import LazyLogger

log = LazyLogger("cedar.auth")

KDC_TIMEOUT = 5.0
MAX_REPLY = 1024 * 1024
#: KRB-ERROR codes a user meets, in words (RFC 4120 §7.5.9).
KDC_ERRORS = {
    6: "the KDC does not know the client principal",
    7: "the KDC does not know the service principal",
    12: "the KDC's policy refuses this ticket",
    14: "the KDC supports none of cedar's enctypes (aes128/aes256-cts-hmac-sha1-96)",
    18: "the client's credentials have been revoked",
    32: "the ticket-granting ticket has expired (run kinit)",
    37: "clock skew too great between this host and the KDC",
    41: "the KDC found the request altered",
    68: "the KDC is in another realm",
}
_tickets: dict[tuple[str, str, str], Credential] = {}
_tickets_lock = threading.Lock()


def krb_error_text(data: bytes) -> str:
    """A KRB-ERROR as one line (code and e-text if the KDC gave one)."""
    f = der.decode(data).unwrap(der.APPLICATION, KRB_ERROR).fields()
    code = f[6].as_int() if 6 in f else -1
    text = KDC_ERRORS.get(code, f"the KDC answered error {code}")
    return text if 11 not in f else f"{text} ({f[11].as_str()})"


def _exchange_tcp(host: str, port: int, request: bytes, deadline: float) -> bytes:
    with socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())) as s:
        s.sendall(struct.pack(">I", len(request)) + request)
        head = _recv_exact(s, 4, deadline)
        size = struct.unpack(">I", head)[0]
        if size > MAX_REPLY:
            raise KerberosError("the KDC's reply is implausibly large")
        return _recv_exact(s, size, deadline)


def _recv_exact(s: socket.socket, size: int, deadline: float) -> bytes:
    out = bytearray()
    while len(out) < size:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = s.recv(size - len(out))
        if not chunk:
            raise OSError("the KDC closed the connection")
        out += chunk
    return bytes(out)


def _exchange_udp(host: str, port: int, request: bytes, deadline: float) -> bytes:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        s.connect((host, port))  # so that a closed port is refused at once (ICMP)
        s.send(request)
        return s.recv(65536)


def _split_kdc(entry: str) -> tuple[str, int]:
    entry = entry.strip()
    for prefix in ("tcp/", "udp/"):
        entry = entry.removeprefix(prefix)
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else 88
    host, _, port = entry.partition(":")
    return host, int(port) if port.isdigit() else 88


def send_to_kdc(kdcs: list[str], realm: str, request: bytes, timeout: float = KDC_TIMEOUT) -> bytes:
    """Send to each of the realm's KDCs in turn (TCP, then UDP) until one answers."""
    if not kdcs:
        raise KerberosError(
            f"no KDC known for realm {realm} (add it to krb5.conf's [realms] or set KRB5_CONFIG)"
        )
    deadline = time.monotonic() + timeout
    for entry in kdcs:
        host, port = _split_kdc(entry)
        for exchange in (_exchange_tcp, _exchange_udp):
            if time.monotonic() >= deadline:
                break
            try:
                return exchange(host, port, request, deadline)
            except OSError:
                continue
    raise KerberosError(f"the KDC for realm {realm} is unreachable ({', '.join(kdcs)})")


def _tgs_request(
    tgt: Credential, service: Principal, now: float, nonce: int
) -> tuple[bytes, Authenticator]:
    body = der.fields(
        (0, der.bits32(0)),
        (2, der.string(service.realm)),
        (3, service.encode_name()),
        (5, der.time(now + 10 * 3600)),
        (7, der.integer(nonce)),
        (8, der.sequence(*(der.integer(e) for e in (18, 17, 20, 19)))),
    )
    auth = Authenticator(
        tgt.client,
        now,
        int(now * 1e6) % 1000000,
        cksum=checksum(tgt.key, USAGE_TGS_REQ_CKSUM, body),
    )
    enc = EncryptedData.seal(tgt.key, USAGE_TGS_REQ_AUTH, auth.encode())
    ap_req = der.application(
        14,
        der.fields(
            (0, der.integer(5)),
            (1, der.integer(14)),
            (2, der.bits32(0)),
            (3, tgt.ticket.raw),
            (4, enc.encode()),
        ),
    )
    padata = der.sequence(der.fields((1, der.integer(1)), (2, der.octets(ap_req))))
    request = der.application(
        KRB_TGS_REQ,
        der.fields((1, der.integer(5)), (2, der.integer(KRB_TGS_REQ)), (3, padata), (4, body)),
    )
    return request, auth


def _read_tgs_rep(reply: bytes, tgt: Credential, service: Principal, nonce: int) -> Credential:
    top = der.decode(reply)
    if top.cls == der.APPLICATION and top.number == KRB_ERROR:
        raise KerberosError(f"cannot get a ticket for {service}: {krb_error_text(reply)}")
    f = top.unwrap(der.APPLICATION, KRB_TGS_REP).fields()
    if not {5, 6} <= f.keys():
        raise KerberosError("malformed TGS-REP from the KDC")
    ticket_tlv = f[5]
    raw = der.tlv(ticket_tlv.cls, ticket_tlv.constructed, ticket_tlv.number, ticket_tlv.value)
    ticket = Ticket.from_tlv(ticket_tlv, raw)
    part = der.decode(EncryptedData.decode(f[6]).open(tgt.key, USAGE_TGS_REP_SESSION))
    if part.cls != der.APPLICATION or part.number not in (25, 26):
        raise KerberosError("malformed TGS-REP from the KDC")
    g = part.unwrap(der.APPLICATION, part.number).fields()
    if not {0, 2, 7} <= g.keys() or g[2].as_int() != nonce:
        raise KerberosError("the KDC's TGS-REP does not answer our request")
    start = g[6].as_time() if 6 in g else g[5].as_time()
    flags = g[4].as_bits() if 4 in g else 0
    key = decode_key(g[0])
    return Credential(tgt.client, service, key, start, g[7].as_time(), ticket, flags)


def service_ticket(
    cache: CredentialCache,
    service: Principal,
    conf: Krb5Config,
    clock: Callable[[], float] = time.time,
    *,
    timeout: float = KDC_TIMEOUT,
) -> Credential:
    """A valid ticket for ``service``: cached (file or this process), else from the KDC (at most
    ``timeout`` seconds)."""
    now = clock()
    key = (cache.path, str(cache.principal), str(service))
    with _tickets_lock:
        known = _tickets.get(key)
    cached = cache.find(service)
    for candidate in (known, cached):
        if candidate is not None and candidate.endtime > now + 60:
            return candidate
    tgt_name = Principal(("krbtgt", service.realm), cache.principal.realm)
    tgt = cache.find(tgt_name)
    own = cache.find(Principal(("krbtgt", cache.principal.realm), cache.principal.realm))
    if tgt is None and own is not None and service.realm != cache.principal.realm:
        raise KerberosError(
            f"{service} is in realm {service.realm}, the ticket cache {cache.path} holds a "
            f"ticket-granting ticket for realm {cache.principal.realm} only (cedar does not do "
            "cross-realm; check default_realm in krb5.conf)"
        )
    if tgt is None:
        raise KerberosError(
            f"no Kerberos ticket-granting ticket for {cache.principal} in {cache.path} (run kinit)"
        )
    if tgt.endtime <= now:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(tgt.endtime))
        raise KerberosError(
            f"the Kerberos ticket of {cache.principal} in {cache.path} expired at {stamp} "
            "(run kinit)"
        )
    nonce = int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF
    request, _auth = _tgs_request(tgt, service, now, nonce)
    reply = send_to_kdc(conf.kdcs.get(service.realm, []), service.realm, request, timeout)
    cred = _read_tgs_rep(reply, tgt, service, nonce)
    with _tickets_lock:
        _tickets[key] = cred
    try:  # as the real tools do: the next process finds the ticket (spec 10 §7.1)
        store_credential(cache.path, cred)
    except (OSError, KerberosError) as exc:  # the ticket still serves this process
        log.info("the service ticket for %s was not stored in %s: %s", service, cache.path, exc)
    return cred


__all__ = ["KDC_ERRORS", "krb_error_text", "send_to_kdc", "service_ticket"]
