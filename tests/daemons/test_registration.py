"""Command registration defaults of the daemon framework."""

from __future__ import annotations

from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.daemons.schedd import MockSchedd
from cedar.numbers import FORCE_AUTHENTICATION, Command
from cedar.stream.protocol import Protocol


def _handler(request: CommandRequest) -> Protocol[None]:
    return None
    yield  # pragma: no cover


def test_force_authentication_defaults_to_the_reference_registration() -> None:
    daemon = Daemon("d", "SCHEDD")
    daemon.register(Command.ACT_ON_JOBS, _handler, permission="WRITE")
    daemon.register(Command.QUERY_JOB_ADS, _handler)
    daemon.register(Command.QMGMT_WRITE_CMD, _handler, force_authentication=False)
    assert Command.ACT_ON_JOBS in FORCE_AUTHENTICATION
    assert daemon.lookup(Command.ACT_ON_JOBS).force_authentication  # type: ignore[union-attr]
    assert not daemon.lookup(Command.QUERY_JOB_ADS).force_authentication  # type: ignore[union-attr]
    assert not daemon.lookup(Command.QMGMT_WRITE_CMD).force_authentication  # type: ignore[union-attr]
    schedd = MockSchedd()
    forced = {c for c in (516, 519, 1112, 478, 515, 421) if schedd.lookup(c).force_authentication}  # type: ignore[union-attr]
    assert forced == {519, 1112, 478}
