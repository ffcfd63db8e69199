"""The reference client (htcondor2 25.x bindings) against our mock collector.

Each test runs one script in a subprocess configured only through the environment; several
calls share a script to keep the suite fast.  The bindings have no query limit parameter, so
``LimitResults`` is covered by the raw-socket test below and by our own client's tests.
"""

from __future__ import annotations

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.daemons.collector import MockCollector
from cedar.stream import CedarConnection, MessageWriter

from .pool import host_port, raw_exchange, reference


def test_queries_of_several_types(mock: MockCollector) -> None:
    result = reference(
        f"""
c = htcondor2.Collector("{host_port(mock)}")
T = htcondor2.AdType
out = {{
  "slots": [plain(a) for a in c.query(T.Startd, "SlotID >= 2", ["Name", "Memory"])],
  "slot_mytarget": len(c.query(T.Startd, "TARGET.SlotID >= 2")),
  "schedd": [plain(a) for a in c.query(T.Schedd, projection=["Name", "MyType"])],
  "master": len(c.query(T.Master)),
  "negotiator": [a["Name"] for a in c.query(T.Negotiator)],
  "collector": [a["Name"] for a in c.query(T.Collector, 'Name == "mock@test"')],
  "submitters": [a["Name"] for a in c.query(T.Submitter)],
  "any": sorted(a["MyType"] for a in c.query(T.Any, projection=["MyType"])),
  "accounting": len(c.query(T.Accounting)),
  "defrag": len(c.query(T.Defrag)),
  "expr": [str(a["Requirements"]) for a in c.query(T.Startd, "SlotID == 1", ["Requirements"])],
}}
print(json.dumps(out))
"""
    )
    assert sorted(result["slots"], key=lambda a: a["Name"]) == [
        {"Memory": 1024, "Name": f"slot{i}@vm"} for i in (2, 3, 4)
    ]
    assert result["slot_mytarget"] == 0
    assert result["schedd"] == [{"MyType": "Scheduler", "Name": "vm"}]
    assert result["master"] == 1
    assert result["negotiator"] == ["vm"]
    assert result["collector"] == ["mock@test"]  # the mock's own ad
    assert result["submitters"] == ["testuser@minicondor"]
    assert result["any"] == sorted(
        ["Collector"] * 2 + ["Machine"] * 4
        + ["Scheduler", "DaemonMaster", "Submitter", "Negotiator"]
    )  # fmt: skip
    assert result["accounting"] == 0 and result["defrag"] == 0
    assert result["expr"] and "WithinResourceLimits" in result["expr"][0]


def test_locate_and_locate_all(mock: MockCollector) -> None:
    result = reference(
        f"""
c = htcondor2.Collector("{host_port(mock)}")
D = htcondor2.DaemonType
s = c.locate(D.Schedd, "vm")
m = c.locate(D.Master)
out = {{
  "schedd": [s["MyAddress"], s["CondorVersion"], s["Name"]],
  "master": m["Name"],
  "startds": sorted(a["Name"] for a in c.locateAll(D.Startd)),
  "missing": repr(c.locate(D.Schedd, "nosuch")),
}}
print(json.dumps(out))
"""
    )
    address, version, name = result["schedd"]
    assert address.startswith("<127.0.0.1:9618?") and "sock=schedd_7324_5fc6" in address
    assert version.startswith("$CondorVersion: 25.13.2")
    assert name == "vm"
    assert result["master"] == "vm"
    assert result["startds"] == [f"slot{i}@vm" for i in range(1, 5)]
    # An empty answer means "not found"; the 25.14.1 bindings then return None (no exception).
    assert result["missing"] == "None"


def test_advertise_then_query_back(fresh_mock: MockCollector) -> None:
    result = reference(
        f"""
c = htcondor2.Collector("{host_port(fresh_mock)}")
ads = [classad2.ClassAd({{"MyType": "SpecProbe", "Name": "probe%d" % i, "Seq": i}}) for i in (1, 2)]
c.advertise(ads)
sched = classad2.ClassAd({{"MyType": "Scheduler", "Name": "adv", "MyAddress": "<10.0.0.1:1>"}})
c.advertise([sched], "UPDATE_SCHEDD_AD")
out = {{
  "generic": sorted(a["Name"] for a in c.query(htcondor2.AdType.Generic)),
  "schedds": sorted(a["Name"] for a in c.query(htcondor2.AdType.Schedd)),
}}
c.advertise([classad2.ClassAd({{"MyType": "Query", "TargetType": "SpecProbe", "Name": "probe1"}})],
            "INVALIDATE_ADS_GENERIC")
out["after"] = sorted(a["Name"] for a in c.query(htcondor2.AdType.Generic))
print(json.dumps(out))
"""
    )
    assert result["generic"] == ["probe1", "probe2"]
    assert result["schedds"] == ["adv", "vm"]
    assert result["after"] == ["probe2"]
    (stored,) = [s.ad for s in fresh_mock.store.ads("Scheduler") if s.ad.get("Name") == "adv"]
    assert "AuthenticatedIdentity" not in stored  # a raw update is unauthenticated


def test_negotiated_advertise_records_the_identity(fresh_mock: MockCollector) -> None:
    result = reference(
        f"""
c = htcondor2.Collector("{host_port(fresh_mock)}")
c.advertise([classad2.ClassAd({{"MyType": "SpecProbe", "Name": "auth"}})])
print(json.dumps([plain(a) for a in c.query(htcondor2.AdType.Generic, 'Name == "auth"')]))
""",
        negotiate=True,
    )
    (ad,) = result
    assert ad["AuthenticationMethod"] == "FS"
    assert "@" in ad["AuthenticatedIdentity"]


def test_direct_query(fresh_mock: MockCollector) -> None:
    schedd = MockCollector("direct-schedd")
    with schedd.run_in_thread():
        own = {"MyType": "Scheduler", "Name": "direct", "MyAddress": schedd.address}
        schedd.store.add({**own, "TotalRunningJobs": 7})
        fresh_mock.store.add(
            {**own, "CondorVersion": "$CondorVersion: 25.0.0 2025-01-01 $", "Machine": "m"}
        )
        result = reference(
            f"""
c = htcondor2.Collector("{host_port(fresh_mock)}")
ad = c.directQuery(htcondor2.DaemonType.Schedd, "direct", ["Name", "TotalRunningJobs"])
print(json.dumps(plain(ad)))
"""
        )
    assert result == {"Name": "direct", "TotalRunningJobs": 7}


def test_limit_and_bad_queries_on_a_raw_socket(mock: MockCollector) -> None:
    """What the bindings cannot send: LimitResults, a malformed query, an unknown command."""

    def exchange(payload: bytes) -> bytes:
        return raw_exchange(mock.port, payload)

    writer = MessageWriter().put_int(5)
    put_classad(writer, ClassAd({"MyType": "Query", "TargetType": "Machine", "LimitResults": 2}))
    data = exchange(writer.getvalue())
    conn = CedarConnection()
    conn.receive_data(data)
    reader = conn.next_message()
    assert reader is not None
    count = 0
    while reader.get_int():
        get_classad(reader)
        count += 1
    assert count == 2
    bad = MessageWriter().put_int(5).put_int(1).put_string("Requirements = ((").getvalue()
    assert exchange(bad + b"\x00\x00") == b""  # unparsable: closed without reply
    assert exchange(MessageWriter().put_int(74).getvalue() + b"\x00" * 24) == b""
    assert exchange(MessageWriter().put_int(4242).getvalue()) == b""  # not registered
