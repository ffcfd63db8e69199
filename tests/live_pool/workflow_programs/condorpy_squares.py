"""condorpy: a Job of three tasks, its status polled to Completed, the outputs as JSON.

condorpy's Job.wait() runs condor_wait, which cedar does not provide: the status is polled
instead (condorpy's own condor_q ... && condor_history ... -format "%d" JobStatus).  Run by the
venv's Python as the pool's job user; argv[1] is a directory that user owns.
"""

import json
import os
import sys
import time

from condorpy import Job


def main():
    job_dir = sys.argv[1]
    job = Job(
        "tasks",
        working_directory=job_dir,
        num_jobs=3,
        executable="/bin/sh",
        arguments="\"-c 'echo task $(Process) of $(Cluster)'\"",
        output="out.$(Process)",
        error="err.$(Process)",
        log="tasks.log",
        should_transfer_files="NO",
    )
    job.submit()
    statuses = [job.status]
    deadline = time.monotonic() + 300
    while statuses[-1] != "Completed" and time.monotonic() < deadline:
        time.sleep(2)
        status = job.status
        if status != statuses[-1]:
            statuses.append(status)
    outputs = []
    for proc in range(3):
        with open(os.path.join(job_dir, f"out.{proc}")) as handle:
            outputs.append(handle.read().strip())
    print(json.dumps({"cluster": job.cluster_id, "statuses": statuses, "outputs": outputs}))


main()
