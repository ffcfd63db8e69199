"""The mock collector's store: tables, keys, expiry and query semantics of spec 05 §2.3/§2.8.

Queries go through the same encoder the server uses (``write_answer``) and our reader, so what is
asserted is what a client receives.
"""

from __future__ import annotations

import pytest

from cedar.classad_wire import ClassAd, get_classad, parse_expr
from cedar.commands.collector import build_query_ad, invalidation_ad
from cedar.daemons.collector import AdStore, is_match, write_answer
from cedar.numbers import AdType, Command
from cedar.stream import MessageReader, MessageWriter

from .pool import CAPTURE_TIME, new_store


def ask(store: AdStore, command: int, query: ClassAd, **kw: object) -> list[ClassAd] | None:
    """Answer a query and decode the result stream as a client would."""
    answer = store.answer(command, query, **kw)  # type: ignore[arg-type]
    if answer is None:
        return None
    reader = MessageReader(write_answer(MessageWriter(), answer).getvalue())
    ads = []
    while reader.get_int():
        ads.append(get_classad(reader))
    reader.end_of_message()
    return ads


def query(
    store: AdStore,
    ad_type: AdType,
    constraint: str | None = None,
    projection: list[str] | None = None,
    limit: int | None = None,
    **extra: object,
) -> list[ClassAd]:
    ad = build_query_ad(ad_type, constraint, projection, limit, extra=dict(extra) or None)
    result = ask(store, ad_type.command, ad)
    assert result is not None
    return result


def names(ads: list[ClassAd]) -> list[str]:
    return sorted(str(ad.get("Name")) for ad in ads)


@pytest.fixture
def store() -> AdStore:
    return new_store()


def test_each_type_gets_its_table(store: AdStore) -> None:
    assert names(query(store, AdType.SLOT)) == [f"slot{i}@vm" for i in range(1, 5)]
    assert names(query(store, AdType.SCHEDD)) == ["vm"]
    assert query(store, AdType.MASTER)[0]["MyType"] == "DaemonMaster"
    assert query(store, AdType.NEGOTIATOR)[0]["MyType"] == "Negotiator"
    assert names(query(store, AdType.SUBMITTER)) == ["testuser@minicondor"]
    assert names(query(store, AdType.COLLECTOR)) == ["minicondor@vm"]
    assert query(store, AdType.ACCOUNTING) == []
    assert len(query(store, AdType.ANY)) == 9


def test_constraint_scope_is_my_and_target_is_undefined(store: AdStore) -> None:
    # Live 25.13.2: MY.SlotID >= 2 matched 3 of 4, TARGET.SlotID >= 2 none (spec 05 §2.3).
    assert len(query(store, AdType.SLOT, "SlotID >= 2")) == 3
    assert len(query(store, AdType.SLOT, "MY.SlotID >= 2")) == 3
    assert query(store, AdType.SLOT, "TARGET.SlotID >= 2") == []


def test_only_true_or_nonzero_numbers_match(store: AdStore) -> None:
    assert len(query(store, AdType.SLOT, "5")) == 4
    assert len(query(store, AdType.SLOT, "0.5")) == 4
    assert query(store, AdType.SLOT, '"yes"') == []
    assert query(store, AdType.SLOT, "0") == []
    assert query(store, AdType.SLOT, "undefined") == []
    assert query(store, AdType.SLOT, "NoSuchAttr == 3") == []
    assert is_match(True) and is_match(2) and not is_match("true") and not is_match(None)


def test_missing_requirements_match_everything(store: AdStore) -> None:
    ad = ClassAd({"MyType": "Query", "TargetType": "Machine"})
    assert len(ask(store, Command.QUERY_STARTD_ADS, ad) or []) == 4


def test_constraint_semantics_end_to_end(store: AdStore) -> None:
    def count(constraint: str) -> int:
        return len(query(store, AdType.SLOT, constraint))

    assert count('Name == "SLOT1@VM"') == 1  # == on strings ignores case
    assert count('Name =?= "SLOT1@VM"') == 0  # =?= does not
    assert count('Name =?= "slot1@vm"') == 1
    assert count("Missing =?= undefined && SlotID == 1") == 1
    assert count("Missing =!= undefined") == 0
    assert count("Missing == 1 || SlotID == 2") == 1  # undefined || true is true
    assert count("Missing == 1 && SlotID == 2") == 0
    assert count("SlotID == 2.0") == 1  # int/real promotion
    assert count("Memory / 1024 == 1 && SlotID % 2 == 0") == 2
    assert count('regexp("^slot[12]@", Name)') == 2
    assert count('stringListMember("X86_64", "INTEL,X86_64")') == 4
    assert count("ifThenElse(SlotID > 3, true, false)") == 1
    assert count('strcat(OpSys, "/", Arch) == "LINUX/X86_64"') == 4
    assert count("member(SlotID, {1, 3})") == 2
    assert count("isUndefined(Missing) && SlotID < 2") == 1
    assert count("(Memory > 5) + 1") == 4  # 2: a non-zero number matches
    assert count("LastHeardFrom > 0") == 4
    assert count("Start") == 4  # an attribute holding an expression is evaluated


def test_requirements_of_a_slot_against_a_job_locally(store: AdStore) -> None:
    # What a user can do with the evaluator: match a job against the slots without a pool.
    from cedar.classad_wire import evaluate

    job = ClassAd({"RequestCpus": 1, "RequestMemory": 512, "RequestDisk": 1000})
    slots = query(store, AdType.SLOT)
    requirement = parse_expr("MY.Memory >= TARGET.RequestMemory && TARGET.RequestCpus <= Cpus")
    assert all(evaluate(requirement, slot, job) is True for slot in slots)
    big = ClassAd({"RequestCpus": 1, "RequestMemory": 4096})
    assert not any(evaluate(requirement, slot, big) is True for slot in slots)


def test_projection_is_expanded_spelled_as_asked_and_sorted(store: AdStore) -> None:
    (ad,) = query(store, AdType.SLOT, "SlotID == 4", ["slotid", "NAME", "memory", "Arch", "NoSuch"])
    assert list(ad) == ["Arch", "memory", "NAME", "slotid"]
    (ad,) = query(store, AdType.SLOT, "SlotID == 4", ["Requirements"])
    # Live: Requirements pulled in Start, WithinResourceLimits and, through it, Cpus, Disk...
    wanted = {"requirements", "start", "withinresourcelimits", "cpus", "memory", "disk"}
    assert wanted <= {name.lower() for name in ad}
    assert "Activity" not in ad


def test_projection_by_comma_and_by_expression(store: AdStore) -> None:
    (ad,) = query(store, AdType.SCHEDD, None, None, Projection="Name,Machine")
    assert sorted(ad) == ["Machine", "Name"]
    # A non-literal projection is evaluated per candidate with the candidate as TARGET.
    q = build_query_ad(AdType.SLOT, "SlotID <= 2")
    q.set_expr("Projection", parse_expr('ifThenElse(TARGET.SlotID == 1, "Name", "Name Memory")'))
    ads = sorted(ask(store, Command.QUERY_STARTD_ADS, q) or [], key=lambda a: a["Name"])
    assert [sorted(a) for a in ads] == [["Name"], ["Memory", "Name"]]
    # A list is not understood by the collector: everything comes back (live, spec 05 §2.2).
    q = build_query_ad(AdType.SCHEDD)
    q["Projection"] = ["Name", "Machine"]
    (ad,) = ask(store, Command.QUERY_SCHEDD_ADS, q) or []
    assert len(ad) > 100


def test_limit(store: AdStore) -> None:
    assert len(query(store, AdType.SLOT, None, None, 2)) == 2
    assert len(query(store, AdType.ANY, None, None, 3)) == 3
    for unlimited in (0, -1):
        q = build_query_ad(AdType.SLOT)
        q["LimitResults"] = unlimited
        assert len(ask(store, Command.QUERY_STARTD_ADS, q) or []) == 4


def test_any_returns_tables_in_the_live_order(store: AdStore) -> None:
    types = [ad["MyType"] for ad in query(store, AdType.ANY, None, ["MyType"])]
    assert types == ["Collector"] + ["Machine"] * 4 + [
        "Scheduler", "DaemonMaster", "Submitter", "Negotiator",
    ]  # fmt: skip


def test_private_attributes_need_the_private_query(store: AdStore) -> None:
    public = ClassAd(
        {"MyType": "Machine", "Name": "p@h", "MyAddress": "<1.2.3.4:5>", "ClaimId": "secret"}
    )
    private = ClassAd({"Capability": "cap", "_condor_privKey": "k"})
    assert store.update("Machine", public, private)
    (ad,) = query(store, AdType.SLOT, 'Name == "p@h"')
    assert "ClaimId" not in ad and "Capability" not in ad
    q = build_query_ad(AdType.STARTD_PRIVATE, 'Name == "p@h"')
    (ad,) = ask(store, Command.QUERY_STARTD_PVT_ADS, q) or []
    assert ad["ClaimId"] == "secret" and ad["Capability"] == "cap"
    q = build_query_ad(AdType.SLOT, 'Name == "p@h"', extra={"SendPrivateAttributes": True})
    (ad,) = ask(store, Command.QUERY_STARTD_ADS, q, private=True) or []
    assert ad["ClaimId"] == "secret"


def test_updates_replace_by_key_and_need_key_attributes(store: AdStore) -> None:
    ad = ClassAd({"MyType": "Scheduler", "Name": "s2", "MyAddress": "<1.1.1.1:1>", "V": 1})
    assert store.update("Scheduler", ad)
    ad["V"] = 2
    assert store.update("Scheduler", ad)
    (found,) = query(store, AdType.SCHEDD, 'Name == "s2"')
    assert found["V"] == 2 and found["LastHeardFrom"] == CAPTURE_TIME
    assert not store.update("Scheduler", ClassAd({"Name": "s3"}))  # no MyAddress
    assert not store.update(None, ClassAd({"Name": "g"}))  # generic without MyType
    assert store.update("Scheduler", ClassAd({"Machine": "m", "ScheddIpAddr": "<1:2>"}))


def test_generic_tables(store: AdStore) -> None:
    store.update(None, ClassAd({"MyType": "SpecProbe", "Name": "probe1", "Seq": 1}))
    store.update(None, ClassAd({"MyType": "specprobe", "Name": "probe2", "Seq": 2}))
    store.update(None, ClassAd({"MyType": "Defrag", "Name": "d"}))
    probes = query(store, AdType.GENERIC, None, None, None)
    assert names(probes) == ["d", "probe1", "probe2"]  # TargetType "Generic": every generic ad
    q = build_query_ad(AdType.GENERIC, "Seq > 1", target_type="SPECPROBE")
    assert names(ask(store, Command.QUERY_GENERIC_ADS, q) or []) == ["probe2"]
    assert names(query(store, AdType.DEFRAG)) == ["d"]
    assert query(store, AdType.CREDD) == []  # a type with no ads: empty answer, not a close
    no_target = ClassAd({"MyType": "Query", "Requirements": True})
    assert ask(store, Command.QUERY_GENERIC_ADS, no_target) is None  # closes (spec 05 §2.5)


def test_query_multiple(store: AdStore) -> None:
    store.update("Machine", ClassAd({"MyType": "StartD", "Name": "vm", "MyAddress": "<1:1>"}))
    q = ClassAd({"MyType": "Query", "TargetType": "StartD,Scheduler",
                 "SchedulerRequirements": parse_expr("false")})  # fmt: skip
    assert [a["MyType"] for a in ask(store, Command.QUERY_MULTIPLE_ADS, q) or []] == ["StartD"]
    q = ClassAd({"MyType": "Query", "TargetType": "NoSuchType,Scheduler"})
    assert ask(store, Command.QUERY_MULTIPLE_ADS, q) is None
    # Command 5 with TargetType "StartD" reads the daemon table too.
    q = ClassAd({"MyType": "Query", "TargetType": "StartD"})
    assert [a["MyType"] for a in ask(store, Command.QUERY_STARTD_ADS, q) or []] == ["StartD"]


def test_expiry_uses_lifetime_and_last_heard_from() -> None:
    now = [1000.0]
    store = AdStore(clock=lambda: now[0], lifetime=100)
    store.add({"MyType": "DaemonMaster", "Name": "a"})
    store.add({"MyType": "DaemonMaster", "Name": "b", "ClassAdLifetime": 500})
    store.add({"MyType": "DaemonMaster", "Name": "c", "LastHeardFrom": 50})  # already stale
    assert names(query(store, AdType.MASTER)) == ["a", "b"]
    now[0] = 1101
    assert names(query(store, AdType.MASTER)) == ["b"]
    now[0] = 1501
    assert query(store, AdType.MASTER) == []


def test_invalidate_by_key_and_by_constraint(store: AdStore) -> None:
    assert store.invalidate("Machine", invalidation_ad(AdType.SLOT, constraint="SlotID > 2")) == 2
    assert names(query(store, AdType.SLOT)) == ["slot1@vm", "slot2@vm"]
    (slot,) = query(store, AdType.SLOT, "SlotID == 1")
    request = invalidation_ad(AdType.SLOT, name="slot1@vm", address=slot["MyAddress"])
    assert store.invalidate("Machine", request) == 1
    assert store.invalidate("Machine", invalidation_ad(AdType.SLOT, name="nope")) == 0
    store.update(None, ClassAd({"MyType": "SpecProbe", "Name": "probe1"}))
    assert store.invalidate(None, invalidation_ad(AdType.GENERIC, name="x")) == 0
    request = invalidation_ad(AdType.GENERIC, name="probe1", target_type="SpecProbe")
    assert store.invalidate(None, request) == 1


def test_absent_ads_are_hidden_unless_asked_for() -> None:
    store = AdStore(absent_requirements=True)
    store.add({"MyType": "DaemonMaster", "Name": "gone", "Absent": True})
    store.add({"MyType": "DaemonMaster", "Name": "here"})
    assert names(query(store, AdType.MASTER)) == ["here"]
    seen = query(store, AdType.MASTER, "Absent =?= true || Absent =!= true")
    assert names(seen) == ["gone", "here"]


def test_unkeyed_ads_are_kept_as_given() -> None:
    """Projected results (no Name/MyAddress) can seed a store, e.g. to replay a capture."""
    store = AdStore()
    store.add({"Name": "slot1@vm", "Memory": 100}, "Machine")
    store.add({"Name": "slot1@vm", "Memory": 200}, "Machine")  # not a replacement: no key
    ads = ask(store, Command.QUERY_STARTD_ADS, ClassAd({"Requirements": parse_expr("true")}))
    assert [dict(ad) for ad in ads or []] == [
        {"Name": "slot1@vm", "Memory": 100},
        {"Name": "slot1@vm", "Memory": 200},
    ]
    with pytest.raises(ValueError, match="no MyType"):
        store.add({"Name": "x"})


def test_a_collector_that_is_not_listening_has_no_own_ad() -> None:
    from cedar.daemons.collector import MockCollector

    collector = MockCollector()
    assert collector.own_ad() is None
