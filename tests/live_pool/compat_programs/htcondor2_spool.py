"""An htcondor2 spooling round trip: submit(spool=True), spool(), wait, retrieve()."""

import time
from pathlib import Path

import htcondor2

schedd = htcondor2.Schedd()
submit = htcondor2.Submit(
    {
        "executable": "/bin/cat",
        "arguments": "in.txt",
        "transfer_input_files": "in.txt",
        "output": "out.txt",
        "should_transfer_files": "YES",
    }
)
result = schedd.submit(submit, spool=True)
schedd.spool(result)
cluster = result.cluster()
states: list[int] = []
for _ in range(600):  # generous: a loaded machine may take minutes to run the job
    states = [ad["JobStatus"] for ad in schedd.query(f"ClusterId == {cluster}", ["JobStatus"])]
    if states and states[0] == 4:
        break
    time.sleep(1)
schedd.retrieve(f"ClusterId == {cluster}")
print(states, Path("out.txt").read_text().strip())
schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")
