"""batchspawner: CondorSpawner start -> poll -> stop, the job states it read, as JSON.

Driven the way batchspawner's own tests drive a spawner (an in-memory hub database, a mock
port instead of a single-user server calling back through batchspawner-singleuser); the job
runs a stand-in for jupyterhub-singleuser that records who it runs for and sleeps.  Run by the
venv's Python as the pool's job user (exec_prefix is empty: no sudo); argv[1] is their directory.
"""

import asyncio
import json
import os
import sys

from batchspawner import CondorSpawner
from jupyterhub import orm
from jupyterhub.objects import Hub, Server
from jupyterhub.user import User


async def cycle(job_dir):
    standin = os.path.join(job_dir, "singleuser-standin.sh")
    marker = os.path.join(job_dir, "singleuser-ran")
    with open(standin, "w") as handle:
        # The hub's settings reach it through the environment (GetEnv = True in the job).
        handle.write(f'#!/bin/sh\necho "$(id -un) $JUPYTERHUB_USER" > {marker}\nexec sleep 600\n')
    os.chmod(standin, 0o755)
    db = orm.new_session_factory("sqlite:///:memory:")()
    orm_user = orm.User(name=os.environ["USER"])
    db.add(orm_user)
    db.commit()
    user = User(orm_user, {})
    spawner = user._new_spawner(
        "",
        spawner_class=CondorSpawner,
        hub=Hub(),
        cmd=[standin],
        batchspawner_singleuser_cmd="",  # its wrapper reports the port to a hub; there is none
        exec_prefix="",
        env_keep=["PATH", "CONDOR_CONFIG"],  # JupyterHub 5+ keeps none of them by default
        req_homedir=job_dir,
        req_memory="64",
        req_nprocs="1",
        startup_poll_interval=1.0,
    )
    spawner.server = Server()
    spawner.mock_port = 8888  # batchspawner's hook for tests without a single-user server
    seen = {}
    seen["started_at"] = list(await asyncio.wait_for(spawner.start(), 300))
    seen["job_id"] = spawner.job_id
    seen["status_running"] = spawner.job_status
    seen["poll_running"] = await spawner.poll()
    for _ in range(60):  # the stand-in writes its marker once the starter runs it
        if os.path.exists(marker):
            break
        await asyncio.sleep(1)
    with open(marker) as handle:
        seen["singleuser_ran"] = handle.read().strip()
    await spawner.stop()
    seen["status_after_stop"] = spawner.job_status
    seen["poll_stopped"] = await spawner.poll()
    print(json.dumps(seen))


asyncio.run(cycle(sys.argv[1]))
