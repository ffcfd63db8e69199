"""The conformance checks, the target they run against, and the runner that records outcomes."""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cedar.auth import ClientSecurity, CommandDenied, SecurityConfig
from cedar.auth.client import CommandSession
from cedar.auth.policy import Requirement
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd
from cedar.commands import Collector, Schedd, ping, run_command
from cedar.commands.collector import build_query_ad, query_protocol
from cedar.commands.ping import PingResult
from cedar.errors import AuthenticationError, CedarConnectionError, CedarError
from cedar.numbers import AdType, DaemonType
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import SyncChannel
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive
from cedar.submit_language import Submit

#: The ad types every check of the query family covers, with the MyType their ads must carry.
QUERY_TYPES: list[tuple[AdType, str | None]] = [
    (AdType.SLOT, "Machine"),
    (AdType.START_DAEMON, "StartD"),
    (AdType.SCHEDD, "Scheduler"),
    (AdType.MASTER, "DaemonMaster"),
    (AdType.COLLECTOR, "Collector"),
    (AdType.NEGOTIATOR, "Negotiator"),
    (AdType.SUBMITTER, "Submitter"),
    (AdType.ACCOUNTING, "Accounting"),
    (AdType.GENERIC, None),
    (AdType.ANY, None),
]

#: How many received bytes a failure report keeps (the last ones: where it went wrong).
OBSERVED_LIMIT = 512


class Skipped(Exception):
    """The check does not apply to this target (the message says why)."""


class CheckFailed(Exception):
    """The daemon did something the protocol does not allow (the message says what)."""


@dataclass
class Target:
    """A pool under test and the credentials the checks may use (none are required)."""

    pool: str
    token_dir: str | None = None
    scitoken_file: str | None = None
    ssl_cafile: str | None = None
    write_method: str | None = None
    claim_user: str = "cedar-conformance"
    fs: bool | None = None  # FS usable (the daemons' file system is ours); None: loopback pools
    iwd: str = "/tmp"
    timeout: float = 20.0

    def security(self, methods: list[str], **settings: object) -> ClientSecurity:
        """A fresh client security (own session cache) offering ``methods``."""
        options: dict[str, object] = {"SEC_CLAIMTOBE_USER": self.claim_user}
        if self.token_dir:
            options["SEC_TOKEN_DIRECTORY"] = self.token_dir
        if self.scitoken_file:
            options["SCITOKENS_FILE"] = self.scitoken_file
        if self.ssl_cafile:
            options.update(AUTH_SSL_CLIENT_CAFILE=self.ssl_cafile, SSL_SKIP_HOST_CHECK=True)
        options.update(settings.pop("options", {}))  # type: ignore[call-overload]
        settings.setdefault("authentication", "REQUIRED")
        config = SecurityConfig(methods=methods, options=options, **settings)  # type: ignore[arg-type]
        return ClientSecurity(config)

    def write_security(self) -> ClientSecurity:
        """Credentials that may own jobs, or :class:`Skipped`."""
        method = self.write_method
        if method is None:
            method = "TOKEN" if self.token_dir else "SCITOKENS" if self.scitoken_file else None
        if method is None:
            raise Skipped("no write credentials (give --token-dir, --scitoken or --write-method)")
        return self.security([method])

    def collector(self, security: ClientSecurity | None = None) -> Collector:
        """A collector client; by default raw (READ needs no authentication in a normal pool)."""
        security = security or ClientSecurity(SecurityConfig(negotiation=Requirement.NEVER))
        return Collector(self.pool, security=security, timeout=self.timeout)

    def schedd_ad(self) -> ClassAd:
        """The first schedd ad of the pool, or :class:`Skipped`."""
        ads = self.collector().query(AdType.SCHEDD, limit=1)
        if not ads:
            raise Skipped("the collector advertises no schedd")
        return ads[0]

    def is_local(self) -> bool:
        """FS authentication needs the daemons' file system: assumed for loopback pools."""
        if self.fs is not None:
            return self.fs
        host = self.pool.strip("<>").split("?")[0].rpartition(":")[0] or self.pool
        return host in ("127.0.0.1", "localhost", "::1", socket.gethostname())


@dataclass(frozen=True)
class Check:
    """One named check; ``run`` returns a short detail when it passes."""

    name: str
    run: Callable[[Target], str]
    doc: str


@dataclass
class Outcome:
    """The result of one check against one target."""

    name: str
    status: str  # "pass" | "fail" | "skip"
    detail: str
    observed: bytes = field(default=b"", repr=False)

    def as_dict(self) -> dict[str, str]:
        """JSON-ready form (observed bytes as hex)."""
        return {
            "check": self.name,
            "status": self.status,
            "detail": self.detail,
            "observed": self.observed.hex(),
        }


CHECKS: list[Check] = []


def check(name: str) -> Callable[[Callable[[Target], str]], Callable[[Target], str]]:
    """Register a check under ``name`` (its docstring is what it verifies)."""

    def register(function: Callable[[Target], str]) -> Callable[[Target], str]:
        CHECKS.append(Check(name, function, (function.__doc__ or "").strip().split("\n")[0]))
        return function

    return register


_tap = threading.local()


@contextlib.contextmanager
def _observed() -> Iterator[bytearray]:
    """Record the bytes our connections receive while a check runs (the tail goes in reports).

    Wraps :meth:`CedarConnection.receive_data` for the duration, per thread, so no check needs its
    own transport."""
    seen = bytearray()
    original = CedarConnection.receive_data
    if not getattr(CedarConnection.receive_data, "_conformance_tap", False):

        def receive_data(self: CedarConnection, data: bytes) -> None:
            buffer = getattr(_tap, "buffer", None)
            if buffer is not None:
                buffer.extend(data)
                del buffer[:-OBSERVED_LIMIT]
            original(self, data)

        receive_data._conformance_tap = True  # type: ignore[attr-defined]
        CedarConnection.receive_data = receive_data  # type: ignore[method-assign]
        restore = True
    else:
        restore = False
    _tap.buffer = seen
    try:
        yield seen
    finally:
        _tap.buffer = None
        if restore:
            CedarConnection.receive_data = original  # type: ignore[method-assign]


def run_check(item: Check, target: Target) -> Outcome:
    """Run one check; never raises for what the daemon did (that is a ``fail``)."""
    with _observed() as seen:
        try:
            detail = item.run(target)
        except Skipped as exc:
            return Outcome(item.name, "skip", str(exc))
        except (CheckFailed, AssertionError, CedarError, OSError) as exc:
            message = str(exc) or type(exc).__name__
            return Outcome(item.name, "fail", f"{type(exc).__name__}: {message}", bytes(seen))
    return Outcome(item.name, "pass", detail)


def run_checks(target: Target, names: list[str] | None = None) -> list[Outcome]:
    """Run the checks (all, or those whose name starts with one of ``names``) in order."""
    chosen = [c for c in CHECKS if not names or any(c.name.startswith(n) for n in names)]
    return [run_check(item, target) for item in chosen]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def _authorized(result: PingResult, what: str) -> PingResult:
    _require(result.authorized, f"{what}: not authorized ({result.error})")
    return result


def _auth_methods(target: Target) -> list[str]:
    """What the generic checks offer: FS where it can work, CLAIMTOBE, the given tokens, and
    the write method (e.g. KERBEROS, for a pool that takes nothing else)."""
    methods = ["FS", "CLAIMTOBE"] if target.is_local() else ["CLAIMTOBE"]
    methods += ["TOKEN"] if target.token_dir else []
    methods += ["SCITOKENS"] if target.scitoken_file else []
    extra = target.write_method
    return methods + ([extra] if extra and extra.upper() not in methods else [])


def _read_ping(target: Target) -> PingResult:
    """DC_SEC_QUERY at READ offering the generic methods."""
    security = target.security(_auth_methods(target), authentication="PREFERRED")
    return ping(target.pool, "READ", security=security, timeout=target.timeout)


# --- handshake and policy ------------------------------------------------------------------


@check("handshake.sec_query")
def sec_query(target: Target) -> str:
    """DC_SEC_QUERY at READ with the default methods: authorized, with a version string."""
    result = _authorized(_read_ping(target), "READ")
    version = result.remote_version or ""
    _require(version.startswith("$CondorVersion: "), f"remote version {version!r}")
    return f"{result.method or 'unauthenticated'} as {result.user}, {version.strip('$')}"


@check("handshake.policy")
def policy(target: Target) -> str:
    """The level table for a claimed user (else our identity): READ allowed, refusals DENIED."""
    rows = []
    methods = ["CLAIMTOBE"]
    for level in ("READ", "WRITE", "ADMINISTRATOR", "DAEMON"):
        security = target.security(methods, authentication="PREFERRED")
        try:
            result = ping(target.pool, level, security=security, timeout=target.timeout)
        except AuthenticationError as exc:
            if "accepts none of the methods" not in str(exc) or methods != ["CLAIMTOBE"]:
                raise
            methods = _auth_methods(target)  # the pool does not offer CLAIMTOBE
            security = target.security(methods, authentication="PREFERRED")
            result = ping(target.pool, level, security=security, timeout=target.timeout)
        if not result.authorized:
            _require(
                'Received "DENIED"' in (result.error or ""),
                f"{level} refused without a DENIED answer: {result.error}",
            )
        rows.append(f"{level}={'yes' if result.authorized else 'DENIED'}")
    _require(rows[0] == "READ=yes", "READ is not authorized")
    return " ".join(rows)


@check("handshake.unknown_command")
def unknown_command(target: Target) -> str:
    """An unknown command number is refused by closing, and the daemon keeps serving."""

    def nothing(session: object) -> Protocol[None]:
        yield Receive()

    security = target.security(["CLAIMTOBE"], authentication="PREFERRED")
    try:
        run_command(target.pool, 12345, nothing, security=security, timeout=target.timeout)
    except CommandDenied:
        pass
    else:
        raise CheckFailed("command 12345 was accepted")
    _authorized(_read_ping(target), "READ after it")
    return "closed; still serving"


# --- authentication methods ----------------------------------------------------------------


def _method_ping(target: Target, method: str, level: str = "READ") -> PingResult:
    """Ping with only ``method``; skipped when the pool does not offer it."""
    try:
        result = ping(
            target.pool, level, security=target.security([method]), timeout=target.timeout
        )
    except AuthenticationError as exc:
        if "accepts none of the methods" in str(exc):
            raise Skipped(f"the pool does not offer {method}") from None
        raise
    _authorized(result, f"{method} at {level}")
    _require(result.method == method, f"authenticated with {result.method}, not {method}")
    _require(bool(result.user) and "@" in str(result.user), f"mapped user {result.user!r}")
    return result


@check("auth.fs")
def auth_fs(target: Target) -> str:
    """FS: the daemon maps us to a user and encrypts with AES-GCM."""
    if not target.is_local():
        raise Skipped("FS needs the daemons' file system (not this pool's, or --no-fs)")
    result = _method_ping(target, "FS")
    _require(result.encrypted and result.crypto == "AES", f"crypto {result.crypto}")
    return f"as {result.user}"


@check("auth.claimtobe")
def auth_claimtobe(target: Target) -> str:
    """CLAIMTOBE: the claimed user name comes back as the identity."""
    result = _method_ping(target, "CLAIMTOBE")
    user = str(result.user)
    _require(user.split("@")[0] == target.claim_user, f"claimed {target.claim_user}, got {user}")
    return f"as {user}"


@check("auth.claimtobe_clear")
def auth_claimtobe_clear(target: Target) -> str:
    """CLAIMTOBE with no crypto offered: a working clear-text session, or a clean refusal."""
    security = target.security(
        ["CLAIMTOBE"], crypto_methods=[], encryption="NEVER", integrity="NEVER"
    )
    try:
        result = ping(target.pool, "READ", security=security, timeout=target.timeout)
    except AuthenticationError as exc:  # READ takes clear text, but not this method
        if "accepts none of the methods" in str(exc):
            raise Skipped("the pool does not offer CLAIMTOBE") from None
        raise
    if result.authorized:
        _require(not result.encrypted, "encrypted although we offered no crypto method")
        return f"clear text as {result.user}"
    _require(bool(result.error), "refused without a reason")
    return f"refused in clear: {result.error}"


@check("auth.idtokens")
def auth_idtokens(target: Target) -> str:
    """IDTOKENS with the given token directory."""
    if not target.token_dir:
        raise Skipped("no --token-dir")
    result = _method_ping(target, "TOKEN")
    _require(result.encrypted and result.crypto == "AES", f"crypto {result.crypto}")
    return f"as {result.user}"


@check("auth.scitokens")
def auth_scitokens(target: Target) -> str:
    """SCITOKENS (inside TLS) with the given token, at READ and WRITE."""
    if not target.scitoken_file:
        raise Skipped("no --scitoken")
    result = _method_ping(target, "SCITOKENS", "WRITE")
    return f"as {result.user}"


@check("auth.kerberos")
def auth_kerberos(target: Target) -> str:
    """KERBEROS with the user's ticket cache (KRB5CCNAME or the default) at WRITE, AES-GCM."""
    from cedar.auth.errors import KerberosError
    from cedar.auth.krb5.files import default_ccache_name, load_krb5_conf, read_ccache

    try:
        cache = read_ccache(default_ccache_name(load_krb5_conf()))
    except KerberosError as exc:
        raise Skipped(f"no Kerberos ticket: {exc}") from None
    result = _method_ping(target, "KERBEROS", "WRITE")
    _require(result.encrypted and result.crypto == "AES", f"crypto {result.crypto}")
    return f"{cache.principal} as {result.user}"


class _RecordingChannel(SyncChannel):
    """A blocking connection that keeps every write (to send them again elsewhere)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writes: list[bytes] = []

    def _write(self, data: bytes, limit: float) -> None:
        self.writes.append(data)
        super()._write(data, limit)


def _answer_to_replay(target: Target, writes: list[bytes], address: str) -> int | None:
    """Send a recorded client's writes up to its AP-REQ on a new connection; the server's
    answer to that AP-REQ (its third message: M2, the chosen method, the answer), or None if it
    closed first."""
    host, port = Sinful.parse(address).endpoint
    conn = CedarConnection()
    with socket.create_connection((host, port), timeout=target.timeout) as sock:
        sock.sendall(b"".join(writes))
        received: list[MessageReader] = []
        while len(received) < 3:
            message = conn.next_message()
            if message is not None:
                received.append(message)
                continue
            chunk = sock.recv(65536)
            if not chunk:
                return None
            conn.receive_data(chunk)
    return received[2].get_int()


@check("auth.kerberos_replay_refused")
def auth_kerberos_replay_refused(target: Target) -> str:
    """A KERBEROS AP-REQ sent again on a new connection is refused (a replay cache; the 25.13.2
    schedd has none and accepts it, spec 10 §5.5)."""
    auth_kerberos(target)  # a ticket, and KERBEROS works at all (else Skipped or failed)
    from cedar.auth.permissions import DC_SEC_QUERY, NOP_FOR_LEVEL
    from cedar.commands.base import CommandAttempts
    from cedar.commands.ping import PingRequest

    address = str(target.schedd_ad().get("MyAddress"))
    security = target.security(["KERBEROS"])
    request = PingRequest("WRITE", security, target.timeout)
    nop = NOP_FOR_LEVEL["WRITE"]
    attempts = CommandAttempts(address, DC_SEC_QUERY, request.body, security=security,
                               timeout=target.timeout, raw=False, auth_command=nop,
                               permission_hint="WRITE")  # fmt: skip
    channel = _RecordingChannel(
        socket.create_connection((attempts.host, attempts.port), timeout=target.timeout),
        timeout=target.timeout,
        deadline=attempts.deadline,
    )
    with contextlib.closing(channel.sock):
        result: PingResult = channel.run(attempts.protocol(channel))
    _require(result.method == "KERBEROS", f"authenticated with {result.method}, not KERBEROS")
    # the client's last write is its confirmation after the AP-REP; the one before holds the AP-REQ
    _require(len(channel.writes) >= 3 and len(channel.writes[-1]) < 64, "no AP-REQ recorded")
    answer = _answer_to_replay(target, channel.writes[:-1], address)
    _require(answer != 3, "the replayed AP-REQ was accepted (answered MUTUAL): no replay cache")
    return "refused" if answer is None else f"refused (answered {answer})"


# --- crypto and sessions -------------------------------------------------------------------


def _query_session(target: Target, security: ClientSecurity) -> tuple[CommandSession, int]:
    """A projected slot query; returns the session it ran on and the number of ads."""
    query_ad = build_query_ad(AdType.SLOT, None, ["Name"])

    def body(session: CommandSession) -> Protocol[tuple[CommandSession, int]]:
        count = yield from query_protocol(session, query_ad)
        return session, count

    return run_command(
        target.pool, AdType.SLOT.command, body, security=security, timeout=target.timeout
    )


@check("crypto.aes_gcm")
def crypto_aes_gcm(target: Target) -> str:
    """An authenticated query runs under AES-GCM and every packet's tag verifies."""
    security = target.security(_auth_methods(target), encryption="PREFERRED")
    session, count = _query_session(target, security)
    if not session.encrypted:
        raise Skipped(f"the pool does not encrypt ({session.method} session in clear)")
    _require(session.crypto_method == "AES", f"crypto {session.crypto_method}")
    return f"{count} slot ads under AES-GCM"


@check("session.resumption")
def session_resumption(target: Target) -> str:
    """A second command resumes the cached session (encrypted as the first was)."""
    security = target.security(_auth_methods(target))
    first, _ = _query_session(target, security)
    if first.crypto_method is None and not first.encrypted:
        raise Skipped("the session has no key, and cedar never resumes a keyless session")
    second, _ = _query_session(target, security)
    _require(not first.resumed, "the first command claims a resumed session")
    _require(second.resumed, "the second command did not resume the session")
    _require(second.encrypted == first.encrypted, "the resumed session changed encryption")
    return "resumed, " + ("encrypted" if second.encrypted else "in clear")


@check("session.forgotten")
def session_forgotten(target: Target) -> str:
    """A session id the daemon does not know is refused, and a fresh handshake then works."""
    security = target.security(_auth_methods(target))
    _query_session(target, security)
    cache = security.sessions
    with cache._lock:  # noqa: SLF001 - the test rewrites our own cache on purpose
        for sid in list(cache._sessions):  # noqa: SLF001
            stale = dataclasses.replace(
                cache._sessions[sid], sid="conformance:" + secrets.token_hex(8)
            )  # noqa: SLF001
            cache._sessions[stale.sid] = stale  # noqa: SLF001
            for key, value in list(cache._commands.items()):  # noqa: SLF001
                if value == sid:
                    cache._commands[key] = stale.sid  # noqa: SLF001
            del cache._sessions[sid]  # noqa: SLF001
    session, count = _query_session(target, security)
    _require(not session.resumed, "an unknown session id was accepted")
    return f"unknown session refused; new handshake answered {count} ads"


@check("session.raw_read")
def session_raw_read(target: Target) -> str:
    """A READ command with no security negotiation at all (the raw start)."""
    security = ClientSecurity(SecurityConfig(negotiation=Requirement.NEVER))
    session, count = _query_session(target, security)
    _require(session.raw, "the session was not raw")
    return f"{count} slot ads"


# --- queries -------------------------------------------------------------------------------


def _query_check(ad_type: AdType, my_type: str | None) -> Callable[[Target], str]:
    def run(target: Target) -> str:
        collector = target.collector()
        ads = collector.query(ad_type)
        if my_type is not None:
            wrong = sorted({str(ad.get("MyType")) for ad in ads} - {my_type})
            _require(not wrong, f"ads with MyType {wrong} in a {ad_type.name} query")
        if not ads:
            raise Skipped(
                f"no {ad_type.name} ads advertised: constraint/projection/limit unobservable"
            )
        projected = collector.query(ad_type, projection=["Name", "MyType"])
        extra = sorted({k for ad in projected for k in ad} - {"Name", "MyType"}, key=str.lower)
        extra = [k for k in extra if k.lower() not in ("name", "mytype")]
        _require(not extra, f"projection [Name, MyType] ignored: the ads also carry {extra[:8]}")
        _require(len(projected) == len(ads), "projection changed the number of ads")
        _require(len(collector.query(ad_type, limit=1)) == 1, "limit 1 not honoured")
        _require(collector.query(ad_type, "false") == [], "constraint false matched ads")
        name = ads[0].get("Name")
        if isinstance(name, str):
            quoted = name.replace("\\", "\\\\").replace('"', '\\"')
            matched = collector.query(ad_type, f'Name == "{quoted}"', ["Name"])
            _require(
                bool(matched) and all(ad.get("Name") == name for ad in matched),
                f"constraint Name == {name!r} matched {[ad.get('Name') for ad in matched]}",
            )
        return f"{len(ads)} ads"

    run.__doc__ = f"{ad_type.name} ads: MyType, constraint, projection and limit."
    return run


for _type, _my_type in QUERY_TYPES:
    check(f"query.{_type.name.lower()}")(_query_check(_type, _my_type))


@check("locate.schedd")
def locate_schedd(target: Target) -> str:
    """LOCATE a schedd by name: a sinful address and a version."""
    name = str(target.schedd_ad().get("Name"))
    location = target.collector().locate(DaemonType.SCHEDD, name)
    _require(location.address.startswith("<"), f"address {location.address!r}")
    _require(bool(location.version), "no version")
    return f"{name} at {location.address}"


# --- the schedd ----------------------------------------------------------------------------


def _schedd(target: Target, security: ClientSecurity | None = None) -> Schedd:
    address = target.schedd_ad().get("MyAddress")
    _require(isinstance(address, str), "the schedd ad has no MyAddress")
    security = security or target.security(_auth_methods(target), authentication="PREFERRED")
    return Schedd(str(address), security=security, timeout=target.timeout)


@check("jobs.query")
def jobs_query(target: Target) -> str:
    """A job query with constraint, projection and limit ends with its summary ad."""
    schedd = _schedd(target)
    ads = schedd.query("true", ["ClusterId", "ProcId"], limit=5)
    _require(len(ads) <= 5, f"limit 5 answered {len(ads)} jobs")
    for ad in ads:
        extra = {k.lower() for k in ad} - {"clusterid", "procid", "serverTime".lower()}
        _require(not extra, f"projection ignored: {sorted(extra)[:8]}")
    return f"{len(ads)} jobs"


@check("jobs.lifecycle")
def jobs_lifecycle(target: Target) -> str:
    """Submit (held) → edit → release → hold → remove, each visible in the queue, then history."""
    schedd = _schedd(target, target.write_security())
    text = f"executable = /bin/sleep\narguments = 600\niwd = {target.iwd}\nhold = true\nqueue\n"
    result = schedd.submit(Submit(text), submit_dir=target.iwd)
    job = f"{result.cluster}.0"
    try:
        _require(schedd.edit([job], "CedarConformance", '"yes"') == 1, "edit changed no job")
        ad = schedd.query(f"ClusterId == {result.cluster}", ["CedarConformance", "JobStatus"])[0]
        _require(ad.get("CedarConformance") == "yes", f"edit not visible: {ad}")
        _require(ad.get("JobStatus") == 5, f"submitted on hold, status {ad.get('JobStatus')}")
        _require(schedd.release(job).succeeded == 1, "release failed")
        _require(schedd.hold(job, "conformance").succeeded == 1, "hold failed")
        ad = schedd.query(f"ClusterId == {result.cluster}", ["JobStatus", "HoldReason"])[0]
        _require(ad.get("JobStatus") == 5, f"held job has status {ad.get('JobStatus')}")
    finally:
        removed = schedd.remove(job, "conformance").succeeded
    _require(removed == 1, "remove failed")
    deadline = time.monotonic() + 60
    while schedd.query(f"ClusterId == {result.cluster}", ["JobStatus"]):
        _require(time.monotonic() < deadline, "removed job still in the queue after 60 s")
        time.sleep(1)
    history = list(schedd.history(f"ClusterId == {result.cluster}", ["JobStatus"], match=1))
    _require(bool(history) and history[0].get("JobStatus") == 3, f"history {history}")
    return f"cluster {result.cluster}"


@check("jobs.history")
def jobs_history(target: Target) -> str:
    """A history query with projection and a match limit."""
    schedd = _schedd(target)
    records = list(schedd.history("true", ["ClusterId", "JobStatus"], match=3))
    _require(len(records) <= 3, f"match 3 answered {len(records)} records")
    for record in records:
        extra = {k.lower() for k in record} - {"clusterid", "jobstatus"}
        _require(not extra, f"projection ignored: {sorted(extra)[:8]}")
    return f"{len(records)} records"


# --- CCB (spec 09) -----------------------------------------------------------------------------

#: A CCB id no broker has handed out (ids count up from 1 per registration).
UNKNOWN_CCBID = "4294967295"


@check("ccb.unknown_ccbid")
def ccb_unknown_ccbid(target: Target) -> str:
    """The collector's broker refuses a reversed connection to an unknown ccbid, with its reason."""
    broker = target.pool.strip("<>") if target.pool.startswith("<") else target.pool
    address = str(Sinful("127.0.0.1", 1, {"CCBID": f"{broker}#{UNKNOWN_CCBID}"}))
    security = target.security(_auth_methods(target), authentication="PREFERRED")
    try:
        ping(address, "READ", security=security, timeout=target.timeout)
    except CedarConnectionError as exc:
        reason = str(exc)
    else:
        raise CheckFailed(f"a connection to ccbid {UNKNOWN_CCBID} was made")
    if "received failure message from CCB server" not in reason:
        raise Skipped(f"the collector runs no CCB broker (or did not answer): {reason}")
    _require("no daemon is currently registered" in reason, f"unexpected refusal: {reason}")
    return "refused: " + reason.rpartition(": ")[2]


def _behind_a_broker(target: Target) -> tuple[AdType, str, dict[str, ClassAd]]:
    """A daemon the collector lists at an address with ``CCBID`` (slots first, then schedds):
    its ad type, its address and the collector's ads for it by name; :class:`Skipped` if none."""
    collector = target.collector()
    for ad_type in (AdType.SLOT, AdType.SCHEDD):
        ads = collector.query(ad_type, projection=["Name", "MyType", "MyAddress"])
        for ad in ads:
            address = str(ad.get("MyAddress") or "")
            if "CCBID=" in address:
                same = {str(a.get("Name")): a for a in ads if a.get("MyAddress") == address}
                return ad_type, address, same
    raise Skipped("no daemon of the pool is behind a broker (no MyAddress with CCBID)")


def _through_the_broker(target: Target, relay: bool) -> str:
    """The daemon's own ads, asked of it through the broker (reversed connection, or the
    broker's relay), against the collector's copies; the route taken is checked too."""
    ad_type, address, known = _behind_a_broker(target)
    options: dict[str, object] = {}
    if relay:
        from cedar.config import Config

        options["config"] = Config(settings={"TOOLS_ASSUME_FIREWALLS": "true"})
    security = target.security(_auth_methods(target), authentication="PREFERRED", options=options)
    pinged = ping(address, "READ", security=security, timeout=target.timeout)
    _authorized(pinged, "READ through the broker")
    way = "CCB relayed via" if relay else "CCB reversed connection via"
    _require((pinged.route or "").startswith(way), f"route {pinged.route!r}, not {way}")
    direct = Collector(address, security=security, timeout=target.timeout)
    ads = direct.query(ad_type, projection=["Name", "MyType", "MyAddress"])
    own = {str(ad.get("Name")): ad for ad in ads}
    _require(
        sorted(own) == sorted(known), f"the daemon has {sorted(own)}, the collector {sorted(known)}"
    )
    for name, ad in own.items():
        for attribute in ("MyType", "MyAddress"):
            mine, theirs = ad.get(attribute), known[name].get(attribute)
            _require(
                mine == theirs, f"{name}: {attribute} {mine!r} here, {theirs!r} in the collector"
            )
    return f"{len(own)} {ad_type.name.lower()} ads, {pinged.route}"


@check("ccb.direct_ad")
def ccb_direct_ad(target: Target) -> str:
    """A daemon behind the broker, asked itself through a reversed connection, gives the ads the
    collector holds for it (``condor_status -direct``)."""
    return _through_the_broker(target, relay=False)


@check("ccb.relay")
def ccb_relay(target: Target) -> str:
    """The same through the broker's relay, for a client that cannot listen
    (``TOOLS_ASSUME_FIREWALLS``)."""
    return _through_the_broker(target, relay=True)


# --- malformed input (safe: each only affects its own connection) ---------------------------


def _raw_exchange(target: Target, data: bytes) -> bytes:
    """Send ``data`` on a fresh connection; return what came back before the daemon closed."""
    address = Sinful.parse(target.pool) if target.pool.startswith("<") else None
    host, _, port = (f"{address.host}:{address.port}" if address else target.pool).rpartition(":")
    received = bytearray()
    with socket.create_connection((host, int(port)), timeout=target.timeout) as sock:
        sock.sendall(data)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
        while len(received) < 65536:
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                raise CheckFailed(f"no close within {target.timeout} s") from None
            except OSError:
                break
            if not chunk:
                break
            received.extend(chunk)
    return bytes(received)


def _malformed_check(data: bytes, what: str) -> Callable[[Target], str]:
    def run(target: Target) -> str:
        answer = _raw_exchange(target, data)
        _require(len(answer) < 65536, f"{what}: the daemon kept talking")
        _authorized(_read_ping(target), f"READ after {what}")
        return f"closed after {len(answer)} bytes; still serving"

    run.__doc__ = f"Malformed input ({what}): the connection is closed, the daemon keeps serving."
    return run


MALFORMED = {
    "oversized_frame": (b"\x01\x7f\xff\xff\xff" + b"x" * 64, "a frame claiming 2 GiB"),
    "truncated_frame": (b"\x01\x00\x00\x01\x00" + b"\x00" * 16, "a frame cut short"),
    "bad_end_flag": (b"\x07\x00\x00\x00\x04" + b"\x00\x00\x00\x01", "end flag 7"),
}
for _name, (_data, _what) in MALFORMED.items():
    check(f"malformed.{_name}")(_malformed_check(_data, _what))
