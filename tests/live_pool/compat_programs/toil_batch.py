"""Drive Toil's HTCondorBatchSystem (unchanged, from PyPI) against a real pool: issue jobs, poll
them, kill one, collect exit codes.  Prints one JSON line with what it saw.

Run in a venv without the htcondor wheel, through ``python -m cedar.compat run``.
"""

import json
import sys
import time
import uuid

from toil.batchSystems.htcondor import HTCondorBatchSystem
from toil.common import Config
from toil.job import JobDescription

work_dir = sys.argv[1]
config = Config()
config.workflowID = str(uuid.uuid4())
config.workDir = work_dir
config.batch_logs_dir = work_dir
config.cleanWorkDir = "never"
requirements = {
    "cores": 1,
    "memory": 64 * 1024 * 1024,
    "disk": 64 * 1024 * 1024,
    "accelerators": [],
    "preemptible": False,
}
batch = HTCondorBatchSystem(config, maxCores=4, maxMemory=2**33, maxDisk=2**34)


def job(name, store_id):
    description = JobDescription(requirements=requirements, jobName=name, unitName=None)
    description.jobStoreID = store_id
    return description


seen = {"exit": {}, "killed": None, "running_before_kill": [], "running_after_kill": None}
try:
    ok = batch.issueBatchJob("exit 0", job("ok", "1"))
    fail = batch.issueBatchJob("exit 3", job("fail", "2"))
    slow = batch.issueBatchJob("sleep 300", job("slow", "3"))
    seen["issued"] = sorted(batch.getIssuedBatchJobIDs())
    deadline = time.monotonic() + 600  # generous: a loaded machine
    while len(seen["exit"]) < 2 and time.monotonic() < deadline:
        update = batch.getUpdatedBatchJob(maxWait=5)
        if update is not None:
            name = {ok: "ok", fail: "fail", slow: "slow"}[update.jobID]
            seen["exit"][name] = update.exitStatus
    while time.monotonic() < deadline:
        running = batch.getRunningBatchJobIDs()
        if slow in running:
            seen["running_before_kill"] = sorted(running)
            break
        time.sleep(2)
    batch.killBatchJobs([slow])
    seen["killed"] = slow
    seen["running_after_kill"] = sorted(batch.getRunningBatchJobIDs())
finally:
    batch.shutdown()
seen["ids"] = {"ok": ok, "fail": fail, "slow": slow}
print(json.dumps(seen))
