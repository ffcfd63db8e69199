"""The CEDAR security layer: command start, ``DC_AUTHENTICATE`` in both roles, sessions, methods.

See spec 03 (handshake) and spec 04 §1-§4 (the built-in methods).  The public client entry point
is :func:`start_command`; servers use :func:`cedar.auth.server.serve_authenticate` through
:class:`cedar.server.Daemon`.
"""

from cedar.auth.client import (
    ClientSecurity,
    CommandSession,
    SecurityConfig,
    client_security,
    default_security,
    start_command,
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

# TOKEN, SSL and SCITOKENS live in their own modules; importing this registers them.
import cedar.auth.methods.registration  # noqa: E402,F401
