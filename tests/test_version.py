"""One source for each version: htc-cedar's own (cedar/version.py ``__version__``, which
pyproject.toml reads) and the HTCondor version cedar presents (``VERSION``); everything else
that shows either agrees with them."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import cedar
from cedar import version

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _pyproject_version_source() -> tuple[str, str]:
    """``(path, pattern)`` of ``[tool.hatch.version]``, and no static version in ``[project]``."""
    text = PYPROJECT.read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.MULTILINE), "a second, static version"
    assert re.search(r'^dynamic\s*=\s*\[[^]]*"version"', project, re.MULTILINE)
    table = text.split("[tool.hatch.version]", 1)[1].split("\n[", 1)[0]
    path = re.search(r'^path\s*=\s*"([^"]+)"', table, re.MULTILINE)
    pattern = re.search(r"^pattern\s*=\s*(\".*\")\s*$", table, re.MULTILINE)
    assert path and pattern
    return path.group(1), bytes(pattern.group(1)[1:-1], "utf-8").decode("unicode_escape")


def test_pyproject_reads_the_package_version_from_cedar_version() -> None:
    path, pattern = _pyproject_version_source()
    source = (PYPROJECT.parent / path).resolve()
    assert source == Path(version.__file__).resolve()
    found = re.search(pattern, source.read_text(encoding="utf-8"), re.MULTILINE)
    assert found is not None and found.group("version") == version.__version__


def test_everything_shows_the_one_package_version() -> None:
    assert cedar.__version__ == version.__version__
    assert metadata.version("htc-cedar") == version.__version__  # as installed from pyproject
    # the HTTP API and the MCP server take it from the same place (their modules import their
    # optional extras, so the source is checked, not imported)
    root = PYPROJECT.parent / "cedar"
    for module in ("http_api/models.py", "mcp/server.py"):
        text = (root / module).read_text(encoding="utf-8")
        body = text.split("def package_version() -> str:", 1)[1].split("\ndef ", 1)[0]
        assert "from cedar.version import __version__" in body, module
        assert "metadata" not in body and '"0.' not in body, module


def test_one_emulated_htcondor_version() -> None:
    from cedar.auth.version import CEDAR_VERSION, CEDAR_VERSION_STRING, parse_version
    from cedar.config import EMULATED_VERSION, Config
    from cedar.config.defaults import DEFAULTS

    assert ".".join(map(str, version.VERSION)) == version.VERSION_TEXT
    assert parse_version(version.VERSION_STRING) == version.VERSION
    assert EMULATED_VERSION == version.VERSION
    assert CEDAR_VERSION == version.VERSION_TEXT and CEDAR_VERSION_STRING == version.VERSION_STRING
    assert DEFAULTS["CONDOR_VERSION"] == version.VERSION_TEXT
    assert Config(detect=False).get("CONDOR_VERSION") == version.VERSION_TEXT
