"""TLS inside CEDAR messages: SSL phases 0-2 and the SCITOKENS phase 3 (spec 04 §7-§8).

Each side drives an :class:`ssl.SSLObject` over memory BIOs and ships whatever it produced, with a
status word, in strictly alternating CEDAR "data messages" (``int status, int n, bytes(n)``).  No
TLS byte ever touches the socket directly.  Certificates are verified by default; the server
certificate's host name is checked against the ``alias`` of the address the client dialled
(spec 04 §7.3) -- with no alias the check fails unless it is skipped explicitly.
"""

from __future__ import annotations

import logging
import os
import secrets
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cedar.auth.errors import TlsFailure as TlsFailure  # its old home exports it
from cedar.errors import ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger(__name__)

ERROR = -1
A_OK = 0
SENDING = 1
RECEIVING = 2
QUITTING = 3
HOLDING = 4
STATUS_NAMES = {
    ERROR: "ERROR",
    A_OK: "A_OK",
    SENDING: "SENDING",
    RECEIVING: "RECEIVING",
    QUITTING: "QUITTING",
    HOLDING: "HOLDING",
}
MAX_DATA = 1 << 20
MAX_ROUNDS = 256
SESSION_KEY_SIZE = 256
#: Largest SciToken a 25.13.2 server reads whole (one TLS record minus the length prefix).
MAX_INTEROPERABLE_SCITOKEN = 16380


@dataclass
class TlsClientSettings:
    """Trust anchors and the optional client certificate (spec 06 §2.3)."""

    cafile: str | None = None
    cadir: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    use_default_cas: bool = True
    skip_host_check: bool = False
    #: The name the server certificate must carry; normally the dialled address's alias.
    expected_host: str | None = None
    context: ssl.SSLContext | None = field(default=None, repr=False)

    def build_context(self, *, with_certificate: bool = True) -> ssl.SSLContext:
        """A client context: TLS >= 1.2, peer verification on, no SNI/host check by OpenSSL."""
        if self.context is not None:
            return self.context
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = False  # done by host_matches() against the alias, as the reference
        ctx.verify_mode = ssl.CERT_REQUIRED
        if self.cafile or self.cadir:
            ctx.load_verify_locations(cafile=self.cafile, capath=self.cadir)
        if self.use_default_cas:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
        if with_certificate and self.certfile:
            ctx.load_cert_chain(self.certfile, self.keyfile or self.certfile)
        return ctx


@dataclass
class TlsServerSettings:
    """Certificate/key pairs and client-certificate trust of a server (spec 04 §7.3)."""

    certfiles: list[str] = field(default_factory=list)
    keyfiles: list[str] = field(default_factory=list)
    cafile: str | None = None
    cadir: str | None = None
    use_default_cas: bool = True
    require_client_certificate: bool = False
    context: ssl.SSLContext | None = field(default=None, repr=False)

    def available(self) -> bool:
        """Whether a certificate/key pair is readable (a daemon offers SSL only then)."""
        if self.context is not None:
            return True
        return any(
            os.access(c, os.R_OK) and os.access(k, os.R_OK)
            for c, k in zip(self.certfiles, self.keyfiles, strict=False)
        )

    def build_context(self) -> ssl.SSLContext:
        """A server context; every readable cert/key pair is loaded; client certs requested."""
        if self.context is not None:
            return self.context
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        loaded = 0
        for cert, key in zip(self.certfiles, self.keyfiles, strict=False):
            if os.access(cert, os.R_OK) and os.access(key, os.R_OK):
                ctx.load_cert_chain(cert, key)
                loaded += 1
        if not loaded:
            raise TlsFailure("no readable server certificate and key (AUTH_SSL_SERVER_CERTFILE)")
        ctx.verify_mode = (
            ssl.CERT_REQUIRED if self.require_client_certificate else ssl.CERT_OPTIONAL
        )
        if self.cafile or self.cadir:
            ctx.load_verify_locations(cafile=self.cafile, capath=self.cadir)
        if self.use_default_cas:
            ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        return ctx


def host_matches(cert: dict[str, Any], host: str) -> bool:
    """The reference's host check: DNS SANs label by label (``*`` ends a label), else the CN."""
    wanted = host.lower().split(".")
    sans = [value for kind, value in cert.get("subjectAltName", ()) if kind == "DNS"]
    for san in sans:
        labels = san.lower().split(".")
        if len(labels) != len(wanted):
            continue
        if all(_label_matches(p, w) for p, w in zip(labels, wanted, strict=True)):
            return True
    if sans:
        return False
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and value.lower() == host.lower():
                return True
    return False


def _label_matches(pattern: str, label: str) -> bool:
    star = pattern.find("*")
    if star < 0:
        return pattern == label
    return label.startswith(pattern[:star])


_DN_KEYS = {
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "commonName": "CN",
    "emailAddress": "emailAddress",
    "domainComponent": "DC",
}


def oneline_dn(cert: dict[str, Any]) -> str:
    """The subject in OpenSSL one-line form, e.g. ``/C=US/O=authlab/CN=alice``."""
    parts = []
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            parts.append(f"/{_DN_KEYS.get(key, key)}={value}")
    return "".join(parts)


class _Engine:
    """One TLS endpoint over memory BIOs."""

    def __init__(self, context: ssl.SSLContext, *, server_side: bool) -> None:
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=server_side)
        self.error: str | None = None

    def handshake(self) -> int:
        try:
            self.tls.do_handshake()
        except ssl.SSLWantReadError:
            return RECEIVING
        except ssl.SSLWantWriteError:
            return SENDING
        except ssl.SSLCertVerificationError as exc:
            self.error = f"certificate verification failed: {exc.verify_message}"
            return QUITTING
        except ssl.SSLError as exc:
            self.error = f"TLS handshake failed: {exc.reason or exc}"
            return QUITTING
        return HOLDING

    def pending(self) -> bytes:
        return self.outgoing.read()

    def feed(self, data: bytes) -> None:
        if data:
            self.incoming.write(data)


def _send_data(conn: CedarConnection, status: int, data: bytes) -> Send:
    return Send(conn.writer().put_int(status).put_int(len(data)).put_bytes(data))


def _receive_data(engine: _Engine | None) -> Protocol[int]:
    message = yield Receive()
    status = message.get_int32()
    length = message.get_int()
    if length < 0 or length > MAX_DATA:
        raise ProtocolError(f"SSL data message length {length} out of range")
    data = message.get_bytes(length)
    message.end_of_message()
    if engine is not None and status not in (QUITTING, ERROR):
        engine.feed(data)
    return QUITTING if status == ERROR else status


def _handshake_rounds(conn: CedarConnection, engine: _Engine, *, client: bool) -> Protocol[None]:
    """Phase 1: alternate data messages until both sides hold a finished handshake."""
    mine, theirs = RECEIVING, RECEIVING
    for r in range(1 if client else 0, MAX_ROUNDS):
        if mine != HOLDING:
            mine = engine.handshake()
        if r % 2 == 1:  # both roles send on odd rounds; the client starts at 1, the server at 0
            yield _send_data(conn, mine, engine.pending())
        else:
            theirs = yield from _receive_data(engine)
        if mine == QUITTING:
            raise TlsFailure(engine.error or "TLS handshake failed")
        if theirs == QUITTING:
            raise TlsFailure("the peer aborted the TLS handshake (it did not accept our side)")
        if mine == HOLDING and theirs == HOLDING:
            return
    raise TlsFailure("TLS handshake did not finish")


def _write_rounds(
    conn: CedarConnection,
    engine: _Engine,
    payload: bytes,
    *,
    first_round: int,
    rejected: str,
    unfinished: str,
) -> Protocol[None]:
    """Write ``payload`` through TLS, then alternate data messages, ours first, until the peer
    holds it too: the server's phase 2 (the key) and the client's phase 3 (the SciToken)."""
    engine.tls.write(payload)
    theirs = RECEIVING
    for r in range(first_round, MAX_ROUNDS):
        if (r - first_round) % 2 == 0:
            yield _send_data(conn, HOLDING, engine.pending())
        else:
            theirs = yield from _receive_data(engine)
        if theirs == QUITTING:
            raise TlsFailure(rejected)
        if theirs == HOLDING:
            return
    raise TlsFailure(unfinished)


def _server_key_rounds(conn: CedarConnection, engine: _Engine, key: bytes) -> Protocol[None]:
    """Phase 2, server: write ``W`` through TLS and wait for the client to hold it."""
    yield from _write_rounds(
        conn,
        engine,
        key,
        first_round=0,
        rejected="the client aborted after the TLS handshake",
        unfinished="key transfer did not finish",
    )


def _client_key_rounds(conn: CedarConnection, engine: _Engine) -> Protocol[bytes]:
    """Phase 2, client: read the server's 256 bytes of ``W``."""
    mine, theirs = RECEIVING, RECEIVING
    key = b""
    for r in range(1, MAX_ROUNDS):
        if mine != HOLDING:
            try:
                key += engine.tls.read(SESSION_KEY_SIZE - len(key))
                mine = HOLDING if len(key) >= SESSION_KEY_SIZE else RECEIVING
            except ssl.SSLWantReadError:
                mine = RECEIVING
            except ssl.SSLError as exc:
                engine.error = f"reading the session key failed: {exc.reason or exc}"
                mine = QUITTING
        if r % 2 == 1:
            theirs = yield from _receive_data(engine)
        else:
            yield _send_data(conn, mine, engine.pending())
        if theirs == QUITTING:
            raise TlsFailure("the server aborted the key transfer")
        if mine == QUITTING:
            raise TlsFailure(engine.error or "key transfer failed")
        if mine == HOLDING and theirs == HOLDING:
            return key
    raise TlsFailure("key transfer did not finish")


@dataclass
class TlsOutcome:
    """Result of the TLS part: success or the reason, the key ``W``, the peer certificate."""

    success: bool
    error: str | None = None
    material: bytes | None = field(default=None, repr=False)
    peer_cert: dict[str, Any] | None = None
    peer_dn: str | None = None
    detail: Any = None


def _succeed(
    conn: CedarConnection,
    engine: _Engine,
    key: bytes,
    cert: dict[str, Any] | None,
    phase3: Callable[[CedarConnection, _Engine], Protocol[Any]] | None,
) -> Protocol[TlsOutcome]:
    """After the key transfer, both roles: the optional phase 3, then the successful outcome."""
    detail = None
    if phase3 is not None:
        detail = yield from phase3(conn, engine)
    return TlsOutcome(
        True,
        material=key,
        peer_cert=cert,
        peer_dn=oneline_dn(cert) if cert else None,
        detail=detail,
    )


def client_tls(
    conn: CedarConnection,
    settings: TlsClientSettings,
    *,
    with_certificate: bool = True,
    ready: bool = True,
    phase3: Callable[[CedarConnection, _Engine], Protocol[Any]] | None = None,
) -> Protocol[TlsOutcome]:
    """The client side of phases 0-2 (and an optional phase 3, for SCITOKENS).

    ``ready=False`` makes the client answer phase 0 with ``-1`` (e.g. no SciToken found).
    """
    context: ssl.SSLContext | None = None
    error: str | None = None if ready else "no credential to present"
    if ready:
        try:
            context = settings.build_context(with_certificate=with_certificate)
        except (OSError, ssl.SSLError, ValueError) as exc:
            error = f"cannot set up TLS: {exc}"
    message = yield Receive()
    server_status = message.get_int32()
    message.end_of_message()
    yield Send(conn.writer().put_int(A_OK if error is None else ERROR))
    if error is not None:
        return TlsOutcome(False, error)
    if server_status != A_OK:
        return TlsOutcome(False, "the server could not set up TLS (no certificate?)")
    assert context is not None
    engine = _Engine(context, server_side=False)
    try:
        yield from _handshake_rounds(conn, engine, client=True)
        cert = engine.tls.getpeercert()
        check_error = _client_post_check(settings, cert)
        if check_error is not None:
            status = yield from _receive_data(None)
            if status != QUITTING:
                yield _send_data(conn, QUITTING, b"")
            return TlsOutcome(False, check_error)
        key = yield from _client_key_rounds(conn, engine)
        return (yield from _succeed(conn, engine, key, cert, phase3))
    except TlsFailure as exc:
        return TlsOutcome(False, str(exc))


def _client_post_check(settings: TlsClientSettings, cert: dict[str, Any] | None) -> str | None:
    if not cert:
        return "the server presented no certificate"
    if settings.skip_host_check:
        return None
    host = settings.expected_host
    if not host:
        return (
            "no SSL host name to check the server certificate against (the server address "
            "has no alias; set SSL_SKIP_HOST_CHECK to skip the check)"
        )
    if not host_matches(cert, host):
        return f"the server certificate does not match the host name {host!r}"
    return None


def server_tls(
    conn: CedarConnection,
    settings: TlsServerSettings,
    *,
    phase3: Callable[[CedarConnection, _Engine], Protocol[Any]] | None = None,
) -> Protocol[TlsOutcome]:
    """The server side of phases 0-2 (and an optional phase 3)."""
    context: ssl.SSLContext | None = None
    error: str | None = None
    try:
        context = settings.build_context()
    except TlsFailure as exc:
        error = str(exc)
    except (OSError, ssl.SSLError, ValueError) as exc:
        error = f"cannot set up TLS: {exc}"
    yield Send(conn.writer().put_int(A_OK if error is None else ERROR))
    message = yield Receive()
    client_status = message.get_int32()
    message.end_of_message()
    if error is not None:
        return TlsOutcome(False, error)
    if client_status != A_OK:
        return TlsOutcome(False, "the client could not start TLS (no credential?)")
    assert context is not None
    engine = _Engine(context, server_side=True)
    try:
        yield from _handshake_rounds(conn, engine, client=False)
        cert = engine.tls.getpeercert() or None
        key = secrets.token_bytes(SESSION_KEY_SIZE)
        yield from _server_key_rounds(conn, engine, key)
        return (yield from _succeed(conn, engine, key, cert, phase3))
    except TlsFailure as exc:
        return TlsOutcome(False, str(exc))


# -- phase 3: the SciToken ----------------------------------------------------------------------

_LENGTH = struct.Struct(">I")


def client_send_token(token: str) -> Callable[[CedarConnection, _Engine], Protocol[None]]:
    """Phase 3, client: write ``len ‖ token`` through TLS; the server answers HOLDING/QUITTING."""
    blob = _LENGTH.pack(len(token.encode())) + token.encode()

    def run(conn: CedarConnection, engine: _Engine) -> Protocol[None]:
        yield from _write_rounds(
            conn,
            engine,
            blob,
            first_round=1,
            rejected="the server rejected our SciToken",
            unfinished="token transfer did not finish",
        )

    return run


def server_receive_token(
    validate: Callable[[str], Any],
) -> Callable[[CedarConnection, _Engine], Protocol[Any]]:
    """Phase 3, server: read the token and answer HOLDING if ``validate`` accepts it.

    ``validate`` returns a result object or raises ``ValueError`` with the reason.
    """

    def run(conn: CedarConnection, engine: _Engine) -> Protocol[Any]:
        mine, theirs = RECEIVING, RECEIVING
        buffer = b""
        result: Any = None
        reason: str | None = None
        for r in range(MAX_ROUNDS):
            if mine not in (HOLDING, QUITTING):
                try:
                    while True:
                        buffer += engine.tls.read(MAX_DATA)
                except ssl.SSLWantReadError:
                    pass
                except ssl.SSLError as exc:
                    reason, mine = f"reading the token failed: {exc.reason or exc}", QUITTING
                if mine != QUITTING and len(buffer) >= 4:
                    (length,) = _LENGTH.unpack_from(buffer)
                    if length == 0 or length > MAX_DATA:
                        reason, mine = f"SciToken length {length} out of range", QUITTING
                    elif len(buffer) >= 4 + length:
                        text = buffer[4 : 4 + length].decode("utf-8", "replace")
                        try:
                            result = validate(text)
                            mine = HOLDING
                        except ValueError as exc:
                            reason, mine = str(exc), QUITTING
            if r % 2 == 0:
                theirs = yield from _receive_data(engine)
            else:
                yield _send_data(conn, mine, engine.pending())
                if mine == QUITTING:
                    raise TlsFailure(reason or "SciToken rejected")
            if theirs == QUITTING:
                raise TlsFailure("the client aborted the token transfer")
            if mine == HOLDING and theirs == HOLDING:
                return result
        raise TlsFailure("token transfer did not finish")

    return run


__all__ = [
    "HOLDING",
    "MAX_INTEROPERABLE_SCITOKEN",
    "QUITTING",
    "RECEIVING",
    "TlsClientSettings",
    "TlsOutcome",
    "TlsServerSettings",
    "client_send_token",
    "client_tls",
    "host_matches",
    "oneline_dn",
    "server_receive_token",
    "server_tls",
]
