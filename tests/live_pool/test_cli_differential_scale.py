"""``cedar q -long`` / ``-json`` of 2,000 varied jobs next to the real ``condor_q`` 25.13.2, as
bytes: enough jobs that cedar reads the queue in id windows and its shape readers take over
(one compiled reader per recurring shape, values kept as received and printed as bytes), with
values that vary per job (strings with escapes and non-ASCII text, reals, expressions, lists,
nested ads) and two shapes.  Only the schedd's ``ServerTime`` line is left out."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from steady import agree
from test_cli_condor_q import _env
from test_cli_differential_listing import _submit

CEDAR = Path(sys.executable).parent / "cedar"

VARIED = r"""executable = /bin/echo
arguments = "a $(Process) 'quoted arg' back\\slash"
hold = true
environment = "A=$(Process) B='x y'"
request_memory = $(Process) % 7 + 1
+Note = "héllo ☃ $(Process) tab\there"
+Scaled = $(Process) * 2 + RequestMemory
+Real = $(Process).25
+Path = "C:\\dir\\$(Process)"
+Flag = $(Process) % 2 == 0
+Items = { "a", $(Process), 1.5, undefined }
+Nested = [ a = $(Process); b = "x" ]
queue 1200
"""

OTHER = """executable = /bin/sleep
arguments = $(Item)
hold = true
batch_name = scale-$(Item)
+Percent = "100% $(Item) %s"
queue 200 Item in (7, 70, 700, 7000)
"""

_SERVER_TIME = re.compile(rb'^ *"?ServerTime"?(?: =|":) [0-9]+,?\n', re.MULTILINE)
_PROC_ID = re.compile(rb'^ *"?ProcId"?(?: =|":) ', re.MULTILINE)


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    directory = tmp_path_factory.mktemp("scale")
    os.chmod(directory, 0o777)
    found = [_submit(directory, "varied.sub", VARIED), _submit(directory, "other.sub", OTHER)]
    yield found
    env = _env()
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = env["CEDAR_LIVE_TOKEN_DIR"]
    tool = shutil.which("condor_rm", path=env["PATH"])
    if tool:
        subprocess.run([tool, *map(str, found)], env=env, capture_output=True, check=False)


def _output(argv: list[str]) -> tuple[int, bytes]:
    done = subprocess.run(argv, env=_env(), capture_output=True, timeout=300, check=False)
    return done.returncode, _SERVER_TIME.sub(b"", done.stdout)


@pytest.mark.parametrize("form", ["-long", "-json"])
def test_whole_ads_of_2000_varied_jobs_are_condor_qs_bytes(clusters: list[int], form: str) -> None:
    env = _env()
    tool = shutil.which("condor_q", path=env["PATH"])
    assert tool is not None
    where = ["-all", "-constraint", " || ".join(f"ClusterId == {c}" for c in clusters), form]
    ours, theirs = agree(
        lambda: _output([str(CEDAR), "q", *where]), lambda: _output([tool, *where])
    )
    assert theirs[0] == 0 and len(_PROC_ID.findall(theirs[1])) == 2000
    assert "héllo ☃".encode() in theirs[1]
    assert ours == theirs
