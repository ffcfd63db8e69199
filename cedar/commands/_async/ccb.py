"""``open_channel_async``: the connection every client command runs on, direct or through CCB.

A target whose address has ``CCBID`` is reached through its brokers (spec 09 §5, §7; the
sans-I/O parts are in :mod:`cedar.commands.ccb`); any other is dialled.  The caller gets a
channel on which it starts its command as usual (shared-port preamble, security, body).
"""

from __future__ import annotations

from collections.abc import Callable

from cedar.auth.client import SessionRejected
from cedar.auth.client_config import ClientSecurity
from cedar.auth.sinful import Sinful
from cedar.commands.base import CommandAttempts, command_protocol, endpoints
from cedar.commands.ccb import (
    HELLO_WAIT,
    BrokerContact,
    CcbRoute,
    broker_contacts,
    on_private_network,
    private_network,
    read_ad,
    read_hello,
    request_ad,
    request_sender,
    wants_streaming,
)
from cedar.errors import CedarError
from cedar.numbers import Command
from cedar.stream.drivers import Deadline, TrioChannel, TrioListener


async def open_channel_async(
    target: Sinful,
    *,
    timeout: float,
    deadline: Deadline,
    security: ClientSecurity | None = None,
    streaming: bool | None = None,
    route_taken: Callable[[str], None] | None = None,
) -> TrioChannel:
    """A connection to ``target`` (a resolved sinful, :func:`~cedar.commands.base.resolve_address`).

    Without ``CCBID`` it is a TCP connection to its host and port.  With it, each broker is
    asked in turn (random order) until one yields the reversed connection; ``streaming``
    (default: the ``TOOLS_ASSUME_FIREWALLS`` knob) asks for the relay instead of listening.
    Every wait is bounded by ``timeout`` and the call's ``deadline``; when no broker gives a
    connection the error names what each said.  ``route_taken`` hears how it was reached.
    """
    route = "direct"
    if target.ccb_contacts:
        network = private_network(security)
        nearby = on_private_network(target, network)
        if nearby is not None:
            target, route = nearby, f"direct (private network {network})"
    if not target.ccb_contacts:
        host, port = target.endpoint
        channel = await TrioChannel.connect(host, port, timeout=timeout, deadline=deadline)
        if route_taken is not None:
            route_taken(route)
        return channel
    if streaming is None:
        streaming = wants_streaming(security)
    ccb = CcbRoute(target, broker_contacts(target), streaming=streaming)
    for contact in ccb.order():
        try:
            try:
                channel = await _via_broker_async(ccb, contact, timeout, deadline, security)
            except SessionRejected:  # a restarted broker forgot our session (dropped): anew
                channel = await _via_broker_async(ccb, contact, timeout, deadline, security)
        except CedarError as exc:
            ccb.failed(contact, exc)
            if deadline.remaining() <= 0:
                break
            continue
        if route_taken is not None and ccb.taken is not None:
            route_taken(ccb.taken)
        return channel
    raise ccb.error()


async def open_attempt_async(
    attempts: CommandAttempts, route_taken: Callable[[str], None] | None = None
) -> TrioChannel:
    """:func:`open_channel_async` for one try of a command (its target, bounds, security)."""
    return await open_channel_async(
        attempts.target,
        timeout=attempts.timeout,
        deadline=attempts.deadline,
        security=attempts.security,
        route_taken=route_taken,
    )


async def _via_broker_async(
    route: CcbRoute,
    contact: BrokerContact,
    timeout: float,
    deadline: Deadline,
    security: ClientSecurity | None,
) -> TrioChannel:
    """One broker's whole exchange (§5.1-§5.3, or §7.3 when streaming)."""
    broker = contact.broker.connect_target()
    host, port = broker.endpoint
    channel: TrioChannel | None = await TrioChannel.connect(
        host, port, timeout=timeout, deadline=deadline
    )
    assert channel is not None
    listener: TrioListener | None = None
    try:
        if not route.streaming:
            listener = await TrioListener.beside(channel)
        my_address = None if listener is None else "<{}:{}>".format(*listener.address)
        ad = request_ad(contact, route.connect_id, my_address)
        local, peer = endpoints(channel)
        await channel.run(
            command_protocol(
                channel.conn,
                broker,
                Command.CCB_REQUEST,
                request_sender(ad),
                security=security,
                deadline=int(timeout),
                local_address=local,
                peer_address=peer,
            )
        )
        if listener is None:  # streaming: the reply, the replayed hello, then the relay
            if not route.check_reply(contact, await channel.run(read_ad())):
                raise route.not_relayed(contact)
            if not route.hello_matches(await channel.run(read_hello())):
                raise route.bad_relayed_hello(contact)
            channel.conn = channel.conn.detached()
            channel.peer = str(route.target)
            adopted, channel = channel, None
            route.succeeded(contact, "relayed")
            return adopted
        while True:
            accepted = await listener.wait(
                channel, timeout=HELLO_WAIT, deadline=deadline, peer=str(route.target)
            )
            if accepted is None:  # the broker said something: a failure raises
                assert channel is not None
                route.check_reply(contact, await channel.run(read_ad()))
                await channel.aclose()
                channel = None  # success: the broker closes now; keep waiting for the target
                continue
            try:
                hello = await accepted.run(read_hello())
            except CedarError:
                hello = None
            if hello is not None and route.hello_matches(hello):
                accepted.timeout = timeout
                accepted.conn = accepted.conn.detached()  # the command's transcript starts now
                route.succeeded(contact, "reversed connection")
                return accepted
            await accepted.aclose()  # not our target: keep waiting (C4)
    finally:
        if listener is not None:
            await listener.aclose()
        if channel is not None:
            await channel.aclose()
