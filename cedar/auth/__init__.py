"""The CEDAR security layer: command start, ``DC_AUTHENTICATE`` in both roles, sessions, methods.

See spec 03 (handshake) and spec 04 §1-§4 (the built-in methods).  The public client entry point
is :func:`start_command`; servers use :func:`cedar.auth.server.serve_authenticate` through
:class:`cedar.daemons.Daemon`.

The names are resolved on first use (PEP 562): a client that imports :mod:`cedar.auth.client`
does not load the server's policy machinery.  The built-in methods are registered at import
(:mod:`cedar.auth.methods.registration`, light: the credential-based ones are deferred).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# TOKEN, SSL and SCITOKENS live in their own modules; importing this registers them (deferred).
import cedar.auth.methods.registration  # noqa: F401
from cedar.lazy import lazy_exports

#: Public name -> the module that defines it.
_LAZY = {
    "ClientSecurity": "cedar.auth.client_config",
    "CommandSession": "cedar.auth.client",
    "SecurityConfig": "cedar.auth.client_config",
    "client_security": "cedar.auth.client_config",
    "default_security": "cedar.auth.client_config",
    "start_command": "cedar.auth.client",
    "CommandDenied": "cedar.auth.errors",
    "SessionRejected": "cedar.auth.errors",
    "AuthContext": "cedar.auth.methods",
    "AuthMethod": "cedar.auth.methods",
    "MethodResult": "cedar.auth.methods",
    "get_method": "cedar.auth.methods",
    "register_method": "cedar.auth.methods",
    "registered_methods": "cedar.auth.methods",
    "DC_AUTHENTICATE": "cedar.auth.permissions",
    "DC_NOP": "cedar.auth.permissions",
    "DC_NOP_COMMANDS": "cedar.auth.permissions",
    "DC_SEC_QUERY": "cedar.auth.permissions",
    "NOP_FOR_LEVEL": "cedar.auth.permissions",
    "SHARED_PORT_CONNECT": "cedar.auth.permissions",
    "Decision": "cedar.auth.policy",
    "Requirement": "cedar.auth.policy",
    "reconcile": "cedar.auth.policy",
    "LevelPolicy": "cedar.auth.server_policy",
    "ServerPolicy": "cedar.auth.server_policy",
    "ClientSessionCache": "cedar.auth.session",
    "ServerSessionCache": "cedar.auth.session",
    "Session": "cedar.auth.session",
    "send_preamble": "cedar.auth.sharedport",
    "Sinful": "cedar.auth.sinful",
    "make_sinful": "cedar.auth.sinful",
    "parse_sinful": "cedar.auth.sinful",
    "CEDAR_VERSION_STRING": "cedar.auth.version",
}

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from cedar.auth.client import CommandSession, start_command
    from cedar.auth.client_config import (
        ClientSecurity,
        SecurityConfig,
        client_security,
        default_security,
    )
    from cedar.auth.errors import CommandDenied, SessionRejected
    from cedar.auth.methods import (
        AuthContext,
        AuthMethod,
        MethodResult,
        get_method,
        register_method,
        registered_methods,
    )
    from cedar.auth.permissions import (
        DC_AUTHENTICATE,
        DC_NOP,
        DC_NOP_COMMANDS,
        DC_SEC_QUERY,
        NOP_FOR_LEVEL,
        SHARED_PORT_CONNECT,
    )
    from cedar.auth.policy import Decision, Requirement, reconcile
    from cedar.auth.server_policy import LevelPolicy, ServerPolicy
    from cedar.auth.session import ClientSessionCache, ServerSessionCache, Session
    from cedar.auth.sharedport import send_preamble
    from cedar.auth.sinful import Sinful, make_sinful, parse_sinful
    from cedar.auth.version import CEDAR_VERSION_STRING

__all__ = [
    "CEDAR_VERSION_STRING",
    "DC_AUTHENTICATE",
    "DC_NOP",
    "DC_NOP_COMMANDS",
    "DC_SEC_QUERY",
    "NOP_FOR_LEVEL",
    "SHARED_PORT_CONNECT",
    "AuthContext",
    "AuthMethod",
    "ClientSecurity",
    "ClientSessionCache",
    "CommandDenied",
    "CommandSession",
    "Decision",
    "LevelPolicy",
    "MethodResult",
    "Requirement",
    "SecurityConfig",
    "ServerPolicy",
    "ServerSessionCache",
    "Session",
    "SessionRejected",
    "Sinful",
    "client_security",
    "default_security",
    "get_method",
    "make_sinful",
    "parse_sinful",
    "reconcile",
    "register_method",
    "registered_methods",
    "send_preamble",
    "start_command",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
