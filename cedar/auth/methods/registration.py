"""Registers the built-in methods with the method registry: FS, FS_REMOTE, CLAIMTOBE and
ANONYMOUS, then the credential-based ones (TOKEN, SSL, SCITOKENS), in that order.

Imported by :mod:`cedar.auth` so that every process that uses the security layer has them; a
module of its own because the methods import the registry (:mod:`cedar.auth.methods`).
"""

from __future__ import annotations

from cedar.auth.methods import get_method, register_method
from cedar.auth.methods.anonymous import Anonymous
from cedar.auth.methods.claimtobe import ClaimToBe
from cedar.auth.methods.fs import FileSystem, FileSystemRemote
from cedar.auth.methods.idtokens import IdTokens
from cedar.auth.methods.ssl_methods import SciTokens, Ssl


def register_builtin_methods() -> None:
    """Add FS, FS_REMOTE, CLAIMTOBE and ANONYMOUS unless something registered them already."""
    for method in (FileSystem(), FileSystemRemote(), ClaimToBe(), Anonymous()):
        if get_method(method.name) is None:
            register_method(method)


def register_credential_methods() -> None:
    """Add TOKEN, SSL and SCITOKENS unless something registered them already."""
    for method in (IdTokens(), Ssl(), SciTokens()):
        if get_method(method.name) is None:
            register_method(method)


register_builtin_methods()
register_credential_methods()
