"""ANONYMOUS: "authentication" without identity, so peers requiring it can encrypt (spec 04 §4)."""

from __future__ import annotations

from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol, Receive, Send

ANONYMOUS_USER = "CONDOR_ANONYMOUS_USER"


class Anonymous(AuthMethod):
    """The server sends ``int 1``; the client only reads it."""

    name = "ANONYMOUS"
    bit = 0x0080

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Read the server's ``int 1``."""
        message = yield Receive()
        value = message.get_int()
        message.end_of_message()
        if value != 1:
            return MethodResult.failed("ANONYMOUS: the server refused")
        return MethodResult(True)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Send ``int 1``; the peer is the anonymous user."""
        yield Send(conn.writer().put_int(1))
        return MethodResult(True, user=ANONYMOUS_USER, authenticated_name=ANONYMOUS_USER)
