"""Small building blocks for mock daemons in tests (here so every test suite shares them).

:class:`RecordingQueryHandler` answers a collector-style query (``int 1, ad`` per result, then
``int 0``) with fixed ads and records who asked under which security; :func:`mock_daemon` builds a
daemon serving it as ``QUERY_STARTD_ADS`` (5), which the reference client's
``Collector.query`` sends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.stream.protocol import Protocol, Send

QUERY_STARTD_ADS = 5


@dataclass(frozen=True)
class SeenRequest:
    """What a handler saw of one request."""

    command: int
    user: str | None
    method: str | None
    encrypted: bool
    resumed: bool
    raw: bool
    query: dict[str, Any]


class RecordingQueryHandler:
    """Answers every query with the same ads; ``seen`` lists the requests in order."""

    def __init__(self, ads: Iterable[ClassAd] = ()) -> None:
        self.ads = list(ads)
        self.seen: list[SeenRequest] = []

    def __call__(self, request: CommandRequest) -> Protocol[None]:
        message = yield from request.read_payload()
        query = get_classad(message)
        self.seen.append(
            SeenRequest(
                request.command,
                request.user,
                request.method,
                request.encrypted,
                request.resumed,
                request.raw,
                dict(query.items()),
            )
        )
        writer = request.writer()
        for ad in self.ads:
            writer.put_int(1)
            put_classad(writer, ad)
        writer.put_int(0)
        yield Send(writer)


def slot_ad(name: str = "slot1@mock") -> ClassAd:
    """A minimal machine ad."""
    ad = ClassAd()
    ad["MyType"] = "Machine"
    ad["Name"] = name
    return ad


def mock_daemon(
    *,
    methods: Iterable[str] = ("FS", "CLAIMTOBE"),
    name: str = "mock",
    daemon_type: str = "COLLECTOR",
    **policy: Any,
) -> tuple[Daemon, RecordingQueryHandler]:
    """A daemon with the given methods at every level, answering ``QUERY_STARTD_ADS``."""
    levels = policy.pop("levels", {})
    levels.setdefault("DEFAULT", LevelPolicy(methods=list(methods)))
    daemon = Daemon(name, daemon_type, policy=ServerPolicy(levels=levels, **policy))
    handler = RecordingQueryHandler([slot_ad()])
    daemon.register(QUERY_STARTD_ADS, handler, permission="READ")
    return daemon, handler


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Poll ``predicate`` until it holds (for server-side effects of fire-and-forget commands).

    Returns the final value, so ``assert wait_for(...)`` fails only if the effect never came
    (the generous default is for loaded CI machines: a wait that holds at once costs nothing).
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
