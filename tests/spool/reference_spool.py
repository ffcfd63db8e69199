"""Run by test_reference.py in a subprocess: htcondor2 spools to and retrieves from a cedar pool."""

import json
import os
import sys
import time

import classad2
import htcondor2

addr, workdir = sys.argv[1], sys.argv[2]
os.chdir(workdir)
schedd = htcondor2.Schedd(
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
    {
        "executable": "job.sh",
        "transfer_input_files": "sub, blob.bin",
        "should_transfer_files": "YES",
        "when_to_transfer_output": "ON_EXIT",
        "output": "logs/out.txt",
        "error": "err.txt",
        "transfer_output_files": "result.txt",
        "transfer_output_remaps": '"result.txt = results/renamed.txt"',
    }
)
result = schedd.submit(sub, spool=True)
cluster = result.cluster()
held = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "HoldReasonCode", "Iwd", "SUBMIT_Iwd"])
schedd.spool(result)
status = None
for _ in range(1200):  # up to 120 s: generous for a loaded CI machine
    ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus"])
    status = ads[0]["JobStatus"] if ads else None
    if status == 4:
        break
    time.sleep(0.1)
schedd.retrieve(f"{cluster}.0")
print(
    json.dumps(
        {
            "cluster": cluster,
            "held": [
                {k: ad.get(k) for k in ("JobStatus", "HoldReasonCode", "Iwd", "SUBMIT_Iwd")}
                for ad in held
            ],
            "status": status,
        }
    )
)
