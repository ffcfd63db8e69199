"""Registers the built-in methods with the method registry: FS, FS_REMOTE, CLAIMTOBE and
ANONYMOUS, then the credential-based ones (TOKEN, SSL, SCITOKENS, KERBEROS), in that order.

Imported by :mod:`cedar.auth` so that every process that uses the security layer has them; a
module of its own because the methods import the registry (:mod:`cedar.auth.methods`).  The
credential-based methods are registered as :class:`DeferredMethod` stand-ins: their modules
(``ssl``, key derivation, token parsing: ~10 ms) are imported only when a handshake uses one.
"""

from __future__ import annotations

from cedar.auth.methods import AuthMethod, DeferredMethod, get_method, register_method
from cedar.auth.methods.anonymous import Anonymous
from cedar.auth.methods.claimtobe import ClaimToBe
from cedar.auth.methods.fs import FileSystem, FileSystemRemote


class DeferredIdTokens(DeferredMethod):
    """TOKEN (:class:`cedar.auth.methods.idtokens.IdTokens`), imported on first use."""

    name = "TOKEN"
    bit = 0x0800

    def load(self) -> AuthMethod:
        """The real method."""
        from cedar.auth.methods.idtokens import IdTokens

        return IdTokens()


class DeferredSsl(DeferredMethod):
    """SSL (:class:`cedar.auth.methods.ssl_methods.Ssl`), imported on first use."""

    name = "SSL"
    bit = 0x0100

    def load(self) -> AuthMethod:
        """The real method."""
        from cedar.auth.methods.ssl_methods import Ssl

        return Ssl()


class DeferredSciTokens(DeferredMethod):
    """SCITOKENS (:class:`cedar.auth.methods.ssl_methods.SciTokens`), imported on first use."""

    name = "SCITOKENS"
    bit = 0x1000

    def load(self) -> AuthMethod:
        """The real method."""
        from cedar.auth.methods.ssl_methods import SciTokens

        return SciTokens()


class DeferredKerberos(DeferredMethod):
    """KERBEROS (:class:`cedar.auth.methods.kerberos.Kerberos`), imported on first use."""

    name = "KERBEROS"
    bit = 0x0040

    def load(self) -> AuthMethod:
        """The real method."""
        from cedar.auth.methods.kerberos import Kerberos

        return Kerberos()


#: The credential-based methods' stand-ins (``tests/auth`` checks them against the real ones).
DEFERRED_METHODS: tuple[type[DeferredMethod], ...] = (
    DeferredIdTokens,
    DeferredSsl,
    DeferredSciTokens,
    DeferredKerberos,
)


def register_builtin_methods() -> None:
    """Add FS, FS_REMOTE, CLAIMTOBE and ANONYMOUS unless something registered them already."""
    for method in (FileSystem(), FileSystemRemote(), ClaimToBe(), Anonymous()):
        if get_method(method.name) is None:
            register_method(method)


def register_credential_methods() -> None:
    """Add TOKEN, SSL, SCITOKENS and KERBEROS unless something registered them already."""
    for kind in DEFERRED_METHODS:
        if get_method(kind.name) is None:
            register_method(kind())


register_builtin_methods()
register_credential_methods()
