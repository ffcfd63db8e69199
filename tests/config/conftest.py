"""Shared helpers: the reference's ``htcondor2.param`` as an oracle, run in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping

import pytest

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


def _reference_importable() -> str | None:
    probe = subprocess.run(
        [sys.executable, "-c", "import htcondor2"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CONDOR_CONFIG": "/dev/null"},
    )
    return None if probe.returncode == 0 else probe.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def reference_param():  # type: ignore[no-untyped-def]
    """``reference_param(env, names) -> {name: value-or-None}`` using the reference bindings."""
    problem = _reference_importable()
    if problem is not None:
        pytest.skip(f"import htcondor2 failed: {problem}")

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
