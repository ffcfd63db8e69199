"""A constraint means the same to cedar as to the real tools and bindings (one rule, parsed
once): backslashes in a string literal are literal (the old ClassAd syntax) for
``condor_q -constraint`` and for ``htcondor2.Schedd.query``/``act`` alike.  Before the one
parse, ``cedar q`` and ``cedar.compat`` re-read the printed constraint in the new syntax and
matched ``"x\\\\\\\\y"`` where condor_q matches ``"x\\\\y"``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tests.live_pool.test_jobid_grammar import CEDAR, _env, _need, _run

#: The job's value is x\\y (two backslashes: the submit language's string is old syntax).
SUBMIT = 'executable = /bin/sleep\narguments = 600\nhold = true\n+Foo = "x\\\\y"\nqueue 1\n'
#: Constraint texts with one, two and four backslashes.
TEXTS = ['Foo == "x\\y"', 'Foo == "x\\\\y"', 'Foo == "x\\\\\\\\y"']


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return _env()


@pytest.fixture(scope="module")
def cluster(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    description = tmp_path_factory.mktemp("dialect") / "job.sub"
    description.write_text(SUBMIT)
    submitted = _run(env, "condor_submit", "-terse", str(description))
    assert submitted.returncode == 0, submitted.stderr
    number = int(submitted.stdout.split(".")[0])
    yield number
    _run(env, "condor_rm", str(number))


def _count(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stderr
    return len(result.stdout.split())


@pytest.mark.parametrize("text", TEXTS)
def test_cedar_q_reads_a_constraint_as_condor_q(
    env: dict[str, str], cluster: int, text: str
) -> None:
    real = _count(_run(env, "condor_q", str(cluster), "-constraint", text, "-af", "ClusterId"))
    ours = _count(_run(env, str(CEDAR), "q", str(cluster), "-constraint", text, "-af", "ClusterId"))
    assert ours == real
    assert real == (1 if text == TEXTS[1] else 0)  # the oracle itself: two backslashes match


@pytest.mark.parametrize("text", TEXTS)
def test_the_compat_schedd_reads_a_constraint_as_the_bindings(
    env: dict[str, str], cluster: int, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import htcondor2 as reference
    except ImportError:
        _need(False, "the reference wheel htcondor2 is not installed")
    for name in ("CONDOR_CONFIG", "_condor_SEC_CLIENT_AUTHENTICATION_METHODS"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("_condor_SEC_TOKEN_DIRECTORY", env["_condor_SEC_TOKEN_DIRECTORY"])
    reference.reload_config()
    from cedar.compat import htcondor2 as compat

    constraint = f"ClusterId == {cluster} && ({text})"
    real = len(reference.Schedd().query(constraint, ["Foo"]))
    ours = len(compat.Schedd().query(constraint, ["Foo"]))
    assert ours == real == (1 if text == TEXTS[1] else 0)
