"""Shared helpers: the reference's ``htcondor2.param`` as an oracle, run in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping

import pytest

from tests.support import reference_import_problem

_ORACLE = """
import json, sys
import htcondor2
out = {}
for k in sys.argv[1:]:
    try:
        out[k] = str(htcondor2.param[k])
    except KeyError:
        out[k] = None
print(json.dumps(out))
"""


@pytest.fixture(scope="session")
def reference_param():  # type: ignore[no-untyped-def]
    """``reference_param(env, names) -> {name: value-or-None}`` using the reference bindings."""
    problem = reference_import_problem()
    if problem is not None:
        pytest.skip(problem)

    def run(env: Mapping[str, str], names: Iterable[str], cwd: str | None = None) -> dict:
        clean = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
        result = subprocess.run(
            [sys.executable, "-c", _ORACLE, *names],
            capture_output=True,
            text=True,
            timeout=60,
            env={**clean, **env},
            cwd=cwd,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    return run
