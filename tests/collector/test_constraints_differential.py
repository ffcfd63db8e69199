"""Generated constraints: the slots our mock collector returns == the slots classad2 matches.

For each generated expression the mock answers a real QUERY_STARTD_ADS (through the store's
encoder and our reader) and the reference ``classad2`` evaluates the same text in each slot ad;
a slot matches when the value is true or a non-zero number (spec 05 §2.3).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cedar.commands.collector import build_query_ad
from cedar.numbers import AdType

from .pool import new_store
from .test_store import ask

classad2 = pytest.importorskip("classad2", reason="the reference classad2 module is needed")

STORE = new_store()
SLOTS = [s.ad for s in STORE.ads("Machine")]
# Text the reference reads back identically (attributes in long form).
REFERENCE_SLOTS = [
    classad2.parseOne("".join(f"{n} = {ad.raw_text(n)}\n" for n in ad)) for ad in SLOTS
]

ATTRS = ["SlotID", "Memory", "Cpus", "Name", "OpSys", "State", "CondorLoadAvg", "Start",
         "Missing", "TotalSlotMemory", "HasVM", "MY.SlotID", "TARGET.SlotID"]  # fmt: skip
LITERALS = ["0", "1", "2", "3", "-1", "1024", "2.5", "0.0", '"LINUX"', '"linux"', '"slot2@vm"',
            "true", "false", "undefined", "error", '""']  # fmt: skip
BINARY = ["==", "!=", "<", "<=", ">", ">=", "=?=", "=!=", "&&", "||", "+", "-", "*", "/", "%"]


def _expressions() -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATTRS + LITERALS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            inner.map(lambda e: f"(!{e})"),
            inner.map(lambda e: f"(-{e})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"ifThenElse({t[0]}, {t[1]}, {t[2]})"),
            inner.map(lambda e: f"isUndefined({e})"),
            inner.map(lambda e: f"isError({e})"),
            st.tuples(inner, inner).map(lambda t: f"member({t[0]}, {{1, 2, {t[1]}}})"),
            st.tuples(inner, inner).map(lambda t: f"strcat({t[0]}, {t[1]})"),
        )

    return st.recursive(atom, extend, max_leaves=6)


def _reference_matches(constraint: str) -> list[str]:
    tree = classad2.ExprTree(constraint)
    matched = []
    for ad, name in zip(REFERENCE_SLOTS, [str(a["Name"]) for a in SLOTS], strict=True):
        value = tree.eval(ad)
        if isinstance(value, classad2.Value):  # Undefined / Error (an IntEnum: test it first)
            hit = False
        elif isinstance(value, bool):
            hit = value
        elif isinstance(value, (int, float)):
            hit = value != 0
        else:
            hit = False
        if hit:
            matched.append(name)
    return sorted(matched)


def _our_matches(constraint: str) -> list[str]:
    ads = ask(STORE, AdType.SLOT.command, build_query_ad(AdType.SLOT, constraint, ["Name"]))
    assert ads is not None
    return sorted(str(ad["Name"]) for ad in ads)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(_expressions())
def test_generated_constraints_match_like_the_reference(constraint: str) -> None:
    """Any generated constraint selects the same slots in our collector as in classad2."""
    assert _our_matches(constraint) == _reference_matches(constraint), constraint


@pytest.mark.parametrize(
    "constraint",
    [
        'Name == "SLOT1@VM"',
        'Name =?= "SLOT1@VM"',
        "TARGET.SlotID >= 2",
        "Missing == 1 || SlotID == 2",
        "SlotID == 2.0",
        "5",
        '"yes"',
        "Start && Memory >= 1024",
        "WithinResourceLimits",
        'regexp("slot[13]", Name)',
        'stringListMember(OpSys, "WINDOWS, LINUX")',
        "Memory / 3 * 3 == Memory",
        "-7 % 3 == -1 && 7 / 2 == 3",
        "9223372036854775807 + 1 < 0",
        "CondorLoadAvg / 0 == 0",
        'substr(Name, 0, 4) == "slot" && size(Name) == 8',
        'toUpper(OpSys) == "LINUX" && strcmp(Arch, "X86_64") == 0',
        "floor(2.7) == 2 && ceiling(2.1) == 3 && round(2.5) == 2 && int(-2.7) == -2",
        "SlotID isnt undefined && SlotID is 3",
    ],
)
def test_hand_written_constraints_match_like_the_reference(constraint: str) -> None:
    assert _our_matches(constraint) == _reference_matches(constraint)
