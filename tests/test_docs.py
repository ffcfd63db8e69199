"""The documentation site builds with ``mkdocs build --strict``: a broken link, a missing page,
an anchor that does not exist or a reference page that fails to generate fails the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    site = tmp_path / "site"
    # The generated references are there and not empty.
    cli = (site / "reference" / "cli" / "index.html").read_text()
    assert "usage: cedar q" in cli and "usage: cedar submit" in cli
    http = (site / "reference" / "http" / "index.html").read_text()
    assert "/api/v1/jobs" in http and "/v1/status" in http
    mcp = (site / "reference" / "mcp" / "index.html").read_text()
    assert "query_jobs" in mcp
    api = (site / "reference" / "api" / "index.html").read_text()
    assert 'id="cedar.commands.Schedd.submit"' in api


def test_every_docs_page_is_in_the_navigation() -> None:
    """A page nobody can reach from the site's menu is a page nobody reads."""
    text = (ROOT / "mkdocs.yml").read_text()
    docs = ROOT / "docs"
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    missing = sorted(page for page in pages if f": {page}" not in text)
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
