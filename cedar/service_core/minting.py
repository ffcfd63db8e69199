"""Opt-in: short tokens minted for a trusted front-end proxy's user header.

A site whose portal authenticates users itself (SSO) can put cedar serve behind it and let the
proxy name the user in a header (``CEDAR_SERVE_PROXY_HEADER``, e.g. ``X-Remote-User``).  Only
requests from ``CEDAR_SERVE_PROXY_ADDRESSES`` are believed, and only without an
``Authorization`` header; for them cedar serve mints a short IDTOKEN for ``<user>@<TRUST_DOMAIN>``
with the signing key in ``CEDAR_SERVE_SIGNING_KEY_FILE`` (``CEDAR_SERVE_MINTED_LIFETIME``
seconds, 300 by default) and uses it as the caller's token.  The daemons then authenticate and
authorize that token like any other; nothing changes when the option is off (the default).
"""

from __future__ import annotations

import re
import threading
import time

from cedar.auth.signing_key import SigningKey
from cedar.auth.token import create_token
from cedar.service_core.caller import Caller
from cedar.service_core.errors import BadCredential

_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


class TokenMinter:
    """Mints (and reuses for half their lifetime) tokens for proxy-named users."""

    def __init__(self, key: SigningKey, issuer: str, lifetime: float = 300.0) -> None:
        self.key = key
        self.issuer = issuer
        self.lifetime = max(30.0, lifetime)
        self._cache: dict[str, tuple[float, Caller]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<TokenMinter issuer={self.issuer} key={self.key.name}>"

    def caller(self, user: str) -> Caller:
        """The caller for ``user`` (a bare name; refused unless it looks like an account)."""
        user = user.strip()
        if not _USER.match(user):
            raise BadCredential("the proxy's user header does not name an account")
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(user)
            if cached is not None and now - cached[0] < self.lifetime / 2:
                return cached[1]
            token = create_token(
                self.key,
                issuer=self.issuer,
                subject=f"{user}@{self.issuer}",
                lifetime=self.lifetime,
            )
            caller = Caller.from_token(token)
            if len(self._cache) > 10000:
                self._cache.clear()
            self._cache[user] = (now, caller)
            return caller
