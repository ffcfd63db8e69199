import json
import sys

import classad2
import htcondor2

addr = sys.argv[1]
s = htcondor2.Schedd(
    classad2.ClassAd(
        {
            "MyAddress": addr,
            "Name": "mock-schedd",
            "MyType": "Scheduler",
            "CondorVersion": "$CondorVersion: 25.0.0 2025-01-01 BuildID: pycedar $",
        }
    )
)
sub = htcondor2.Submit(
    {"executable": "/bin/echo", "arguments": "hi $(Process)", "output": "/dev/null"}
)
r = s.submit(sub, count=3)
c = r.cluster()
ads = s.query(constraint=f"ClusterId == {c}", projection=["ProcId", "Args", "JobStatus", "Owner"])
out = {
    "cluster": c,
    "num": r.num_procs(),
    "query": [{k: ad[k] for k in ("ProcId", "Args", "JobStatus", "Owner")} for ad in ads],
}
h = s.act(htcondor2.JobAction.Hold, f"ClusterId == {c}", reason=("ref hold", 3))
out["hold"] = {k: h[k] for k in h}
s.edit(f"{c}.0", "Foo", '"bar"')
out["edited"] = [
    ad.get("Foo") for ad in s.query(constraint=f"ClusterId == {c}", projection=["Foo"])
]
rel = s.act(htcondor2.JobAction.Release, [f"{c}.1"])
out["release"] = {k: rel[k] for k in rel}
rm = s.act(htcondor2.JobAction.Remove, f"{c}.2")
out["remove"] = {k: rm[k] for k in rm}
out["after"] = sorted(
    [ad["ProcId"], ad["JobStatus"]]
    for ad in s.query(constraint=f"ClusterId == {c}", projection=["ProcId", "JobStatus"])
)
out["history"] = [
    [ad["ProcId"], ad["JobStatus"]]
    for ad in s.history(
        constraint=f"ClusterId == {c}", projection=["ProcId", "JobStatus"], match=10
    )
]
print(json.dumps(out))
