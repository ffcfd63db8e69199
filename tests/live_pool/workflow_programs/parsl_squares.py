"""Parsl: a HighThroughputExecutor on CondorProvider, four python_apps, their results as JSON.

Run by the venv's Python as the pool's job user; argv[1] is a directory that user owns.
"""

import json
import os
import sys

import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import CondorProvider


@parsl.python_app
def square(x):
    import getpass
    import os

    return x * x, getpass.getuser(), os.environ.get("_CONDOR_JOB_AD") is not None


def main():
    run_dir = os.path.join(sys.argv[1], "runinfo")
    venv_bin = os.path.dirname(sys.executable)
    provider = CondorProvider(
        nodes_per_block=1,
        init_blocks=1,
        min_blocks=0,
        max_blocks=1,
        worker_init=f"export PATH={venv_bin}:$PATH",  # the worker pool script is the venv's
        walltime="00:10:00",
    )
    executor = HighThroughputExecutor(
        label="condor", address="127.0.0.1", max_workers_per_node=2, provider=provider
    )
    config = Config(executors=[executor], run_dir=run_dir, strategy="none")
    with parsl.load(config):
        futures = [square(i) for i in range(4)]
        results = [future.result(timeout=300) for future in futures]
        block_jobs = sorted(executor.provider.resources)
    print(json.dumps({"results": results, "jobs": block_jobs}))


main()
