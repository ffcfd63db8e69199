"""CCB, the target's side (spec 09 §4): a cedar daemon that cannot be dialled registers with a
broker and answers each forwarded request by connecting back.

:class:`CcbTarget` keeps one registration alive: ``CCB_REGISTER`` (67) with a fresh negotiated
session, the id and cookie the broker gives (the daemon's sinful gains ``CCBID``), a heartbeat
(``ALIVE``, 441) when the connection has been quiet for ``heartbeat`` seconds, a
re-registration with the old id and cookie after ``reconnect`` seconds when the connection
breaks.  A forwarded request (``Command = 68``) is answered in its own task: dial ``MyAddress``
(shared-port preamble when it has ``sock``), send the raw hello ``I(69) {ClaimId, MyAddress,
RequestID}``, report the result to the broker, and serve the connection as any other.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import trio

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, default_security
from cedar.auth.sharedport import send_preamble
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd
from cedar.commands.base import command_protocol
from cedar.commands.ccb import read_ad, send_ad
from cedar.daemons.ccb_model import hello, registration_ad, result_for
from cedar.daemons.daemon import Daemon
from cedar.errors import CedarError, CedarTimeout
from cedar.numbers import Command
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import Deadline, TrioChannel
from cedar.stream.protocol import Protocol

log = logging.getLogger("cedar.daemons.ccb")

#: The deadline a target's shared-port preamble announces: the reference's ``CCB_TIMEOUT``
#: (``I(300)`` in every recorded preamble of a reversed connection, spec 09 §4.3).
PREAMBLE_DEADLINE = 300
#: Seconds between checks of the queue of results while the broker is quiet.
_POLL = 1.0


def reverse_hello(
    conn: CedarConnection, address: Sinful, greeting: ClassAd, name: str
) -> Protocol[None]:
    """The first bytes of a reversed connection (spec 09 §4.3): the shared-port preamble when
    ``address`` has ``sock`` (``name`` describes the target), then the raw hello."""
    if address.shared_port_id:
        yield from send_preamble(conn, address.shared_port_id, client_name=name,
                                 deadline=PREAMBLE_DEADLINE)  # fmt: skip
    yield from send_ad(conn, greeting, Command.CCB_REVERSE_CONNECT)


class CcbTarget:
    """One broker registration of ``daemon`` (run :meth:`run` in the daemon's nursery)."""

    def __init__(
        self,
        daemon: Daemon,
        broker: str,
        *,
        security: ClientSecurity | None = None,
        heartbeat: float = 300.0,
        reconnect: float = 60.0,
        timeout: float = 20.0,
        max_reversed: int = 16,
    ) -> None:
        self.daemon = daemon
        self.broker = Sinful.parse(broker if broker.startswith("<") else f"<{broker}>")
        # A registration always makes a new session (spec 09 §4.1): a session cached from
        # before a broker restart would be refused, and the daemon could never come back.
        policy = (security or default_security()).config
        self.security = ClientSecurity(dataclasses.replace(policy, resume_sessions=False))
        self.heartbeat = max(heartbeat, 1.0)
        self.reconnect = reconnect
        self.timeout = timeout
        #: Reversed connections being made or served at once; more requests are refused.
        self.max_reversed = max_reversed
        self._active = 0
        #: ``<broker>#<id>`` once registered; kept across reconnections (spec 09 §4.1).
        self.contact: str | None = None
        self._cookie: str | None = None
        self.registered = trio.Event()
        #: Successful registrations so far (the first, then one per re-registration).
        self.registrations = 0
        self._results: list[ClassAd] = []

    async def run(self) -> None:
        """Register, serve forwarded requests, re-register after a failure; until cancelled."""
        async with trio.open_nursery() as nursery:  # the reversed connections live here
            while True:
                try:
                    await self._session(nursery)
                except CedarError as exc:
                    log.info("%s: connection to CCB server %s failed (%s); retrying in %g s",
                             self.daemon.name, self.broker, exc, self.reconnect)  # fmt: skip
                await trio.sleep(self.reconnect)

    def _registration(self) -> ClassAd:
        name = f"{self.daemon.daemon_type} {self.daemon.address}"
        return registration_ad(name, self.contact, self._cookie)

    async def _session(self, nursery: trio.Nursery) -> None:
        target = self.broker.connect_target()
        host, port = target.endpoint
        channel = await TrioChannel.connect(host, port, timeout=self.timeout)
        async with channel:
            ad = self._registration()

            def body(session: CommandSession) -> Protocol[ClassAd]:
                yield from send_ad(channel.conn, ad)
                return (yield from read_ad())

            reply = await channel.run(
                command_protocol(
                    channel.conn,
                    target,
                    Command.CCB_REGISTER,
                    body,
                    security=self.security,
                    raw=False,
                )  # fmt: skip
            )
            contact, cookie = reply.get_string("CCBID"), reply.get_string("ClaimId")
            if not contact or not cookie:
                raise CedarError(f"CCB server {self.broker} sent no CCBID in its reply")
            self.contact, self._cookie = contact, cookie
            self.daemon.set_ccb_contact(contact)
            self.registrations += 1
            self.registered.set()
            log.info("%s: registered with CCB server as %s", self.daemon.name, contact)
            await self._serve(channel, nursery)

    async def _serve(self, channel: TrioChannel, nursery: trio.Nursery) -> None:
        """The persistent connection: results out, requests in, a heartbeat when quiet; a
        broken connection raises (and :meth:`run` re-registers)."""
        quiet = trio.current_time()
        while True:
            while self._results:
                await channel.run(send_ad(channel.conn, self._results.pop(0)))
            channel.timeout = _POLL
            try:
                message = await channel.run(read_ad())
            except CedarTimeout:
                if channel.conn.buffered_bytes:
                    raise  # a message cut short: the connection is no longer usable
                if trio.current_time() - quiet >= self.heartbeat:
                    alive = ClassAd({"Command": int(Command.ALIVE)})
                    await channel.run(send_ad(channel.conn, alive))
                    quiet = trio.current_time()
                continue
            quiet = trio.current_time()
            if message.get("Command") != Command.CCB_REQUEST:
                continue  # the broker's answer to our heartbeat, or nothing we know
            if self._active >= self.max_reversed:  # a flood: refuse, do not dial
                refused = result_for(message, "too many reversed connections at once")
                if refused is not None:
                    self._results.append(refused)
                continue
            self._active += 1
            nursery.start_soon(self._connect_back, message)

    async def _connect_back(self, request: ClassAd) -> None:
        try:
            await self._reverse(request)
        finally:
            self._active -= 1

    async def _reverse(self, request: ClassAd) -> None:
        """Dial the requester, say hello, report, then serve the connection (§4.3)."""
        result = result_for(request, "")
        if result is None:
            return  # missing MyAddress, ClaimId or RequestID: nothing to answer
        where, connect_id, request_id = (
            str(result[n]) for n in ("MyAddress", "ClaimId", "RequestID")
        )
        try:
            address = Sinful.parse(where).connect_target()
            host, port = address.endpoint
            channel = await TrioChannel.connect(host, port, timeout=self.timeout,
                                                deadline=Deadline(self.timeout))  # fmt: skip
        except CedarError as exc:
            result["ErrorString"] = f"failed to connect: {exc}"
            self._results.append(result)
            return
        try:
            greeting = hello(connect_id, where, request_id)
            name = f"{self.daemon.daemon_type} {self.daemon.address}"
            await channel.run(reverse_hello(channel.conn, address, greeting, name))
        except CedarError:
            result["ErrorString"] = "failure writing reverse connect command"
            self._results.append(result)
            await channel.aclose()
            return
        result["Result"] = True
        self._results.append(result)
        stream: Any = channel.stream
        try:
            await self.daemon.handle_stream(stream)
        except Exception:  # one requester's connection must not end the registration
            log.exception("%s: serving a reversed connection failed", self.daemon.name)
