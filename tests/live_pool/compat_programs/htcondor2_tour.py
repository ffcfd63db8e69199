"""One htcondor2 script, run once with the real wheel and once on cedar.compat: every call the
compat layer claims, printing one JSON document of results that do not depend on which run it
is (cluster ids and times are made relative)."""

import json
import sys
import time

import classad2
import htcondor2

log_path = sys.argv[1]
out = {}

collector = htcondor2.Collector()
location = collector.locate(htcondor2.DaemonType.Schedd)
out["locate"] = {key: location[key] for key in ("Name", "MyType", "Machine")}
out["locate_pool"] = sorted(  # an explicit pool: the collector's answer, no MyType
    htcondor2.Collector(htcondor2.param["COLLECTOR_HOST"]).locate(htcondor2.DaemonType.Schedd)
)
out["locate_type"] = type(location).__name__
out["locateAll"] = sorted(ad["Name"] for ad in collector.locateAll(htcondor2.DaemonType.Startd))
slots = collector.query(htcondor2.AdType.Startd, "Cpus > 0", ["Name", "Cpus"])
out["query"] = sorted((ad["Name"], ad["Cpus"]) for ad in slots)
out["directQuery"] = collector.directQuery(htcondor2.DaemonType.Schedd)["Name"]
out["param"] = htcondor2.param["COLLECTOR_HOST"]
out["param_missing"] = htcondor2.param.get("NO_SUCH_KNOB_AT_ALL")

schedd = htcondor2.Schedd(location)
submit = htcondor2.Submit(
    {
        "executable": "/bin/sh",
        "arguments": "\"-c 'exit 5'\"",
        "log": log_path,
        "+Tour": '"yes"',
        "request_memory": "64",
    }
)
out["qargs"] = submit.getQArgs()
result = schedd.submit(submit, count=2)
cluster = result.cluster()
out["submit"] = [type(result).__name__, result.num_procs(), result.first_proc()]
ads = schedd.query(
    f"ClusterId == {cluster}", ["ProcId", "Tour", "Args", "Arguments", "RequestMemory"]
)
out["schedd_query"] = sorted(
    (ad["ProcId"], ad["Tour"], ad.get("Arguments"), ad["RequestMemory"]) for ad in ads
)
out["edit"] = schedd.edit(f"ClusterId == {cluster}", "Tour", '"edited"')
out["edited"] = sorted(ad["Tour"] for ad in schedd.query(f"ClusterId == {cluster}", ["Tour"]))

# generous: on a loaded machine the two jobs may wait for a slot and a shadow for minutes
deadline = time.time() + 600
while time.time() < deadline:
    states = [ad["JobStatus"] for ad in schedd.query(f"ClusterId == {cluster}", ["JobStatus"])]
    if all(state == 4 for state in states) or not states:
        break
    time.sleep(1)

parked = schedd.submit(
    htcondor2.Submit({"executable": "/bin/sleep", "arguments": "300", "hold": "true"}), count=2
).cluster()
out["act_release"] = dict(schedd.act(htcondor2.JobAction.Release, f"{parked}.1", "tour"))
out["act_hold"] = dict(schedd.act(htcondor2.JobAction.Hold, f"ClusterId == {parked}", "tour"))
out["act_remove"] = dict(schedd.act(htcondor2.JobAction.Remove, [f"{parked}.0", f"{parked}.1"]))
out["act_gone"] = dict(schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}"))
for ad in (out["act_release"], out["act_hold"], out["act_remove"], out["act_gone"]):
    ad.pop("TotalJobAds")  # the queue's size: other runs' jobs may still be leaving it
history = []
deadline = time.time() + 600
while time.time() < deadline and len(history) < 2:
    history = schedd.history(f"ClusterId == {cluster}", ["ProcId", "ExitCode", "Tour"], match=5)
    time.sleep(1)
out["history"] = sorted((ad["ProcId"], ad.get("ExitCode"), ad["Tour"]) for ad in history)

events = []
with htcondor2.JobEventLog(log_path) as log:
    for event in log.events(stop_after=0):
        events.append(
            (
                event.cluster - cluster,
                event.proc,
                int(event.type),
                event.get("ReturnValue"),
                event.get("TerminatedNormally"),
                event.type == htcondor2.JobEventType.JOB_TERMINATED,
            )
        )
out["events"] = sorted(events)

ad = classad2.ClassAd({"a": 1, "b": "x"})
ad["c"] = classad2.ExprTree("a + 1")
out["classad"] = [ad.eval("c"), str(ad.lookup("c")), ad.printOld(), sorted(ad.keys())]
out["classad_parse"] = [dict(ad2) for ad2 in classad2.parseAds('x = 1\ny = "s"\n\nx = 2\n')]
out["quote"] = [classad2.quote('a"b'), classad2.unquote('"a\\"b"')]
out["undefined"] = repr(classad2.ClassAd("[u = undefined]")["u"])
try:
    classad2.ClassAd("[a = ")
except classad2.ClassAdException as exc:
    out["parse_error"] = type(exc).__name__
try:
    htcondor2.Collector("127.0.0.1:1").query(htcondor2.AdType.Startd)
except htcondor2.HTCondorException:
    out["unreachable"] = "HTCondorException"
print(json.dumps(out, sort_keys=True, default=str))
