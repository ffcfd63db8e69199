"""Security sessions and the caches both roles keep of them (spec 03 §6.2).

A session is the product of one full handshake: a key, the negotiated policy and the identity.
Keys and session ids are secrets: they are kept out of ``repr`` and logs.
"""

from __future__ import annotations

import _thread  # the lock alone: threading is a costly import at start-up
import base64
import os
import socket
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from cedar.record import Record

if TYPE_CHECKING:  # made when a session with a key is used (cedar/auth/client.py)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

#: The server keeps its side this much longer than it promised (``SEC_SESSION_DURATION_SLOP``).
SERVER_SLOP = 20.0


class Session(Record, uncompared=("resume_messages", "cipher")):
    """One cached security session; ``expires`` and ``lease`` are in ``time.time()`` seconds."""

    __slots__ = (
        "sid",
        "key",
        "crypto_method",
        "user",
        "method",
        "valid_commands",
        "policy",
        "remote_version",
        "duration",
        "lease",
        "limit_authorization",
        "tried_authentication",
        "created",
        "last_used",
        "resume_messages",
        "cipher",
    )

    def __init__(
        self,
        sid: str,
        key: bytes | None,
        crypto_method: str | None,
        user: str,
        method: str | None,
        valid_commands: frozenset[int] = frozenset(),
        policy: dict[str, Any] | None = None,
        remote_version: str | None = None,
        duration: float = 0.0,
        lease: float = 0.0,
        limit_authorization: list[str] | None = None,
        tried_authentication: bool = False,
        created: float | None = None,
        last_used: float | None = None,
        resume_messages: dict[tuple[Any, ...], tuple[bytes, bytes]] | None = None,
        cipher: AESGCM | None = None,
    ) -> None:
        self.sid = sid
        self.key = key
        self.crypto_method = crypto_method
        self.user = user
        self.method = method
        self.valid_commands = valid_commands
        self.policy: dict[str, Any] = {} if policy is None else policy
        self.remote_version = remote_version
        self.duration = duration
        self.lease = lease
        self.limit_authorization = limit_authorization
        self.tried_authentication = tried_authentication
        self.created: float = time.time() if created is None else created
        self.last_used: float = time.time() if last_used is None else last_used
        #: What a client reuses on every resumption, kept with the session so it goes with it:
        #: the encoded resume messages (around their nonce) and the AES-GCM cipher object.
        self.resume_messages: dict[tuple[Any, ...], tuple[bytes, bytes]] = (
            {} if resume_messages is None else resume_messages
        )
        self.cipher = cipher

    def expiry(self, slop: float = 0.0) -> float | None:
        """When the session stops being usable (``None`` = never)."""
        limits = []
        if self.duration > 0:
            limits.append(self.created + self.duration + slop)
        if self.lease > 0:
            limits.append(self.last_used + self.lease + slop)
        return min(limits) if limits else None

    def expired(self, now: float | None = None, slop: float = 0.0) -> bool:
        """True once the duration or the idle lease ran out."""
        expiry = self.expiry(slop)
        return expiry is not None and (time.time() if now is None else now) >= expiry

    def touch(self) -> None:
        """Renew the lease (every use does)."""
        self.last_used = time.time()

    def __repr__(self) -> str:  # no key, no session id
        return (
            f"<Session user={self.user!r} method={self.method} crypto={self.crypto_method} "
            f"commands={len(self.valid_commands)}>"
        )


class ClientSessionCache:
    """The client's sessions, found by ``(tag, connect sinful, command)`` (spec 03 §6.2).

    Thread-safe: the sync API may be used from several threads with one cache.
    """

    def __init__(self, max_sessions: int = 1000) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._commands: dict[tuple[str | None, str, int], str] = {}
        self._lock = _thread.allocate_lock()

    def lookup(self, connect_sinful: str, command: int, tag: str | None = None) -> Session | None:
        """The live session for this command at this address, or ``None``."""
        with self._lock:
            sid = self._commands.get((tag, connect_sinful, command))
            if sid is None:
                return None
            session = self._sessions.get(sid)
            if session is None or session.expired():
                self._drop(sid)
                return None
            session.touch()
            return session

    def store(self, session: Session, connect_sinful: str, tag: str | None = None) -> None:
        """Remember ``session`` for each of its valid commands at ``connect_sinful``."""
        with self._lock:
            self._sessions[session.sid] = session
            self._sessions.move_to_end(session.sid)
            for command in session.valid_commands:
                self._commands[(tag, connect_sinful, command)] = session.sid
            while len(self._sessions) > self.max_sessions:
                oldest = next(iter(self._sessions))
                self._drop(oldest)

    def invalidate(self, sid: str) -> None:
        """Forget a session (the server rejected it)."""
        with self._lock:
            self._drop(sid)

    def _drop(self, sid: str) -> None:
        self._sessions.pop(sid, None)
        for key in [key for key, value in self._commands.items() if value == sid]:
            del self._commands[key]

    def clear(self) -> None:
        """Forget every session."""
        with self._lock:
            self._sessions.clear()
            self._commands.clear()

    def holds(self, sid: str | None) -> bool:
        """Whether the session ``sid`` is kept for later commands (``cedar whoami`` says so)."""
        with self._lock:
            return sid is not None and sid in self._sessions

    def __len__(self) -> int:
        return len(self._sessions)


#: Random bytes in a session id (192 bits from the OS CSPRNG).
SESSION_ID_BYTES = 24


def new_session_id() -> str:
    """``host:pid:<192 random bits>``: opaque to peers, and unguessable.

    The reference's ids are ``host:pid:time:counter``; from one's own id the next is easy to
    guess, so cedar keeps the readable prefix but makes the rest a CSPRNG draw.
    """
    host = socket.gethostname().split(".", 1)[0] or "localhost"
    random_part = base64.urlsafe_b64encode(os.urandom(SESSION_ID_BYTES)).rstrip(b"=").decode()
    return f"{host}:{os.getpid()}:{random_part}"


class ServerSessionCache:
    """The server's sessions by id, bounded in size; expired entries are never resumed."""

    def __init__(self, max_sessions: int = 10000) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = _thread.allocate_lock()

    def add(self, session: Session) -> None:
        """Store a new session, evicting the least recently used beyond the bound."""
        with self._lock:
            self._sessions[session.sid] = session
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def get(self, sid: str) -> Session | None:
        """The live session with this id (lease renewed), or ``None``."""
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                return None
            if session.expired(slop=SERVER_SLOP):
                del self._sessions[sid]
                return None
            session.touch()
            self._sessions.move_to_end(sid)
            return session

    def remove(self, sid: str) -> None:
        """Forget one session."""
        with self._lock:
            self._sessions.pop(sid, None)

    def clear(self) -> None:
        """Forget every session (tests use this to make clients fall back)."""
        with self._lock:
            self._sessions.clear()

    def __len__(self) -> int:
        return len(self._sessions)
