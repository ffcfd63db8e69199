"""The result of one history call: records as they arrive, then the daemon's final ad.

Shared by :meth:`AsyncSchedd.history <cedar.commands.AsyncSchedd.history>` and
:meth:`AsyncStartd.history <cedar.commands.AsyncStartd.history>`; the request and the protocol
are in :mod:`cedar.commands.history`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd
from cedar.commands.history import history_protocol
from cedar.stream.protocol import Protocol

#: How a client runs one streamed command: ``iterate(command, body)``.
AsyncIterate = Callable[[int, Callable[[CommandSession], Protocol[Any]]], AsyncIterator[ClassAd]]


class AsyncHistoryQuery:
    """The records of one history call as they arrive (iterate over it).

    :attr:`summary` is the daemon's final ad once every record was read: ``AdCount`` (records
    of the selected types examined, the one that ended a ``since`` scan included) and
    ``NumJobMatches`` (records sent).  Errors are :class:`~cedar.commands.history.HistoryError`.
    """

    def __init__(
        self, iterate: AsyncIterate, command: int, request: ClassAd, daemon: str = "schedd"
    ) -> None:
        #: The request ad as sent (what ``condor_history`` would send for the same options).
        self.request = request
        #: The final ad, set when the daemon has sent its last one.
        self.summary: ClassAd | None = None
        self._ads = iterate(command, self._body(request, daemon))

    def _body(self, request: ClassAd, daemon: str) -> Callable[[CommandSession], Protocol[ClassAd]]:
        def body(session: CommandSession) -> Protocol[ClassAd]:
            self.summary = yield from history_protocol(session, request, daemon)
            return self.summary

        return body

    def __aiter__(self) -> AsyncHistoryQuery:
        return self

    async def __anext__(self) -> ClassAd:
        ad: ClassAd = await anext(self._ads)
        return ad
