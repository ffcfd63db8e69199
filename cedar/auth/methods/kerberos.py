"""KERBEROS (method bit 64), both roles (spec 10): the AP-REQ/AP-REP exchange in CEDAR framing.

Client: the service ticket for ``<KERBEROS_SERVER_SERVICE>/<reverse name of the peer>`` comes from
the user's FILE credential cache (``KRB5CCNAME``, ``krb5.conf``'s default, ``/tmp/krb5cc_<uid>``)
or from a TGS exchange with the realm's KDC (:mod:`cedar.auth.krb5.kdc`).  Server: the AP-REQ is
checked with the keys of ``KERBEROS_SERVER_KEYTAB`` (any principal in it, as the reference), a
replay cache refuses an authenticator seen before (the 25.13.2 schedd has none, spec 10 §5.5),
and the client principal is mapped as spec 10 §4.3 says.

Options (``ctx.options``, else the configuration): ``KERBEROS_SERVER_SERVICE``,
``KERBEROS_SERVER_KEYTAB``, ``KERBEROS_SERVER_PRINCIPAL``, ``KERBEROS_SERVER_USER``,
``KERBEROS_MAP_FILE``, ``CERTIFICATE_MAPFILE``, ``KRB5CCNAME`` (overrides the environment);
Python objects: ``kerberos_clock`` (a ``time.time``-like callable), ``kerberos_replay_cache``
(a :class:`ReplayCache`), ``kerberos_service_host`` (the host part of the service principal
instead of the reverse lookup), ``kerberos_ccache`` (a
:class:`~cedar.auth.krb5.files.CredentialCache` instead of a file), ``kerberos_krb5_conf`` (a
:class:`~cedar.auth.krb5.files.Krb5Config` instead of ``krb5.conf``), ``kerberos_realms`` (realm
-> domain, instead of ``KERBEROS_MAP_FILE``).
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cedar.auth.errors import KerberosError
from cedar.auth.krb5.crypto import Key, decrypt, encrypt
from cedar.auth.krb5.files import (
    Credential,
    CredentialCache,
    KeytabEntry,
    Krb5Config,
    default_ccache_name,
    load_krb5_conf,
    read_ccache,
    read_keytab,
)
from cedar.auth.krb5.kdc import KDC_TIMEOUT, service_ticket
from cedar.auth.krb5.messages import (
    NT_SRV_HST,
    USAGE_AP_REQ_AUTH,
    Authenticator,
    Principal,
    TicketContents,
    build_ap_rep,
    build_ap_req,
    check_ap_rep,
    open_ticket,
    parse_ap_req,
    random_seq,
)
from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.auth.methods._credentials import knob, knob_bool
from cedar.errors import ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Offload, Protocol, Receive, Send

if TYPE_CHECKING:
    from cedar.auth.scitoken import MapFile

log = logging.getLogger(__name__)

KERBEROS_BIT = 0x0040
READY, DENY, GRANT, MUTUAL, ABORT = 4, 0, 1, 3, -1
#: Allowed clock difference (s) between the authenticator and the server, as MIT's default.
CLOCK_SKEW = 300
#: Largest AP-REQ/AP-REP accepted (a ticket with a large PAC is a few KiB).
MAX_KRB_MESSAGE = 64 * 1024
#: Key usage of the legacy session-key wrap (spec 10 §6.3).
USAGE_LEGACY_KEY = 1024


class ReplayCache:
    """Authenticators seen within the skew window; a second sight is a replay.

    Bounded: entries expire ``2 * CLOCK_SKEW`` after their ctime; when ``limit`` live entries
    are held the cache refuses new authentications (fail closed) rather than forget one.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self._seen: dict[tuple[str, str, int, int], float] = {}
        self._lock = threading.Lock()
        self.limit = limit

    def check_and_add(self, key: tuple[str, str, int, int], now: float) -> str | None:
        """``None`` when new (and remember it), else why it is refused."""
        with self._lock:
            if key in self._seen:
                return "replayed authenticator (seen before within the clock-skew window)"
            if len(self._seen) >= self.limit:
                self._seen = {k: t for k, t in self._seen.items() if t > now}
                if len(self._seen) >= self.limit:
                    return "replay cache full; refusing until entries expire"
            self._seen[key] = key[2] + 2 * CLOCK_SKEW
            return None


_process_replay_cache = ReplayCache()


def _clock(ctx: AuthContext) -> Callable[[], float]:
    clock = ctx.options.get("kerberos_clock")
    return clock if callable(clock) else time.time


def _service(ctx: AuthContext) -> str:
    return knob(ctx, "KERBEROS_SERVER_SERVICE") or "host"


def service_host(ctx: AuthContext) -> str:
    """The host part of the target principal: the reverse name of the peer's address (§4.1)."""
    explicit = ctx.options.get("kerberos_service_host")
    if isinstance(explicit, str):
        return explicit
    if ctx.peer_address is None:
        raise KerberosError("the server's address is unknown, so is its Kerberos principal")
    try:
        name, _port = socket.getnameinfo((ctx.peer_address[0], 0), socket.NI_NAMEREQD)
    except OSError:
        name = ""
    return name.lower()


def legacy_wrappers(session: Key) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
    """The K1 key wrap under the ticket session key (spec 10 §6.3), both directions."""

    def wrap(data: bytes) -> bytes:
        sealed = encrypt(session, USAGE_LEGACY_KEY, data)
        return struct.pack(">III", session.etype, 0, len(sealed)) + sealed

    def unwrap(data: bytes) -> bytes:
        if len(data) < 12:
            raise ProtocolError("the wrapped Kerberos session key is too short")
        _etype, _kvno, size = struct.unpack(">III", data[:12])
        if size != len(data) - 12:
            raise ProtocolError("the wrapped Kerberos session key has a bad length")
        return decrypt(session, USAGE_LEGACY_KEY, data[12:])

    return wrap, unwrap


def _read_blob(conn: CedarConnection) -> Protocol[bytes]:
    """``I(4) I(n) B(n)`` EOM (K-Q, K-P); anything else is a protocol error."""
    message: MessageReader = yield Receive()
    marker = message.get_int()
    if marker != READY:
        raise ProtocolError(f"KERBEROS: expected a Kerberos message, got control word {marker}")
    size = message.get_int()
    if not 0 < size <= MAX_KRB_MESSAGE:
        raise ProtocolError(f"KERBEROS: implausible Kerberos message length {size}")
    data = message.get_bytes(size)
    message.end_of_message()
    return data


def _read_word(conn: CedarConnection) -> Protocol[int]:
    message: MessageReader = yield Receive()
    value = message.get_int()
    message.end_of_message()
    return value


class Kerberos(AuthMethod):
    """KERBEROS: a service ticket and mutual authentication (RFC 4120 AP exchange)."""

    name = "KERBEROS"
    bit = KERBEROS_BIT

    # -- client ---------------------------------------------------------------------------------

    def client_credential(
        self, ctx: AuthContext, limit: float = KDC_TIMEOUT
    ) -> tuple[Credential, Principal]:
        """The service ticket for this server and the target principal (raises KerberosError);
        a KDC exchange takes at most ``limit`` seconds."""
        conf = ctx.options.get("kerberos_krb5_conf")
        if not isinstance(conf, Krb5Config):
            conf = load_krb5_conf()
        cache = ctx.options.get("kerberos_ccache")
        if not isinstance(cache, CredentialCache):
            cache = read_ccache(knob(ctx, "KRB5CCNAME") or default_ccache_name(conf))
        realm = conf.default_realm or cache.principal.realm
        target = Principal((_service(ctx), service_host(ctx)), realm, NT_SRV_HST)
        return service_ticket(cache, target, conf, _clock(ctx), timeout=limit), target

    def _credential_or_error(
        self, ctx: AuthContext, limit: float
    ) -> tuple[Credential, Principal] | KerberosError:
        """:meth:`client_credential` for an :class:`Offload`: the error is a value."""
        try:
            return self.client_credential(ctx, min(limit, KDC_TIMEOUT))
        except KerberosError as exc:
            return exc

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """K-R, K-Q; then K-M, K-P from the server, K-G, and the server's verdict K-F."""
        # The reverse lookup and the KDC exchange block: off the connection's loop (Offload).
        found = yield Offload(lambda limit: self._credential_or_error(ctx, limit))
        if isinstance(found, KerberosError):
            exc = found
            log.info("KERBEROS: %s", exc)
            yield Send(conn.writer().put_int(ABORT))
            return MethodResult.failed(f"KERBEROS: {exc}")
        cred, target = found
        now = _clock(ctx)()
        usec = round(now * 1e6) % 1_000_000
        auth = Authenticator(cred.client, now, usec, Key.random(cred.key.etype), random_seq())
        ap_req = build_ap_req(cred.ticket, cred.key, auth, USAGE_AP_REQ_AUTH)
        yield Send(conn.writer().put_int(READY), flush=False)
        yield Send(conn.writer().put_int(READY).put_int(len(ap_req)).put_bytes(ap_req))
        answer = yield from _read_word(conn)
        if answer not in (MUTUAL, DENY):  # out of step (spec 10 §5 hazard b): stop here
            raise ProtocolError(f"KERBEROS: the server answered {answer} to our AP-REQ")
        if answer == DENY:
            return MethodResult.failed(
                f"KERBEROS: the server refused our ticket for {target} (not in its keytab, "
                "clock skew, or an expired ticket; its log says which)"
            )
        ap_rep = yield from _read_blob(conn)
        try:
            check_ap_rep(ap_rep, cred.key, auth)
        except KerberosError as exc:  # the server is not who the ticket is for: stop here
            raise ProtocolError(f"KERBEROS: mutual authentication failed: {exc}") from None
        yield Send(conn.writer().put_int(GRANT))
        verdict = yield from _read_word(conn)
        if verdict != GRANT:
            return MethodResult.failed(f"KERBEROS: the server could not map {cred.client}")
        wrap, unwrap = legacy_wrappers(cred.key)
        return MethodResult(
            True, wrap_key=wrap, unwrap_key=unwrap, extra={"client_principal": str(cred.client)}
        )

    # -- server ---------------------------------------------------------------------------------

    def server_keys(self, ctx: AuthContext) -> list[KeytabEntry]:
        """The keytab's keys: ``KERBEROS_SERVER_KEYTAB``, ``KRB5_KTNAME``, ``/etc/krb5.keytab``."""
        name = (
            knob(ctx, "KERBEROS_SERVER_KEYTAB")
            or os.environ.get("KRB5_KTNAME")
            or "/etc/krb5.keytab"
        )
        return read_keytab(name)

    def server_available(self, ctx: AuthContext) -> bool:
        """Offered only with a readable keytab holding at least one AES key."""
        try:
            return bool(self.server_keys(ctx))
        except KerberosError:
            return False

    def verify(self, ap_req: bytes, ctx: AuthContext) -> tuple[TicketContents, Authenticator]:
        """Check an AP-REQ: key, ticket times, authenticator, skew, replay, addresses."""
        ticket, sealed = parse_ap_req(ap_req)
        entries = [
            e
            for e in self.server_keys(ctx)
            if e.principal.same_name(ticket.server) and e.key.etype == ticket.enc_part.etype
        ]
        if not entries:
            raise KerberosError(f"the ticket is for {ticket.server}, which is not in our keytab")
        kvno = ticket.enc_part.kvno
        entries.sort(key=lambda e: (e.kvno == kvno, e.kvno), reverse=True)
        contents = open_ticket(ticket, entries[0].key)
        auth = Authenticator.decode(sealed.open(contents.session_key, USAGE_AP_REQ_AUTH))
        now = _clock(ctx)()
        if not auth.client.same_name(contents.client):
            raise KerberosError("the authenticator's client is not the ticket's")
        if abs(auth.ctime - now) > CLOCK_SKEW:
            raise KerberosError("clock skew too great")
        if contents.endtime < now - CLOCK_SKEW:
            raise KerberosError("the ticket has expired")
        if (contents.starttime or contents.authtime) > now + CLOCK_SKEW:
            raise KerberosError("the ticket is not yet valid")
        self._check_address(contents, ctx)
        cache = ctx.options.get("kerberos_replay_cache")
        replays = cache if isinstance(cache, ReplayCache) else _process_replay_cache
        key = (str(auth.client), str(ticket.server), int(auth.ctime), auth.cusec)
        refusal = replays.check_and_add(key, now)
        if refusal is not None:
            raise KerberosError(refusal)
        return contents, auth

    def _check_address(self, contents: TicketContents, ctx: AuthContext) -> None:
        if not contents.addresses or knob_bool(ctx, "DISABLE_AUTHENTICATION_IP_CHECK", False):
            return
        peer = ctx.peer_address[0] if ctx.peer_address else ""
        try:
            family = socket.AF_INET6 if ":" in peer else socket.AF_INET
            if socket.inet_pton(family, peer) == contents.addresses[0]:
                return
        except OSError:
            pass
        raise KerberosError("the ticket's address is not the connection's")

    def map_principal(self, principal: Principal, ctx: AuthContext) -> tuple[str, str]:
        """``(user, domain)`` of a client principal (spec 10 §4.3); KerberosError if unmapped."""
        text = str(principal)
        certificate_map = _certificate_mapfile(ctx)
        if certificate_map is not None:
            mapped = certificate_map.map("KERBEROS", text)
            if mapped is not None:
                user, sep, domain = mapped.rpartition("@")
                return (user, domain) if sep else (mapped, ctx.uid_domain)
        server_principal = knob(ctx, "KERBEROS_SERVER_PRINCIPAL")
        server_user = knob(ctx, "KERBEROS_SERVER_USER")
        if server_principal and server_principal == text and server_user:
            user = server_user
        else:
            user = principal.components[0] if principal.components else ""
        if user == _service(ctx):
            user = server_user or "condor"
        return user, _map_realm(principal.realm, ctx)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Read K-R and K-Q, answer K-M and K-P, read K-G, answer K-F (spec 10 §8)."""
        ready = yield from _read_word(conn)
        if ready != READY:
            return MethodResult.failed("KERBEROS: the client has no Kerberos credentials")
        ap_req = yield from _read_blob(conn)
        try:
            contents, auth = self.verify(ap_req, ctx)
        except KerberosError as exc:
            log.info("KERBEROS authentication failed: %s", exc)
            yield Send(conn.writer().put_int(DENY))
            return MethodResult.failed(f"KERBEROS: {exc}")
        ap_rep = build_ap_rep(contents.session_key, auth, random_seq())
        yield Send(conn.writer().put_int(MUTUAL), flush=False)
        yield Send(conn.writer().put_int(READY).put_int(len(ap_rep)).put_bytes(ap_rep))
        confirmed = yield from _read_word(conn)
        if confirmed != GRANT:  # stricter than the reference, which ignores it (§5 hazard a)
            raise ProtocolError(f"KERBEROS: the client answered {confirmed} to our AP-REP")
        try:
            user, domain = self.map_principal(contents.client, ctx)
        except KerberosError as exc:
            log.info("KERBEROS: %s", exc)
            yield Send(conn.writer().put_int(DENY))
            return MethodResult.failed(f"KERBEROS: {exc}")
        yield Send(conn.writer().put_int(GRANT))
        wrap, unwrap = legacy_wrappers(contents.session_key)
        return MethodResult(
            True,
            user=user,
            domain=domain,
            authenticated_name=str(contents.client),
            wrap_key=wrap,
            unwrap_key=unwrap,
        )


def _certificate_mapfile(ctx: AuthContext) -> MapFile | None:
    """``CERTIFICATE_MAPFILE`` (imported only when one is configured: it lives with SSL's)."""
    if not knob(ctx, "CERTIFICATE_MAPFILE") and ctx.options.get("certificate_mapfile") is None:
        return None
    from cedar.auth.methods.ssl_methods import mapfile

    return mapfile(ctx)


def _map_realm(realm: str, ctx: AuthContext) -> str:
    """The realm through ``KERBEROS_MAP_FILE`` (a missing realm fails), else the realm as is."""
    given = ctx.options.get("kerberos_realms")
    if isinstance(given, dict):
        if realm not in given:
            raise KerberosError(f"realm {realm} is not in the realm map")
        return str(given[realm])
    path = knob(ctx, "KERBEROS_MAP_FILE")
    if not path:
        return realm
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1024 * 1024)
    except OSError:
        return realm  # the reference uses the realm when the file cannot be opened
    for line in text.splitlines():
        tokens = line.replace("=", " ").split()
        if len(tokens) >= 2 and not tokens[0].startswith("#") and tokens[0] == realm:
            return tokens[1]
    raise KerberosError(f"realm {realm} is not in KERBEROS_MAP_FILE {path}")


__all__ = ["CLOCK_SKEW", "Kerberos", "ReplayCache", "legacy_wrappers", "service_host"]
