"""The lines of a submit description nothing used: condor_submit warns "WARNING: the line 'K = V'
was unused by condor_submit. Is it a typo?"; ``Submit.build`` lists the same lines in
``unused`` (and ``cedar submit`` prints the warning).

Checked against the real ``condor_submit -dry-run`` on the whole generated corpus (the set of
lines; condor prints them in its hash order, cedar in the file's order).
"""

from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from cedar.submit_language import Submit
from cedar.submit_language.jobad import SubmitSettings
from tests.submit_language.corpus import generate
from tests.submit_language.dry_run import condor_submit, run_reference, write_config

BINARY, WHY = condor_submit()
SETTINGS = SubmitSettings(
    filesystem_domain="cedar.test", arch="X86_64", opsys="LINUX", submit_method=0, user="u"
)
WARNING = re.compile(r"^WARNING: the line '(.*)' was unused by condor_submit\. Is it a typo\?$")


def unused(text: str, directory: Path) -> list[str]:
    description = Submit(text)
    description.build(1, settings=SETTINGS, submit_dir=str(directory), now=0)
    return description.unused


def test_unknown_lines_are_unused(tmp_path: Path) -> None:
    text = (
        "executable = /bin/true\nfoo_bar=3\n  Baz_Qux   =   a  b  \nused_one = 5\n"
        "arguments = $(used_one)\nFOO = x\nrequest_gpuz = 0\nMy.Custom = 1\n+Other = 2\n"
        "request_memroy = 100\nqueue\n"
    )
    assert unused(text, tmp_path) == ["foo_bar = 3", "Baz_Qux = a  b", "FOO = x"]


def test_macros_used_only_by_other_macros_count_as_used(tmp_path: Path) -> None:
    text = "base = /bin\nexe = $(base)/true\nexecutable = $(exe)\nqueue\n"
    assert unused(text, tmp_path) == []


def test_cedar_submit_prints_the_warning(tmp_path: Path) -> None:
    from cedar.cli.schedd_tools import warn_unused

    description = Submit("executable = /bin/true\ntypo_here = 1\nqueue\n")
    description.build(1, settings=SETTINGS, submit_dir=str(tmp_path), now=0)
    err = io.StringIO()
    with redirect_stderr(err):
        warn_unused(description)
    assert err.getvalue() == (
        "WARNING: the line 'typo_here = 1' was unused by cedar submit. Is it a typo?\n"
    )


@pytest.mark.skipif(BINARY is None, reason=WHY)
def test_the_same_lines_as_condor_submit_on_the_corpus(tmp_path: Path) -> None:
    files = generate(tmp_path)
    config = write_config(tmp_path)
    assert BINARY is not None
    compared = 0
    differences = {}
    cwd = os.getcwd()
    for sub in files:
        real = run_reference(BINARY, sub, config, spool=False)
        if not real.accepted:
            continue
        theirs = sorted(m.group(1) for m in map(WARNING.match, real.message.splitlines()) if m)
        os.chdir(sub.parent)
        try:
            ours = sorted(unused(sub.read_text(), sub.parent))
        except Exception:  # noqa: BLE001 - the ads are test_dry_run_corpus's business
            continue
        finally:
            os.chdir(cwd)
        compared += 1
        if ours != theirs:
            differences[sub.name] = (ours, theirs)
    assert compared >= 250
    assert not differences, differences


@pytest.mark.parametrize(
    ("lines", "expected", "unused_line"),
    [
        # Observed with condor_submit -dry-run (25.13.2): the attribute-name spellings are
        # commands; ShouldTransferFiles and WhenToTransferOutput win over the command
        # whatever the order, the file lists' commands win over theirs.
        (["ShouldTransferFiles = False"], {"ShouldTransferFiles": '"NO"'}, None),
        (
            ["should_transfer_files = YES", "ShouldTransferFiles = NO"],
            {"ShouldTransferFiles": '"NO"'},
            "should_transfer_files = YES",
        ),
        (
            ["WhenToTransferOutput = ON_EXIT_OR_EVICT", "when_to_transfer_output = ON_EXIT"],
            {"ShouldTransferFiles": '"YES"', "WhenToTransferOutput": '"ON_EXIT_OR_EVICT"'},
            "when_to_transfer_output = ON_EXIT",
        ),
        (["TransferOutputFiles = a"], {"TransferOutput": '"a"'}, None),
        (
            ["transfer_input_files = /etc/passwd", "TransferInputFiles = /etc/hostname"],
            {"TransferInput": '"/etc/passwd"'},
            "TransferInputFiles = /etc/hostname",
        ),
    ],
)
def test_transfer_commands_by_their_attribute_names(
    tmp_path: Path, lines: list[str], expected: dict[str, str], unused_line: str | None
) -> None:
    """batchspawner's CondorSpawner writes ``ShouldTransferFiles = False``."""
    description = Submit("executable = /bin/true\n" + "\n".join(lines) + "\nqueue\n")
    ads = description.build(1, settings=SETTINGS, submit_dir=str(tmp_path), now=0)
    job = ads.job_ad(0)
    for name, value in expected.items():
        assert job[name] == value
    assert description.unused == ([unused_line] if unused_line else [])
