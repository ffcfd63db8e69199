"""Every exception class of the security layer, in one place.

They all derive from :mod:`cedar.errors` (``PermissionDenied``, ``AuthenticationError``,
``SecurityError``), so a caller catching cedar's general classes catches these too.  The modules
that raise them (``client``, ``scitoken``, ``signing_key``, ``tls``, ``token``) import them from
here and keep exporting them under their old paths.  No message ever carries a secret (a token,
a key, a session id).
"""

from __future__ import annotations

from cedar.errors import AuthenticationError, PermissionDenied, SecurityError

__all__ = [
    "CommandDenied",
    "CredentialError",
    "KerberosError",
    "MaskRefused",
    "RawStartRefused",
    "SciTokenError",
    "SessionRejected",
    "TlsFailure",
    "TokenError",
]


class CommandDenied(PermissionDenied):
    """The server refused the command; carries what it said about us."""

    def __init__(
        self,
        message: str,
        *,
        command: int | None = None,
        user: str | None = None,
        method: str | None = None,
    ) -> None:
        super().__init__(message)
        self.command = command
        self.user = user
        self.method = method


class SessionRejected(AuthenticationError):
    """The server no longer knows the cached session (``SID_NOT_FOUND``); it was dropped."""


class MaskRefused(SessionRejected):
    """The server did not want the authentication mask a read-only command sent along with M1.

    Its policy answered ``Authentication = NO``; the connection is dropped before any payload
    went out and ``run_command*`` retry once with a plain handshake (the target is remembered).
    """


class RawStartRefused(SessionRejected):
    """The daemon closed an unnegotiated (raw) read-only command without answering.

    Its policy for the command's level asks for more than nothing (authentication, encryption
    or integrity REQUIRED).  The target is remembered and ``run_command*`` retry with a
    negotiated start (see :attr:`~cedar.auth.client_config.SecurityConfig.unnegotiated_reads`).
    """


class TlsFailure(AuthenticationError):
    """Why the TLS exchange failed (the SSL/SCITOKENS methods turn it into a failed result)."""


class CredentialError(SecurityError):
    """A credential file (signing key, token) is missing, unsafe or malformed."""


class TokenError(CredentialError):
    """A token text is not a well-formed IDTOKEN (the message never contains the token)."""


class SciTokenError(CredentialError):
    """A SciToken was refused or could not be found; the message never contains the token."""


class KerberosError(CredentialError):
    """KERBEROS could not run: no or expired ticket, KDC refusal or unreachable, bad message.

    One line a user can act on; never a key, ticket or authenticator.
    """
