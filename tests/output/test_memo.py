"""Per-row work done once per distinct input (:mod:`cedar.output.memo`) and the tables that use
it: the same output as computing every row, for ads as they come off the wire (which share their
names) and for ads built in memory (which do not)."""

from __future__ import annotations

import io
import time

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.output import STATUS_TABLES, batch_lines, q_view
from cedar.output.memo import Memo, RawTexts, literal_key
from cedar.stream.primitives import MessageReader, MessageWriter


def wire_ad(text: str) -> ClassAd:
    """An ad as a query reads it: through the wire codec (shared names, received texts)."""
    writer = MessageWriter()
    put_classad(writer, ClassAd.parse_old(text))
    return get_classad(MessageReader(writer.getvalue()))


def test_memo_shares_results_of_equal_literal_texts_only() -> None:
    calls: list[str] = []

    def compute(ad: ClassAd) -> str:
        calls.append(str(ad["Owner"]))
        return f"{ad['Owner']}:{ad.eval('Mem')}"

    memo = Memo(["Owner", "Mem"], compute)
    ads = [wire_ad(f'Owner = "u{n % 2}"\nMem = 10\nId = {n}') for n in range(6)]
    assert [memo(ad) for ad in ads] == ["u0:10", "u1:10"] * 3
    assert calls == ["u0", "u1"]  # one computation per distinct (Owner, Mem) texts
    # an expression may read attributes outside the key: computed for every ad
    exprs = [wire_ad(f'Owner = "u"\nMem = Id * 2\nId = {n}') for n in range(3)]
    assert [memo(ad) for ad in exprs] == ["u:0", "u:2", "u:4"]
    assert len(calls) == 5


def test_memo_tells_absent_from_present_names() -> None:
    memo = Memo(["A", "B"], lambda ad: (ad.get("A"), ad.get("B")))
    with_a = wire_ad('A = "x"\nC = 1')
    with_b = wire_ad('B = "x"\nC = 1')
    assert memo(with_a) == ("x", None) and memo(with_b) == (None, "x")


def test_memo_gives_up_on_distinct_inputs_and_on_unshared_names() -> None:
    memo = Memo(["Id"], lambda ad: ad["Id"])
    for n in range(3000):
        assert memo(ClassAd({"Id": n})) == n  # in-memory ads: no shared names tuple
    assert memo._texts.planned <= 64  # bounded: the plans start over


def test_raw_texts_key_is_the_received_text() -> None:
    read = RawTexts(["a", "MISSING", "b"])
    key = read(wire_ad('A = 1\nB = "two"\nC = x + 1'))
    assert key[1] in ((b"1", b'"two"'), ("1", '"two"'))
    assert literal_key(key)
    assert not literal_key(read(wire_ad("A = x + 1\nB = 2")))


SLOT = """Name = "slot{n}@host{h}"
Machine = "host{h}"
OpSys = "LINUX"
Arch = "X86_64"
State = {state}
Activity = "Idle"
CondorLoadAvg = 0.0
Memory = {memory}
EnteredCurrentActivity = 1000
LastHeardFrom = 1100
MyCurrentTime = 1100"""


def _slots(wire: bool) -> list[ClassAd]:
    ads = []
    for n in range(1, 13):
        state = '"Claimed"' if n % 3 == 0 else '"Unclaimed"'
        if n == 7:
            state = 'ifThenElse(Memory > 100, "Owner", "Unclaimed")'  # an expression
        text = SLOT.format(n=n, h=n % 2, state=state, memory=512 if n % 4 else 1024)
        ads.append(wire_ad(text) if wire else ClassAd.parse_old(text))
    return ads


def test_slot_table_and_total_are_the_same_from_wire_and_memory_ads() -> None:
    table = STATUS_TABLES["slots"]
    from_wire = table.render(list(reversed(_slots(True))))
    in_memory = table.render(_slots(False))
    assert from_wire == in_memory
    lines = from_wire.splitlines()
    assert lines[2].startswith("slot2@host0 ") and "Unclaimed" in lines[2]
    assert any(line.startswith("slot7@host1") and " Owner " in line for line in lines)
    total = table.render(_slots(True), totals_only=True)
    assert total == table.render(_slots(False), totals_only=True)
    assert total.splitlines()[-1].split() == ["Total", "12", "1", "4", "7", "0", "0", "0", "0", "0"]


JOB = """ClusterId = {c}
ProcId = {p}
Owner = "{owner}"
JobStatus = {status}
QDate = 1700000000
Cmd = "/bin/sleep"
Args = "60"
ImageSize = 100
JobPrio = 0
RemoteWallClockTime = 0.0
TotalSubmitProcs = 4"""


def _jobs(wire: bool) -> list[ClassAd]:
    ads = []
    for c in (3, 1):
        for p in (2, 0, 3, 1):
            text = JOB.format(c=c, p=p, owner="alice" if c == 1 else "bob", status=5 if p else 1)
            ads.append(wire_ad(text) if wire else ClassAd.parse_old(text))
    return ads


def test_job_views_are_the_same_from_wire_and_memory_ads() -> None:
    now = int(time.time())
    for name in ("nobatch", "hold", "idle"):
        view = q_view(name)
        assert list(view.lines(_jobs(True), now)) == list(view.lines(_jobs(False), now))
    batch = list(batch_lines(_jobs(True)))
    assert batch == list(batch_lines(_jobs(False)))
    assert batch[1].split()[:2] == ["alice", "ID:"] and batch[1].rstrip().endswith("1.0-3")
    assert batch[2].split()[-1] == "3.0-3" and "   HOLD" in batch[0]
    out = io.StringIO()
    out.writelines(q_view("nobatch").lines(_jobs(True), now))
    assert out.getvalue().splitlines()[1].startswith("   1.0   alice ")
