"""A mock startd that answers queries about its own slots (``condor_status -direct``).

``cedar pool --ccb startd`` runs one behind the pool's broker, so that a newcomer can watch a
daemon reached only through CCB (spec 09).  Its slots are kept in an
:class:`~cedar.daemons.ad_store.AdStore`, which answers the query as the collector's does
(constraint, projection, limit, spec 05 §2.3).
"""

from __future__ import annotations

import logging

from cedar.auth.server_policy import ServerPolicy
from cedar.classad_wire import ClassAd
from cedar.daemons.ad_store import MACHINE, AdStore, write_answer
from cedar.daemons.daemon import CommandRequest, Daemon, decode, offload, strict_ad
from cedar.errors import CedarError, EvaluationBudgetExceeded
from cedar.numbers import Command
from cedar.stream.protocol import Protocol, Send

log = logging.getLogger(__name__)


class MockStartd(Daemon):
    """A startd serving ``QUERY_STARTD_ADS`` from its own slot ads (``slots``)."""

    def __init__(
        self,
        name: str = "startd",
        *,
        slots: list[ClassAd],
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(name, "STARTD", policy=policy, host=host, port=port)
        self.store = AdStore()
        for slot in slots:
            self.store.add(slot, MACHINE)
        self.register(Command.QUERY_STARTD_ADS, self._query, permission="READ")

    def _query(self, request: CommandRequest) -> Protocol[None]:
        """As the collector answers (spec 05 §2.4); bad input closes without a reply."""
        reader = yield from request.read_payload()
        try:
            query = yield from decode(reader, strict_ad)
            answer = yield from offload(
                lambda: self.store.answer(
                    request.command, query, private=False, budget=request.budget
                )
            )
        except (CedarError, EvaluationBudgetExceeded) as exc:
            log.info("%s: query refused (%s); closing", self.name, exc)
            return
        if answer is not None:
            yield Send(write_answer(request.writer(), answer))


__all__ = ["MockStartd"]
