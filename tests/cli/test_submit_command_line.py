"""``cedar submit``'s condor_submit command line: ``NAME=VALUE`` macros, ``-append``/``-a``,
``-batch-name``, ``-queue``, ``-terse`` and ``-dry-run`` (the semantics observed with
condor_submit 25.13.2 -dry-run; tests/live_pool/test_cli_submit_differential.py compares the
two tools on the real pool)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.cli.main import main
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit, SubmitError, SubmitSettings

FILE = "executable = /bin/echo\narguments = $(foo) $(bar)\nfoo = file\nqueue\n"
TWO_QUEUES = "executable = /bin/echo\narguments = $(foo)\nfoo = file\nqueue\nfoo = after\nqueue\n"
NO_QUEUE = "executable = /bin/echo\narguments = $(x)\n"
IF_DEFINED = (
    "executable = /bin/echo\nif defined foo\narguments = yes\nelse\narguments = no\nendif\n"
)


def arguments(submit: Submit) -> list[str | None]:
    ads = submit.build(1, settings=SubmitSettings(filesystem_domain="d"), submit_dir="/", now=1)
    return [ads.job_ad(i).get("Args") for i in range(ads.num_procs)]


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        # NAME=VALUE: before the file, which may change it
        (FILE, {"macros": [("foo", "cmd"), ("bar", "cmdbar")]}, ['"file cmdbar"']),
        # -append: over the file's values, before each of its queue statements
        (FILE, {"appended": ["foo=app", "bar = app2"]}, ['"app app2"']),
        (TWO_QUEUES, {"appended": ["foo=app"]}, ['"app"', '"app"']),
        # ... and after a file without one, so an appended queue statement queues
        (NO_QUEUE, {"appended": ["x = a", "queue 2"]}, ['"a"', '"a"']),
        (NO_QUEUE, {"queue": "x in (p q)"}, ['"p"', '"q"']),
        # the file's if statements see the macros, not the appended lines
        (IF_DEFINED + "queue\n", {"macros": [("foo", "1")]}, ['"yes"']),
        (IF_DEFINED + "queue\n", {"appended": ["foo = 1"]}, ['"no"']),
    ],
)
def test_the_command_line_around_a_description(
    text: str, kwargs: dict[str, object], expected: list[str]
) -> None:
    assert arguments(Submit.from_command_line(text, **kwargs)) == expected  # type: ignore[arg-type]


def test_queue_conflicts_with_the_files_queue_statement() -> None:
    with pytest.raises(SubmitError, match="-queue argument conflicts with queue statement"):
        Submit.from_command_line(FILE, queue="2")
    with pytest.raises(SubmitError, match="only one -queue"):
        Submit.from_command_line(FILE, appended=["queue 2"])


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def cedar(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(list(argv), out=out)
    return status, out.getvalue(), err.getvalue()


def test_terse_batch_name_append_and_queue_on_a_schedd(pool: MockPool, tmp_path: Path) -> None:
    sub = tmp_path / "job.sub"
    sub.write_text("executable = /bin/echo\narguments = $(foo) $(x)\nhold = true\nfoo = file\n")
    status, out, err = cedar(
        "submit", "-terse", str(sub), "-batch-name", "bn x", "-a", "foo=app", "x=mac",
        "-queue", "x in (p q)", "--addr", pool.schedd_address,
    )  # fmt: skip
    assert (status, err) == (0, "")
    cluster = int(out.split(".")[0])
    assert out == f"{cluster}.0 - {cluster}.1\n"
    jobs = sorted(
        (job["ProcId"], job["JobBatchName"], job["Args"])
        for job in pool.schedd.queue.all_jobs()
        if job["ClusterId"] == cluster
    )
    assert jobs == [(0, "bn x", "app p"), (1, "bn x", "app q")]


def test_dry_run_writes_condor_submits_layout(tmp_path: Path) -> None:
    sub = tmp_path / "two.sub"
    sub.write_text("executable = /bin/echo\narguments = $(Process)\nqueue 2\n")
    status, out, _ = cedar("submit", "-dry-run", "-", str(sub))
    assert status == 0
    lines = out.split("\n")
    assert lines[0] == "Dry-Run job(s)" and lines[1] == "ClusterId=1"
    assert lines[-2:] == ["2 job(s) dry-run to cluster 1.", ""]
    dots = [i for i, line in enumerate(lines) if line == "."]
    assert len(dots) == 2 and dots[1] == len(lines) - 3
    first, second = lines[1 : dots[0]], lines[dots[0] + 1 : dots[1]]
    assert 'Args="0"' in first and "ProcId=0" in first and "JobStatus=1" in first
    assert second == ["ProcId=1", "JobStatus=1", 'Args="1"']
    # to a file: the ads there (a blank line before each job), the dots on standard output
    status, out, _ = cedar("submit", "-dry-run", str(tmp_path / "ads"), str(sub))
    assert (status, out) == (0, "Dry-Run job(s)..\n2 job(s) dry-run to cluster 1.\n")
    written = (tmp_path / "ads").read_text()
    assert written == "\n" + "\n".join(first) + "\n\n" + "\n".join(second) + "\n"


def test_dry_run_of_a_factory_prints_its_cluster_ad_only(tmp_path: Path) -> None:
    sub = tmp_path / "late.sub"
    sub.write_text("executable = /bin/echo\nmax_idle = 2\nqueue 3\n")
    status, out, _ = cedar("submit", "-dry-run", "-", str(sub))
    lines = out.split("\n")
    assert status == 0 and "." not in lines and "ProcId=0" not in lines
    assert lines[:2] == ["Dry-Run job(s)", "ClusterId=1"]
    assert lines[-3:] == ["", "3 job(s) dry-run to cluster 1.", ""]


@pytest.mark.parametrize(
    "argv",
    [
        ["a.sub", "b.sub"],  # one file
        ["-dry-run", "-", "--json", "a.sub"],
    ],
)
def test_usage_errors(argv: list[str], tmp_path: Path) -> None:
    for name in ("a.sub", "b.sub"):
        (tmp_path / name).write_text(FILE)
    argv = [str(tmp_path / a) if a.endswith(".sub") else a for a in argv]
    status, _, err = cedar("submit", *argv)
    assert status == 2 and err.startswith("cedar submit: ")
