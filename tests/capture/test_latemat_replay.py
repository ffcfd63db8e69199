"""The late-materialization recordings (captures/latemat, condor_submit 25.13.2, "plain"
security) replayed on both sides: our client sends what condor_submit sent, our mock schedd
answers what the real one answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from cedar.capture import dissect
from cedar.capture.replay import replay_capture
from cedar.numbers import QmgmtCall
from cedar.submit_language import Submit
from cedar.submit_language.factory import job_factory, max_materialize

from .conftest import CAPTURES

LATEMAT = CAPTURES / "latemat"
#: capture -> the submit file condor_submit read (in LATEMAT), the cluster id, whether the item
#: rows can be rebuilt here (``matching`` matched the recording directory's files)
RECORDED = {
    "submit-maxidle-plain": ("maxidle.sub", 1, True),
    "submit-items-plain": ("items.sub", 2, True),
    "submit-itemsfile-plain": ("itemsfile.sub", 11, True),
    "submit-in-plain": ("in.sub", 13, True),
    "submit-matching-plain": ("matching.sub", 14, False),
}
IWD = "/tmp/pool-latemat/jobs/lm"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_both_sides_replay(name: str) -> None:
    reports = replay_capture(str(LATEMAT / f"{name}.pcap"))
    assert {(r.kind, r.side) for r in reports} == {("submit", "client"), ("submit", "server")}
    for report in reports:
        assert report.ok, (report.side, report.skipped, report.differences)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_our_digest_and_items_are_the_recorded_ones(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub, cluster, same_items = RECORDED[name]
    (conv,) = dissect(Path(LATEMAT / f"{name}.pcap"))
    calls = [m.fields for m in conv.messages if m.kind == "QMGMT_CALL"]
    rpcs = [c["rpc"] for c in calls]
    assert QmgmtCall.NewProc not in rpcs  # the factory replaces every proc
    (factory_call,) = [c for c in calls if c["rpc"] == QmgmtCall.SetJobFactory]
    replies = [m.fields for m in conv.messages if m.kind == "QMGMT_REPLY"]
    spool = next((r["spool_file"] for r in replies if "spool_file" in r), None)
    monkeypatch.chdir(LATEMAT)  # queue ... from items2.txt is read from here
    submit = Submit.from_file(str(LATEMAT / sub))
    ads = submit.build(cluster, submit_dir=str(LATEMAT))
    ours = job_factory(
        submit, ads, max_materialize=max_materialize(submit), submit_dir=str(LATEMAT)
    )
    assert ours.digest(spool).replace(str(LATEMAT), IWD) == factory_call["digest"]
    assert ours.maximum == factory_call["maximum"]
    sent = [c for c in calls if c["rpc"] == QmgmtCall.SendMaterializeData]
    if ours.items is None:
        assert not sent
    else:
        assert not same_items or ours.item_data().decode() == sent[0]["items"]
        # the order condor_submit used: items, then the factory, then the cluster ad
        assert rpcs.index(QmgmtCall.SendMaterializeData) < rpcs.index(QmgmtCall.SetJobFactory)
    first_set = rpcs.index(QmgmtCall.SetAttribute2)
    assert rpcs.index(QmgmtCall.SetJobFactory) < first_set
