"""The web page's sign-in: a sealed session cookie and a CSRF token, both stateless.

The cookie holds the caller's bearer token sealed with AES-256-GCM under a key from the
configuration (``CEDAR_SERVE_WEB_SECRET_FILE``), so any replica with the same key opens it and a
restart loses nothing; without the knob a random key per process is used (sign-ins then last as
long as the process).  The cookie is HttpOnly (no script reads it), SameSite=Strict and Secure
when TLS is on.  The CSRF token is an HMAC of the caller's key (a hash of the token), so it is
the same on every replica and never reveals the token.

Signing out revokes the cookie's session id (:class:`Revocations`): a table in an SQLite file
that every replica sharing the key reads (``CEDAR_SERVE_WEB_REVOCATION_FILE``; by default
``<CEDAR_SERVE_WEB_SECRET_FILE>.revoked.sqlite`` beside the shared key, and in memory when the
key is the process's own, whose cookies die with it anyway).  Rows are dropped once the
cookie they name has expired.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cedar.config import Config
from cedar.errors import InvalidArgument
from cedar.service_core import Caller

COOKIE = "cedar_session"
#: Seconds a sign-in lasts (CEDAR_SERVE_WEB_SESSION_SECONDS).
DEFAULT_LIFETIME = 8 * 3600
#: Largest cookie value accepted (a browser keeps at most about 4 KiB).
MAX_COOKIE = 8192


class Revocations:
    """Session ids signed out before their cookie expired, shared by the replicas through one
    SQLite file (``":memory:"``: this process only)."""

    def __init__(self, path: str = ":memory:") -> None:
        self.path = path
        self._lock = threading.Lock()
        self._memory = sqlite3.connect(":memory:", check_same_thread=False)
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS revoked (sid TEXT PRIMARY KEY, expires INT)")

    def _connect(self) -> sqlite3.Connection:
        if self.path == ":memory:":
            return self._memory
        return sqlite3.connect(self.path, timeout=5.0)

    def revoke(self, sid: str, expires: int, now: float | None = None) -> None:
        """Refuse session ``sid`` from now on (until ``expires``, when its cookie dies)."""
        moment = int(time.time() if now is None else now)
        with self._lock, self._connect() as db:
            db.execute("DELETE FROM revoked WHERE expires < ?", (moment,))
            db.execute("INSERT OR REPLACE INTO revoked VALUES (?, ?)", (sid, expires))

    def revoked(self, sid: str) -> bool:
        """Whether ``sid`` was signed out (an unreadable table counts as revoked: fail closed)."""
        try:
            with self._lock, self._connect() as db:
                row = db.execute("SELECT 1 FROM revoked WHERE sid = ?", (sid,)).fetchone()
        except sqlite3.Error:
            return True
        return row is not None


@dataclass(frozen=True)
class WebSettings:
    """The web page's knobs (``CEDAR_SERVE_WEB_*``)."""

    key: bytes
    lifetime: int = DEFAULT_LIFETIME
    secure: bool = False
    revocations: Revocations = field(default_factory=Revocations, compare=False, repr=False)

    @classmethod
    def from_config(cls, config: Config | None, *, tls: bool) -> WebSettings:
        config = config or Config()
        secret_file = (config.get("CEDAR_SERVE_WEB_SECRET_FILE") or "").strip()
        revocation_file = (config.get("CEDAR_SERVE_WEB_REVOCATION_FILE") or "").strip()
        if not revocation_file:
            revocation_file = f"{secret_file}.revoked.sqlite" if secret_file else ":memory:"
        if secret_file:
            try:
                with open(secret_file, "rb") as handle:
                    material = handle.read(1 << 16).strip()
            except OSError as exc:
                raise InvalidArgument(f"CEDAR_SERVE_WEB_SECRET_FILE: {exc.strerror}") from None
            if len(material) < 16:
                raise InvalidArgument("CEDAR_SERVE_WEB_SECRET_FILE holds under 16 bytes")
            key = hashlib.sha256(b"cedar-web-session\0" + material).digest()
        else:
            key = os.urandom(32)
        lifetime = config.get_int("CEDAR_SERVE_WEB_SESSION_SECONDS", DEFAULT_LIFETIME)
        try:
            revocations = Revocations(revocation_file)
        except sqlite3.Error as exc:
            raise InvalidArgument(f"CEDAR_SERVE_WEB_REVOCATION_FILE: {exc}") from None
        return cls(
            key=key,
            lifetime=int(lifetime or DEFAULT_LIFETIME),
            secure=tls,
            revocations=revocations,
        )


@dataclass(frozen=True)
class Session:
    """A signed-in browser: the caller (token never shown) and who the daemon said it is."""

    caller: Caller
    user: str
    expires: int
    #: Signed in by the trusted proxy (``CEDAR_SERVE_PROXY_HEADER``), not by the cookie.
    proxied: bool = False
    #: The sign-in's id, what signing out revokes (none for a proxied user).
    sid: str = ""

    @property
    def csrf_subject(self) -> Caller:
        """What the CSRF token is bound to: the token, or for a proxied user the user (its
        minted token is renewed every few minutes while a page stays open)."""
        return Caller(key=f"proxy:{self.user}") if self.proxied else self.caller


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(settings: WebSettings, token: str, user: str, now: float | None = None) -> str:
    """The cookie value for a sign-in (AES-GCM; the cookie name is the associated data)."""
    expires = int((time.time() if now is None else now) + settings.lifetime)
    sid = _b64(os.urandom(16))
    payload = json.dumps({"t": token, "u": user, "e": expires, "i": sid}).encode()
    nonce = os.urandom(12)
    return _b64(nonce + AESGCM(settings.key).encrypt(nonce, payload, COOKIE.encode()))


def unseal(settings: WebSettings, value: str | None, now: float | None = None) -> Session | None:
    """The session a cookie holds, or None (absent, forged, from another key, expired)."""
    if not value or len(value) > MAX_COOKIE:
        return None
    try:
        raw = _unb64(value)
        payload = json.loads(AESGCM(settings.key).decrypt(raw[:12], raw[12:], COOKIE.encode()))
        expires = int(payload["e"])
        if expires < (time.time() if now is None else now):
            return None
        sid = str(payload["i"])
        if settings.revocations.revoked(sid):
            return None
        return Session(Caller.from_token(str(payload["t"])), str(payload["u"]), expires, sid=sid)
    except (InvalidTag, ValueError, KeyError, TypeError, InvalidArgument):
        return None


def csrf_token(settings: WebSettings, caller: Caller) -> str:
    """The CSRF token of a caller's pages (stateless: an HMAC of the caller's key)."""
    return _b64(hmac.new(settings.key, b"csrf\0" + caller.key.encode(), "sha256").digest())


def csrf_ok(settings: WebSettings, caller: Caller, given: str | None) -> bool:
    """Whether ``given`` is the caller's CSRF token (constant-time)."""
    return bool(given) and hmac.compare_digest(csrf_token(settings, caller), str(given))


def cookie_header(settings: WebSettings, value: str, max_age: int | None = None) -> str:
    """The ``Set-Cookie`` value (HttpOnly, SameSite=Strict, Secure under TLS)."""
    age = settings.lifetime if max_age is None else max_age
    parts = [f"{COOKIE}={value}", "Path=/", f"Max-Age={age}", "HttpOnly", "SameSite=Strict"]
    if settings.secure:
        parts.append("Secure")
    return "; ".join(parts)
