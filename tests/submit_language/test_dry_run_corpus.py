"""cedar's submit language against the real ``condor_submit -dry-run`` on a generated corpus.

Every file of ``tests/submit_language/corpus.py`` (≥ 300, plus the captures' ``*.sub``) goes
through both; the job ads must be equal, accept/reject included, except the deliberate
deviations listed in ``tests/submit_language/dry_run.py`` (``TIME_OR_BUILD``,
``DELIBERATE_REJECTIONS``, ``#RANDOM#`` values compared by type and range).  Skips when the
real ``condor_submit`` is not available.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.submit_language.corpus import ISSUE_26_PLAIN_ONLY, generate
from tests.submit_language.dry_run import compare, condor_submit, write_config

BINARY, WHY = condor_submit()
needs_condor_submit = pytest.mark.skipif(BINARY is None, reason=WHY)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    directory = tmp_path_factory.mktemp("submit-corpus")
    files = generate(directory)
    return files, write_config(directory)


@needs_condor_submit
@pytest.mark.parametrize("spool", [False, True], ids=["plain", "spool"])
def test_corpus_equals_condor_submit_dry_run(corpus: tuple[list[Path], Path], spool: bool) -> None:
    files, config = corpus
    assert len(files) >= 300
    assert BINARY is not None
    results = [compare(f, BINARY, config, spool=spool) for f in files]
    failures = {r.file: r.problems[:4] for r in results if r.problems}
    deliberate = sum(r.deviation for r in results)
    assert deliberate <= 3, "more deliberate deviations than the corpus plants"
    assert not failures, "\n".join(f"{name}: {problems}" for name, problems in failures.items())


@needs_condor_submit
@pytest.mark.parametrize("text", ISSUE_26_PLAIN_ONLY)
def test_if_blocks_around_queue_equal_condor_submit(tmp_path: Path, text: str) -> None:
    """A queue statement that runs closes the open ifs; the file must not end inside one."""
    assert BINARY is not None
    sub = tmp_path / "if-queue.sub"
    (tmp_path / "job.sh").write_text("#!/bin/sh\n")
    sub.write_text(text + "\n")
    result = compare(sub, BINARY, write_config(tmp_path), spool=False)
    assert not result.problems


def test_the_corpus_is_deterministic(tmp_path: Path) -> None:
    first = generate(tmp_path / "a")
    second = generate(tmp_path / "b")
    assert [f.name for f in first] == [f.name for f in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))
