"""``cedar q`` next to the real ``condor_q`` 25.13.2 for late-materialization factories: the
``-factory`` table and the batch view's counts of a factory cluster, byte for byte with
test_cli_differential_listing.py's normalisation (the clock and address of the banner only).

Two factories whose procs never match a slot (the queue stays still); one proc of the first is
removed, so the factory has made 3 of 6 with 2 present (DONE 1, not TOTAL - present = 4).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
from test_cli_condor_q import _env
from test_cli_differential_listing import _compare, _submit

pytestmark = pytest.mark.live

FACTORY = (
    "executable = /bin/sleep\narguments = 300\nshould_transfer_files = NO\n"
    'requirements = (TARGET.Machine == "nowhere")\nmax_materialize = {limit}\nqueue 6\n'
)


def _tool_env() -> dict[str, str]:
    env = _env()
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = env["CEDAR_LIVE_TOKEN_DIR"]
    return env


def _tool(env: dict[str, str], name: str, *args: str) -> str:
    path = shutil.which(name, path=env["PATH"])
    if path is None:
        pytest.skip(f"{name} is not in CEDAR_LIVE_TOOLS")
    result = subprocess.run(
        [path, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def factories(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    directory = tmp_path_factory.mktemp("factory")
    os.chmod(directory, 0o777)
    first = _submit(directory, "f2.sub", FACTORY.format(limit=2))
    second = _submit(directory, "f3.sub", FACTORY.format(limit=3))
    env = _tool_env()
    _tool(env, "condor_rm", f"{first}.0")
    deadline = time.monotonic() + 300  # generous: a loaded CI machine
    wanted = f"{first} 2 3"  # the removed proc has left and the factory made proc 2
    while wanted not in _tool(
        env, "condor_q", "-factory", "-af", "ClusterId", "JobsPresent", "JobMaterializeNextProcId"
    ):
        assert time.monotonic() < deadline, "the factory did not make its next proc in 300 s"
        time.sleep(0.5)
    yield [first, second]
    _tool(env, "condor_rm", str(first), str(second))


def _lines(factories: list[int]) -> list[list[str]]:
    first, second = factories
    only = ["-constraint", f"ClusterId >= {first} && ClusterId <= {second}"]
    return [
        ["-factory", *only],
        ["-factory", "-allusers", *only],
        ["-factory", str(second)],
        ["-factory", "-nobatch", str(first)],
        ["-factory", "-af", "ClusterId", "JobsPresent", "JobMaterializeLimit", *only],
        ["-factory", "-constraint", "ClusterId < 0"],
        only,  # under -constraint condor_q leaves DONE empty
        ["-allusers", *only],
        ["-nobatch", *only],
        [str(first)],  # a restriction list: DONE counted (1)
        [str(second), "-allusers"],
    ]


def test_q_factory_prints_what_condor_q_prints(factories: list[int]) -> None:
    for argv in _lines(factories):
        _compare("condor_q", "q", argv)
    batch = _tool(_tool_env(), "condor_q", str(factories[0]))
    assert f"ID: {factories[0]} " in batch and "      1      _      2      6 " in batch
