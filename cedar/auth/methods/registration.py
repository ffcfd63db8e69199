"""Registers the credential-based methods (TOKEN, SSL, SCITOKENS) with the method registry.

Imported by :mod:`cedar.auth` so that every process that uses the security layer has them.
"""

from __future__ import annotations

from cedar.auth.methods import get_method, register_method
from cedar.auth.methods.idtokens import IdTokens
from cedar.auth.methods.ssl_methods import SciTokens, Ssl


def register_credential_methods() -> None:
    """Add TOKEN, SSL and SCITOKENS unless something registered them already."""
    for method in (IdTokens(), Ssl(), SciTokens()):
        if get_method(method.name) is None:
            register_method(method)


register_credential_methods()
