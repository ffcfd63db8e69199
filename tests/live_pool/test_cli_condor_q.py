"""``cedar q`` next to the real ``condor_q`` 25 on the same pool and queue: the batch view, the
``-nobatch`` table, ``-long`` and ``-json`` must print the same (but for the clock).

Jobs are submitted on hold as testuser (the pool's IDTOKEN) so the queue stays still.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from steady import agree
from test_compat_programs import VENV, _follow_this_checkout, programs_venv  # noqa: F401

CEDAR = Path(sys.executable).parent / "cedar"


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not CEDAR.exists():
        pytest.skip("the cedar console script is not installed")
    if not _tokens_readable():
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["TZ"] = "UTC"
    return env


def _cedar_as_testuser(*argv: str) -> str:
    env = _env()
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = env["CEDAR_LIVE_TOKEN_DIR"]
    result = subprocess.run(
        [str(CEDAR), *argv], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def held_jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    directory = tmp_path_factory.mktemp("q")
    first = directory / "sleep.sub"
    first.write_text("executable = /bin/sleep\narguments = 600 extra\nhold = true\nqueue 2\n")
    second = directory / "echo.sub"
    second.write_text(
        "executable = /bin/echo\narguments = hi there\nhold = true\nbatch_name = qtest\nqueue\n"
    )
    cluster = json.loads(_cedar_as_testuser("submit", str(first), "--json"))["cluster"]
    other = json.loads(_cedar_as_testuser("submit", str(second), "--json"))["cluster"]
    yield int(cluster)
    _cedar_as_testuser("rm", str(cluster), str(other))


def _both(*argv: str, tokens: str | None = None) -> tuple[list[str], list[str]]:
    """Our lines and condor_q's; the pool may move between runs (other tests' idle jobs are
    stamped each negotiation cycle), so our run is bracketed by condor_q's (``steady.py``).
    ``tokens``: both authenticate with the IDTOKEN of that directory."""
    env = _env()
    if tokens is not None:
        env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
        env["_condor_SEC_TOKEN_DIRECTORY"] = tokens
    tool = shutil.which("condor_q", path=env["PATH"])
    if tool is None:
        pytest.skip("condor_q is not in CEDAR_LIVE_TOOLS")

    def stable(text: str) -> list[str]:
        return [
            line
            for line in text.splitlines()
            if not line.startswith(("ServerTime", '  "ServerTime"'))
            and "condor_watch_q" not in line
        ]

    def run(command: list[str]) -> tuple[int, str, list[str]]:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        return done.returncode, done.stderr if done.returncode else "", stable(done.stdout)

    ours, theirs = agree(lambda: run([str(CEDAR), "q", *argv]), lambda: run([tool, *argv]))
    assert ours[0] == 0, ours[1]
    assert theirs[0] == 0, theirs[1]
    return ours[2], theirs[2]


def _without_clock(lines: list[str]) -> list[str]:
    """The header without its clock and address (root's condor_q reads the schedd's direct
    address from its address file, others the shared-port one: both reach the same schedd)."""
    return [line.split(" : <", 1)[0] if line.startswith("-- Schedd:") else line for line in lines]


@pytest.mark.parametrize("view", [[], ["-nobatch"], ["-long"], ["-json"]])
def test_cedar_q_prints_what_condor_q_prints(held_jobs: int, view: list[str]) -> None:
    ours, theirs = _both("-all", *view)
    assert _without_clock(ours) == _without_clock(theirs)


def test_cedar_q_selects_by_cluster_like_condor_q(held_jobs: int) -> None:
    ours, theirs = _both(str(held_jobs), "-nobatch")
    assert _without_clock(ours) == _without_clock(theirs)
    assert any(line.strip().startswith(f"{held_jobs}.1") for line in ours)


@pytest.fixture(scope="module")
def jobless_tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory with an IDTOKEN of an identity that owns no job (made with the pool's
    signing key by condor_token_create; mode 0600, or the tools ignore it)."""
    env = _env()
    directory = tmp_path_factory.mktemp("jobless-tokens")
    directory.chmod(0o700)
    made = subprocess.run(
        [str(Path(env["CEDAR_LIVE_TOOLS"]) / "condor_token_create"), "-identity",
         f"nojobs@{os.environ.get('CEDAR_LIVE_UID_DOMAIN', 'minicondor')}", "-key", "POOL"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = directory / "nojobs.token"
    token.write_text(made.stdout)
    token.chmod(0o600)
    return str(directory)


@pytest.mark.parametrize("view", [[], ["-better-analyze"]])
@pytest.mark.parametrize("who", ["testuser", "nojobs"])
def test_root_with_a_token_is_the_tokens_user(
    held_jobs: int, jobless_tokens: str, view: list[str], who: str
) -> None:
    """Whoever runs it (root too), condor_q asks for "my jobs"; the schedd answers for the
    authenticated identity (the IDTOKEN's: testuser@..., or one that owns no job and so sees
    none) and adds its "Total for" line.  Only a queue superuser (root's FS identity,
    condor@...) is not restricted (observed)."""
    tokens = os.environ["CEDAR_LIVE_TOKEN_DIR"] if who == "testuser" else jobless_tokens
    ours, theirs = _both(*view, tokens=tokens)
    assert _without_clock(ours) == _without_clock(theirs)
    if view != ["-better-analyze"]:
        assert any(line.startswith(f"Total for {who}@") for line in ours)
    elif who == "nojobs":
        assert not any("Run analysis summary" in line for line in ours)


PROGRAMS_CEDAR = VENV / "bin"


@pytest.mark.usefixtures("programs_venv")
def test_by_default_only_my_jobs_as_condor_q(held_jobs: int) -> None:
    """As testuser (FS authentication), plain ``cedar q`` shows testuser's jobs with the
    "Total for testuser@..." line, as ``condor_q`` does.  Needs a cedar the job user can run:
    the venv of test_compat_programs.py (its fixture builds it when this test runs first, as
    on a fresh CI machine)."""
    env = _env()
    cedar = PROGRAMS_CEDAR / "cedar"
    if shutil.which("su") is None:
        pytest.skip("needs su to run as testuser")
    assert cedar.exists(), f"the programs venv has no {cedar}"
    _follow_this_checkout()  # the cached venv may still point at another (or a deleted) checkout
    tools = env["CEDAR_LIVE_TOOLS"]
    prefix = (
        f"cd /tmp && env -i CONDOR_CONFIG={env['CONDOR_CONFIG']} TZ=UTC PATH={tools}:/usr/bin:/bin "
    )

    def as_testuser(command: str) -> list[str]:
        result = subprocess.run(
            ["su", "testuser", "-s", "/bin/sh", "-c", prefix + command],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return _without_clock(result.stdout.splitlines())

    ours, theirs = agree(lambda: as_testuser(f"{cedar} q"), lambda: as_testuser("condor_q"))
    assert ours == theirs
    assert any(line.startswith("Total for testuser@") for line in ours)


def _tokens_readable() -> bool:
    """Whether this user can read the pool's IDTOKEN (root's, mode 0600)."""
    directory = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        files = [path for path in directory.iterdir() if path.is_file()]
    except OSError:
        return False
    return bool(files) and all(os.access(path, os.R_OK) for path in files)
