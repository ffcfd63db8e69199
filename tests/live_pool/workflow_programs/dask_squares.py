"""dask-jobqueue: an HTCondorCluster scaled to two workers, four tasks, results as JSON.

Run by the venv's Python as the pool's job user; argv[1] is a directory that user owns.
"""

import json
import sys

from dask.distributed import Client
from dask_jobqueue import HTCondorCluster


def square(x):
    import getpass
    import os

    return x * x, getpass.getuser(), os.environ.get("_CONDOR_JOB_AD") is not None


def main():
    job_dir = sys.argv[1]
    cluster = HTCondorCluster(
        cores=1,
        memory="256MB",
        disk="100MB",
        log_directory=job_dir,
        scheduler_options={"host": "127.0.0.1"},
        job_extra_directives={"initialdir": job_dir},
    )
    with cluster:
        cluster.scale(jobs=2)
        with Client(cluster) as client:
            client.wait_for_workers(2, timeout=300)
            results = client.gather(client.map(square, range(4)))
            workers = sorted(w["name"] for w in client.scheduler_info()["workers"].values())
    print(json.dumps({"results": results, "workers": workers}))


main()
