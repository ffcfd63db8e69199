"""cedar query orders ads as condor_status does."""

from __future__ import annotations

from cedar.classad_wire import ClassAd
from cedar.output import status_sort_key


def status_order(ads: list[ClassAd]) -> list[ClassAd]:
    return sorted(ads, key=status_sort_key)


def test_digit_runs_compare_as_numbers_as_in_condor_status() -> None:
    # condor_status 25.13.2 against 100 000 slots printed slot9@... before slot10@... and
    # slot1@bench-live before slot1@vm.
    names = ["slot10@a", "slot1@vm", "slot2@b", "slot1@bench-live", "slot100@a", "slot9@z"]
    ads = [ClassAd({"Machine": "vm", "Name": name}) for name in names]
    assert [ad["Name"] for ad in status_order(ads)] == [
        "slot1@bench-live",
        "slot1@vm",
        "slot2@b",
        "slot9@z",
        "slot10@a",
        "slot100@a",
    ]
    machines = [ClassAd({"Machine": m, "Name": "slot1@" + m}) for m in ("node10", "node9", "a")]
    assert [ad["Machine"] for ad in status_order(machines)] == ["a", "node9", "node10"]
