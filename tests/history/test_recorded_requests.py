"""``cedar history`` sends what condor_history sent for the same options: the request ad of
every spec 08 history recording, rebuilt from the recorded command line (captures/index.tsv)."""

from __future__ import annotations

import shlex

import pytest

from cedar.capture import dissect
from cedar.capture.messages import load_conversations
from cedar.capture.replay import ReplayContext
from cedar.cli.history import parse_options
from tests.capture.conftest import capture_index
from tests.support import CAPTURES

ROWS = [
    row
    for row in capture_index()
    if row["command"].startswith("condor_history") and row["security"] in ("raw", "plain")
]


def _recorded_request(name: str) -> dict[str, str]:
    path = CAPTURES / f"{name}.pcap"
    (conv,) = [c for c in dissect(path) if c.transport == "tcp"]
    (raw,) = load_conversations(path)
    ad = ReplayContext(str(path), raw, conv).request_ad()
    return {n: ad.raw_text(n) for n in ad}


def test_every_history_recording_is_covered() -> None:
    assert len(ROWS) == 9  # and history-epochs-fs-aes, whose request is encrypted


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_same_request_as_condor_history(row: dict[str, str]) -> None:
    argv = shlex.split(row["command"])[1:]
    pool = argv.index("-pool")
    del argv[pool : pool + 2]
    ad = parse_options(argv).request()
    ours = {n: ad.raw_text(n) for n in ad}
    recorded = _recorded_request(row["name"])
    if "Requirements" in recorded:  # the same constraint, but for parentheses and spaces

        def bare(text: str) -> str:
            return "".join(ch for ch in text if ch not in "() ")

        assert bare(recorded.pop("Requirements")) == bare(ours.pop("Requirements"))
    assert ours == recorded
