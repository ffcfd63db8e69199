"""The ``krb-*`` recordings (spec 10) replayed in both roles: our KERBEROS client against the
recorded schedd (its ticket rebuilt from the recording with the recorded keytab), our server
against the recorded client (the keytab, the recording's clock, a fresh replay cache)."""

from __future__ import annotations

import functools

import pytest

from cedar.capture.replay import ReplayReport, replay_capture
from tests.support import CAPTURES

KRB = CAPTURES / "krb"
NAMES = sorted(p.stem for p in KRB.glob("krb-*.pcap"))
#: The recorded client failed; ours must fail the same way, with this line.
CLIENT_FAILURES = {
    "krb-ping-noticket-plain": "no Kerberos credential cache",
    "krb-ping-expired-plain": "no Kerberos credential cache",
    "krb-ping-unknownservice-plain": "no Kerberos credential cache",
    "krb-ping-wrongservice-plain": "the server refused our ticket for nokeytab/localhost",
    "krb-probe-skew-plain": "the server refused our ticket for host/localhost",
}


@functools.cache
def reports(name: str) -> tuple[ReplayReport, ...]:
    return tuple(replay_capture(str(KRB / f"{name}.pcap")))


def test_every_krb_recording_is_here() -> None:
    assert len(NAMES) == 11


@pytest.mark.parametrize("name", NAMES)
def test_krb_recordings_replay_on_both_sides(name: str) -> None:
    done = reports(name)
    assert {r.side for r in done} == {"client", "server"}
    for report in done:
        if name.endswith("-aes"):
            assert report.skipped and "encrypted not replayable" in report.skipped
            continue
        assert report.skipped is None
        if report.side == "client" and name in CLIENT_FAILURES:
            (difference,) = report.differences
            assert difference.startswith("our client failed: required authentication")
            assert CLIENT_FAILURES[name] in difference
            continue
        assert report.differences == [], (report.side, report.kind, report.differences)


def test_the_skewed_recording_is_denied_by_our_server() -> None:
    """The recorded authenticator is 600 s ahead of the recording's clock: our server, set to
    that clock, answers DENY as the schedd did (the comparison above found no difference)."""
    (server,) = [r for r in reports("krb-probe-skew-plain") if r.side == "server"]
    assert server.differences == [] and server.skipped is None
