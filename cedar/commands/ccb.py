"""CCB, the requester's side (spec 09 §5, §7): reaching a daemon that only connects out.

A daemon whose sinful carries ``CCBID`` is never dialled: we ask one of its brokers (a
collector) with ``CCB_REQUEST`` (68) to have it connect back to a socket we listen on, check
the first message on that connection (``CCB_REVERSE_CONNECT`` with our connect id), and then
run the command over it as its client, exactly as on a direct connection.  A requester that
cannot listen asks for the streaming mode instead: the broker relays the bytes on the request's
own connection.

This module holds what does no I/O: the contacts of an address, the request ad, the broker's
reply, the hello check and the route's errors.  The drivers are
:func:`cedar.commands._async.ccb.open_channel_async` and its sync twin, which every client's
connection goes through.
"""

from __future__ import annotations

import os

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, default_security
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands.base import Body
from cedar.commands.errors import CcbRefused
from cedar.errors import CedarConnectionError, CedarTimeout, ClassAdError
from cedar.numbers import Command
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send

#: Seconds an accepted connection may take to send its hello before it is dropped (a forged
#: or stalled one must not keep the target's real connection out for the whole call).
HELLO_WAIT = 5.0
#: The requester's description the broker passes on to the target (the reference tools').
REQUESTER_NAME = "TOOL"


class BrokerContact(Record, frozen=True):
    """One ``<broker-address>#<ccbid>`` contact of a target's ``CCBID`` (spec 09 §2.2)."""

    __slots__ = ("broker", "ccbid")
    broker: Sinful
    ccbid: str

    def __init__(self, broker: Sinful, ccbid: str) -> None:
        self._set(broker, ccbid)

    @property
    def broker_text(self) -> str:
        """The broker as the reference names it in messages (its bare address)."""
        return str(self.broker)[1:-1]


def broker_contacts(target: Sinful) -> list[BrokerContact]:
    """The brokers of ``target`` (C1): ``CCBID`` split on spaces, each at its first ``#``.

    A contact without ``#``, with an id that is not a decimal number or an unreadable broker
    address is skipped ("Bad CCB contact"); the caller fails if none is left.
    """
    contacts = []
    for text in target.ccb_contacts:
        address, hash_sign, ccbid = text.partition("#")
        if not hash_sign or not ccbid.isdigit() or not ccbid.isascii() or not address:
            continue
        try:
            broker = Sinful.parse(address if address.startswith("<") else f"<{address}>")
        except ValueError:
            continue
        if broker.port is None:
            continue
        contacts.append(BrokerContact(broker, ccbid))
    return contacts


def request_ad(
    contact: BrokerContact, connect_id: str, my_address: str | None, name: str = REQUESTER_NAME
) -> ClassAd:
    """The ``CCB_REQUEST`` ad (C3): normal mode with our listening sinful, or streaming mode
    (``my_address`` None: ``MyAddress = ""`` and ``CCBStreamingRequired``, C8); ``name``
    describes the requester (tools say ``TOOL``, daemons their subsystem and sinful)."""
    ad = ClassAd()
    ad["Name"] = name
    ad["CCBID"] = contact.ccbid
    ad["ClaimId"] = connect_id
    ad["MyAddress"] = my_address or ""
    if my_address is None:
        ad["CCBStreamingRequired"] = True
    return ad


def request_sender(ad: ClassAd) -> Body[None]:
    """The body of ``CCB_REQUEST``: the ad, then the end of the message (the reply is read
    later, while also watching the listener)."""

    def body(session: CommandSession) -> Protocol[None]:
        writer = session.payload_writer()
        put_classad(writer, ad)
        yield Send(writer)

    return body


def send_ad(conn: CedarConnection, ad: ClassAd, command: int | None = None) -> Protocol[None]:
    """One message holding ``I(command)`` (when given) and one ad: every message of a CCB
    registration connection, and a reversed connection's hello (spec 09 §4)."""
    writer = conn.writer()
    if command is not None:
        writer.put_int(command)
    put_classad(writer, ad)
    yield Send(writer)


def read_ad() -> Protocol[ClassAd]:
    """One message holding one ad (the broker's reply, a registration's messages)."""
    message: MessageReader = yield Receive()
    ad = get_classad(message)
    return ad


def read_hello() -> Protocol[tuple[int, ClassAd]]:
    """The first message of a reversed connection: ``I(command)`` and an ad (C4)."""
    message: MessageReader = yield Receive()
    command = message.get_int()
    ad = get_classad(message)
    return command, ad


def _true(ad: ClassAd, name: str) -> bool:
    try:
        return ad.get(name) is True
    except ClassAdError:
        return False


def wants_streaming(security: ClientSecurity | None) -> bool:
    """Whether this client cannot listen (``TOOLS_ASSUME_FIREWALLS``) and asks the broker to
    relay (streaming mode, spec 09 §7.1)."""
    config = (security or default_security()).config.options.get("config")
    return bool(config is not None and config.get_bool("TOOLS_ASSUME_FIREWALLS", False))


def private_network(security: ClientSecurity | None) -> str | None:
    """This client's ``PRIVATE_NETWORK_NAME`` (default: the host's full name), or None."""
    config = (security or default_security()).config.options.get("config")
    return None if config is None else config.get("PRIVATE_NETWORK_NAME")


def on_private_network(target: Sinful, network: str | None) -> Sinful | None:
    """The address to dial when ``target`` is on our private network (spec 09 §3 step 1: same
    ``PrivNet``, exact and case-sensitive): its ``PrivAddr``, or itself without ``CCBID``."""
    if not network or target.params.get("PrivNet") != network:
        return None
    return target.connect_target(network)


class CcbRoute(Record):
    """One attempt to reach ``target`` through its brokers: the connect id, the order of the
    brokers (random, spec 09 §5.6), and what each broker said (for the final error)."""

    __slots__ = (
        "target",
        "contacts",
        "streaming",
        "connect_id",
        "failures",
        "taken",
        "timed_out",
    )

    def __init__(
        self,
        target: Sinful,
        contacts: list[BrokerContact],
        streaming: bool = False,
        connect_id: str | None = None,
        failures: list[str] | None = None,
        taken: str | None = None,
        timed_out: bool = False,
    ) -> None:
        self.target = target
        self.contacts = contacts
        self.streaming = streaming
        self.connect_id = os.urandom(20).hex() if connect_id is None else connect_id  # 40 hex
        self.failures = [] if failures is None else failures
        #: How the connection was made, once it was (``cedar ping`` shows it).
        self.taken = taken
        #: The last broker's failure was a timeout (the call's deadline, mostly): the error
        #: says so.
        self.timed_out = timed_out

    def order(self) -> list[BrokerContact]:
        """The brokers in the order to try them."""
        import random  # here: a query that meets no broker does not pay for the module

        contacts = list(self.contacts)
        random.shuffle(contacts)
        return contacts

    def check_reply(self, contact: BrokerContact, reply: ClassAd) -> bool:
        """A broker's reply (§5.4): True for ``ProxyMode``, False for a plain success; a
        failure raises :class:`CcbRefused` with the broker's reason."""
        if not _true(reply, "Result"):
            reason = reply.get_string("ErrorString") or "no reason given"
            raise CcbRefused(
                f"received failure message from CCB server {contact.broker_text} in response to "
                f"request for reversed connection to {self.target}: {reason}"
            )
        return _true(reply, "ProxyMode")

    def hello_matches(self, hello: tuple[int, ClassAd]) -> bool:
        """Whether a reversed connection's first message is ours (command 69, our id; C4)."""
        command, ad = hello
        return (
            command == Command.CCB_REVERSE_CONNECT and ad.get_string("ClaimId") == self.connect_id
        )

    def not_relayed(self, contact: BrokerContact) -> CcbRefused:
        """A streaming request answered with success but without ``ProxyMode``."""
        return CcbRefused(
            f"CCB server {contact.broker_text} does not relay connections (no ProxyMode in its "
            "reply): this client cannot listen for the reversed connection"
        )

    def bad_relayed_hello(self, contact: BrokerContact) -> CcbRefused:
        """The hello a broker relayed is not the target's answer to our request."""
        return CcbRefused(
            f"invalid hello message from the reversed connection relayed by CCB server "
            f"{contact.broker_text}"
        )

    def failed(self, contact: BrokerContact, error: Exception) -> None:
        """Remember why ``contact`` gave no connection."""
        self.failures.append(
            f"via CCB server {contact.broker_text} (ccbid {contact.ccbid}): {error}"
        )
        self.timed_out = isinstance(error, CedarTimeout)

    def succeeded(self, contact: BrokerContact, how: str) -> None:
        """Remember the route taken."""
        self.taken = f"CCB {how} via {contact.broker_text} (ccbid {contact.ccbid})"

    def error(self) -> CedarConnectionError:
        """The error when no broker gave a connection."""
        if not self.contacts:
            return CedarConnectionError(
                f"{self.target} is reachable only through CCB, but its CCBID holds no usable "
                "contact (Bad CCB contact)"
            )
        kind = CedarTimeout if self.timed_out else CedarConnectionError
        return kind(f"failed to connect to {self.target} through CCB: " + "; ".join(self.failures))


__all__ = [
    "HELLO_WAIT",
    "BrokerContact",
    "CcbRefused",
    "CcbRoute",
    "broker_contacts",
    "on_private_network",
    "private_network",
    "read_ad",
    "read_hello",
    "request_ad",
    "request_sender",
    "send_ad",
    "wants_streaming",
]
