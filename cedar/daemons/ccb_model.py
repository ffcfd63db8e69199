"""CCB's model (spec 09 §4, §6, §7): what the broker keeps and every ad of the protocol.

No I/O here: the registration and request ads read, the replies and the forwarded request
written, the ids and cookies handed out, and the reconnect table (with its file, spec 09 §6.2)
that lets a target reclaim its id after a broker restart.  :mod:`cedar.daemons.ccb_broker`
runs it over the connections of the mock collector; :mod:`cedar.daemons.ccb_target` writes
the target's ads with it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd
from cedar.errors import ClassAdError
from cedar.numbers import Command

#: What the reference says for an unknown id (spec 09 §6.4 step 2, observed), word for word.
UNKNOWN_ID = (
    "CCB server rejecting request for ccbid {ccbid} because no daemon is currently registered "
    "with that id (perhaps it recently disconnected)."
)
STREAMING_DISABLED = (
    "CCB streaming mode is required to reach this daemon but is disabled on the CCB server "
    "(CCB_SERVER_STREAMING is false)"
)
#: Ids skipped after loading a reconnect file (the reference's margin, spec 09 §6.2).
RELOAD_MARGIN = 100


@dataclass(frozen=True)
class BrokerLimits:
    """What one broker holds at most; beyond each, a clear refusal (never unbounded memory)."""

    #: Registered targets (each holds one connection of the daemon).
    max_targets: int = 128
    #: Requests waiting for one target's answer; more are refused at once.
    max_pending_per_target: int = 16
    #: Requests waiting over all targets (normal and streaming).
    max_pending: int = 256
    #: Relays running at once (``CCB_SERVER_MAX_STREAMING_SESSIONS``; the reference: unlimited).
    max_streaming: int = 32
    #: Seconds a request waits for its target's result or reverse connection.
    request_timeout: float = 60.0
    #: Seconds a target may stay silent before it is dropped (its heartbeat is 300 s at most
    #: by default; three missed ones end it, as the target itself judges, spec 09 §4.2).
    target_idle: float = 3 * 300.0 + 60.0
    #: Seconds a relay may run (the reference has no idle timeout; this bounds a slot).
    relay_lifetime: float = 24 * 3600.0
    #: Bytes read at once from either side of a relay (the reference's 4-32 KiB buffers).
    relay_chunk: int = 32 * 1024
    #: Streaming (proxy) mode offered (``CCB_SERVER_STREAMING``).
    streaming: bool = True


def bare_address(sinful: str) -> str:
    """The broker's name for itself (spec 09 §2.1): its sinful without ``PrivAddr``,
    ``PrivNet`` and ``CCBID``, without the angle brackets."""
    parsed = Sinful.parse(sinful)
    for name in ("PrivAddr", "PrivNet", "CCBID"):
        parsed.params.pop(name, None)
    return str(parsed)[1:-1]


def _string(ad: ClassAd, name: str) -> str | None:
    try:
        return ad.get_string(name)
    except ClassAdError:
        return None


def _true(ad: ClassAd, name: str) -> bool:
    try:
        return ad.get(name) is True
    except ClassAdError:
        return False


@dataclass(frozen=True)
class Registration:
    """A ``CCB_REGISTER`` ad: its description, and the id and cookie of a re-registration."""

    name: str
    ccbid: int | None
    cookie: str | None


def parse_registration(ad: ClassAd) -> Registration:
    """The registration ad (spec 09 §4.1); a ``CCBID`` contact counts by the id after ``#``."""
    contact, cookie = _string(ad, "CCBID"), _string(ad, "ClaimId")
    ccbid = None
    if contact is not None and cookie is not None:
        number = contact.rpartition("#")[2]
        if number.isascii() and number.isdigit() and len(number) < 12:
            ccbid = int(number)
    return Registration(_string(ad, "Name") or "", ccbid, cookie if ccbid is not None else None)


def registration_ad(name: str, contact: str | None = None, cookie: str | None = None) -> ClassAd:
    """The target's ``CCB_REGISTER`` ad (spec 09 §4.1): its description, and the id and cookie
    it had when it registers again."""
    ad = ClassAd({"Name": name})
    if contact is not None and cookie is not None:
        ad["CCBID"] = contact
        ad["ClaimId"] = cookie
    ad["Command"] = int(Command.CCB_REGISTER)
    return ad


def registration_reply(contact: str, cookie: str) -> ClassAd:
    """The broker's answer to a registration (spec 09 §4.1, in the observed order)."""
    return ClassAd({"CCBID": contact, "ClaimId": cookie, "Command": int(Command.CCB_REGISTER)})


@dataclass(frozen=True)
class Request:
    """A ``CCB_REQUEST`` ad as the broker reads it (spec 09 §6.4 step 1, §7.2)."""

    ccbid: int
    connect_id: str
    my_address: str
    name: str
    streaming: bool


def parse_request(ad: ClassAd) -> Request | None:
    """The request, or None when malformed (no ``CCBID``/``MyAddress``/``ClaimId``, or a
    ``CCBID`` that is not a decimal number): the broker then closes without a reply."""
    ccbid, connect_id = _string(ad, "CCBID"), _string(ad, "ClaimId")
    my_address = _string(ad, "MyAddress")
    if ccbid is None or connect_id is None or my_address is None:
        return None
    if not (ccbid.isascii() and ccbid.isdigit() and len(ccbid) < 12):
        return None
    streaming = _true(ad, "CCBStreamingRequired")
    if not streaming and "CCBID" in my_address:  # a requester behind CCB itself (§7.2)
        with contextlib.suppress(ValueError):
            streaming = bool(Sinful.parse(my_address).ccb_contacts)
    return Request(int(ccbid), connect_id, my_address, _string(ad, "Name") or "", streaming)


def forwarded(request: Request, description: str, request_id: str, where: str) -> ClassAd:
    """The request the broker sends the target (spec 09 §4.3, in the observed order);
    ``where`` is the requester's address, or the broker's own in streaming mode."""
    return ClassAd(
        {
            "Name": description,
            "ClaimId": request.connect_id,
            "Command": int(Command.CCB_REQUEST),
            "MyAddress": where,
            "RequestID": request_id,
        }
    )


def reply(result: bool, error: str = "", *, proxy: bool = False) -> ClassAd:
    """The broker's answer to a requester (spec 09 §5.4, §10.4)."""
    if proxy:
        return ClassAd({"Result": True, "ProxyMode": True})
    return ClassAd({"Result": result, "ErrorString": error})


def hello(connect_id: str, my_address: str, request_id: str) -> ClassAd:
    """The ad of a reversed connection's first message (``I(69)`` then this, spec 09 §4.3)."""
    return ClassAd({"ClaimId": connect_id, "MyAddress": my_address, "RequestID": request_id})


def result_for(request: ClassAd, error: str = "") -> ClassAd | None:
    """The target's report on a forwarded request (spec 09 §4.3 step 4), failed with
    ``error`` until it succeeds; None when the request lacks a field (nothing to answer)."""
    where = _string(request, "MyAddress")
    connect_id, request_id = _string(request, "ClaimId"), _string(request, "RequestID")
    if not where or connect_id is None or request_id is None:
        return None
    result = ClassAd(
        {"Result": False, "ClaimId": connect_id, "MyAddress": where, "RequestID": request_id}
    )
    if error:
        result["ErrorString"] = error
    return result


@dataclass(frozen=True)
class Result:
    """A target's report on the persistent connection (spec 09 §4.3 step 4)."""

    request_id: str | None
    connect_id: str | None
    success: bool
    error: str


def parse_result(ad: ClassAd) -> Result:
    """The report; a missing ``RequestID`` or ``ClaimId`` stays None (the broker then drops
    the target, spec 09 §6.4 step 6)."""
    return Result(
        _string(ad, "RequestID"),
        _string(ad, "ClaimId"),
        _true(ad, "Result"),
        _string(ad, "ErrorString") or "",
    )


def is_heartbeat(ad: ClassAd) -> bool:
    """``{Command = 441}`` (spec 09 §4.2), answered with the same ad."""
    try:
        return ad.get("Command") == Command.ALIVE
    except ClassAdError:
        return False


class ReconnectTable:
    """Ids, cookies and peer addresses of registrations (spec 09 §6.2-§6.3).

    With ``path`` the table is also a file, one ``<ip> <ccbid> <cookie>`` line per
    registration, read at start (ids then go on past the largest, plus a margin), so targets
    reclaim their ids after a restart.  At most ``limit`` entries are kept (the oldest go).
    """

    def __init__(self, path: str | None = None, *, limit: int = 4096) -> None:
        self.path = path
        self.limit = limit
        self.entries: dict[int, tuple[str, str]] = {}
        self.next_id = 1
        if path is not None and os.path.exists(path):
            self._load(path)

    def _load(self, path: str) -> None:
        with open(path, encoding="ascii", errors="replace") as lines:
            for line in lines:
                fields = line.split()
                if len(fields) == 3 and fields[1].isdigit() and len(fields[1]) < 12:
                    self.entries[int(fields[1])] = (fields[0], fields[2])
        while len(self.entries) > self.limit:
            del self.entries[next(iter(self.entries))]
        if self.entries:
            self.next_id = max(self.next_id, max(self.entries) + 1) + RELOAD_MARGIN

    def reclaim(self, registration: Registration, peer: str, *, any_ip: bool = False) -> bool:
        """Whether a re-registration may have its old id back (same cookie and peer)."""
        if registration.ccbid is None:
            return False
        known = self.entries.get(registration.ccbid)
        return (
            known is not None
            and secrets.compare_digest(known[1], registration.cookie or "")
            and (any_ip or known[0] == peer)
        )

    def allocate(self, peer: str, in_use: AbstractSet[int]) -> tuple[int, str]:
        """A fresh id (skipping any known or in use) and a random 32-bit decimal cookie."""
        while self.next_id in self.entries or self.next_id in in_use:
            self.next_id += 1
        ccbid, cookie = self.next_id, str(secrets.randbits(32))
        self.next_id += 1
        while len(self.entries) >= self.limit:
            oldest = next((i for i in self.entries if i not in in_use), None)
            if oldest is None:
                break
            del self.entries[oldest]
        self.entries[ccbid] = (peer, cookie)
        self._save()
        return ccbid, cookie

    def cookie(self, ccbid: int) -> str:
        """The cookie of a known id."""
        return self.entries[ccbid][1]

    def _save(self) -> None:
        if self.path is None:
            return
        text = "".join(f"{ip} {ccbid} {cookie}\n" for ccbid, (ip, cookie) in self.entries.items())
        temporary = f"{self.path}.tmp"
        with open(temporary, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(temporary, self.path)


__all__ = [
    "STREAMING_DISABLED",
    "UNKNOWN_ID",
    "BrokerLimits",
    "ReconnectTable",
    "Registration",
    "Request",
    "Result",
    "bare_address",
    "forwarded",
    "hello",
    "is_heartbeat",
    "parse_registration",
    "parse_request",
    "parse_result",
    "registration_ad",
    "registration_reply",
    "result_for",
    "reply",
]
