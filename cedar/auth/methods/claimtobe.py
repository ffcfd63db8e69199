"""CLAIMTOBE: the client states a name and the server believes it (spec 04 §3)."""

from __future__ import annotations

from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.auth.permissions import implied_levels
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol, Receive, Send


def _include_domain(ctx: AuthContext) -> bool:
    value = ctx.options.get("SEC_CLAIMTOBE_INCLUDE_DOMAIN", True)
    return value if isinstance(value, bool) else str(value)[:1].upper() in ("T", "Y", "1")


class ClaimToBe(AuthMethod):
    """Unverified identity; sessions are limited to the command's level (spec 04 §3)."""

    name = "CLAIMTOBE"
    bit = 0x0002

    def claimed_name(self, ctx: AuthContext) -> str | None:
        """``SEC_CLAIMTOBE_USER`` or the login name, plus ``@UID_DOMAIN`` when configured."""
        user = ctx.options.get("SEC_CLAIMTOBE_USER")
        if not user:
            try:
                import getpass  # here: it imports termios, for a rarely used method

                user = getpass.getuser()
            except (KeyError, OSError):
                return None
        if _include_domain(ctx):
            if not ctx.uid_domain:
                return None
            return f"{user}@{ctx.uid_domain}"
        return str(user)

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Send ``int 1, name`` (or ``int 0`` without a name) and read the verdict."""
        name = self.claimed_name(ctx)
        if name is None:
            yield Send(conn.writer().put_int(0))
            return MethodResult.failed("CLAIMTOBE: no user name to claim")
        yield Send(conn.writer().put_int(1).put_string(name))
        reply = yield Receive()
        verdict = reply.get_int()
        reply.end_of_message()
        if verdict != 1:
            return MethodResult.failed("CLAIMTOBE: the server refused the claimed name")
        return MethodResult(True)

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Accept whatever name is claimed; limit the session to the command's levels."""
        message = yield Receive()
        flag = message.get_int()
        if flag == 0:
            message.end_of_message()
            return MethodResult.failed("CLAIMTOBE: the client claimed no name")
        name = message.get_string()
        message.end_of_message()
        if _include_domain(ctx):
            user, sep, domain = name.rpartition("@")
            if not sep:
                user, domain = name, ""
            domain = domain or ctx.uid_domain
        else:
            user, domain = name, ""
        yield Send(conn.writer().put_int(1))
        if not user:
            return MethodResult.failed("CLAIMTOBE: the client claimed an empty name")
        fqu = f"{user}@{domain.lower()}" if domain else user
        limit = implied_levels(ctx.permission) if ctx.permission else None
        return MethodResult(
            True,
            user=user,
            domain=domain.lower() or None,
            authenticated_name=fqu,
            limit_authorization=limit,
        )
