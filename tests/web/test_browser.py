"""The browser scenario (tests/web/scenario.py) against ``cedar serve --demo``."""

from __future__ import annotations

from pathlib import Path

from tests.web.browser import demo_server, need_browser
from tests.web.scenario import Target, run


def mock_stdout_ok(text: str, word: str) -> bool:
    """The mock schedd does not run jobs: a spooled job's stdout lists the files it was given
    (name, size, sha256), so the input file must be there with its size."""
    from tests.web.scenario import GREETING

    return f"greeting.txt {len(GREETING.encode())} " in text


def test_the_page_in_a_browser_against_the_demo(tmp_path: Path) -> None:
    need_browser()
    with demo_server() as (url, tokens):
        target = Target(url, tokens["alice"], tokens["bob"], mock_stdout_ok, patience=60)
        run(target, tmp_path)
    assert len(target.shots) >= 5
