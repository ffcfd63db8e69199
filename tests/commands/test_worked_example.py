"""The worked example of docs/ARCHITECTURE.md ("adding a command in both roles"), run for real:
DC_QUERY_INSTANCE (spec 05: no request payload; the reply is 16 ASCII hex bytes, no length)."""

from __future__ import annotations

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.auth.policy import Requirement
from cedar.commands import run_command
from cedar.daemons.daemon import CommandRequest
from cedar.daemons.testing import mock_daemon
from cedar.numbers import Command
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

INSTANCE_ID = b"0123456789abcdef"


# 1. The client's protocol (a plain module of cedar.commands): payload, then the reply.
def query_instance_body(session: CommandSession) -> Protocol[str]:
    yield from session.send_empty_payload()
    reply: MessageReader = yield Receive()
    instance = reply.get_bytes(16).decode("ascii")
    reply.end_of_message()
    return instance


# 2. The server's handler (cedar.daemons), registered at the level of spec 03 §10.
def query_instance_handler(request: CommandRequest) -> Protocol[None]:
    yield Send(request.writer().put_bytes(INSTANCE_ID))


def test_a_new_command_in_both_roles() -> None:
    daemon, _ = mock_daemon(methods=("CLAIMTOBE",))
    daemon.register(Command.DC_QUERY_INSTANCE, query_instance_handler, permission="ALLOW")
    with daemon.run_in_thread():
        for security in (
            ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"])),
            ClientSecurity(SecurityConfig(negotiation=Requirement.NEVER)),  # raw start
        ):
            # 3. The client call (in cedar/commands/_async/, generated blocking twin).
            instance = run_command(
                daemon.address, Command.DC_QUERY_INSTANCE, query_instance_body, security=security
            )
            assert instance == INSTANCE_ID.decode()
