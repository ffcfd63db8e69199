"""``tools/relayer.py``: the tree uses only the new package names (its ``--check``), and the
script's rewriting is right, leaves alike-looking words alone and is idempotent."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "relayer.py"


def _relayer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("relayer", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["relayer"] = module
    spec.loader.exec_module(module)
    return module


relayer = _relayer()


def test_the_tree_uses_only_the_new_names() -> None:
    """New code written against the old layout fails here: run ``python tools/relayer.py``."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("from cedar.serve.app import create_app", "from cedar.http_api.app import create_app"),
        ("import cedar.server.pool as p", "import cedar.daemons.pool as p"),
        ("from cedar.service import Caller", "from cedar.service_core import Caller"),
        ("from cedar.mcp_server.tools import TOOLS", "from cedar.mcp.tools import TOOLS"),
        ("from cedar.commands.submit import Submit", "from cedar.submit_language import Submit"),
        (
            'monkeypatch.setattr("cedar.serve.app.X", 1)',
            'monkeypatch.setattr("cedar.http_api.app.X", 1)',
        ),
        ("see `cedar/serve/api.py`", "see `cedar/http_api/api.py`"),
        ("[x](../cedar/commands/submit/jobad.py)", "[x](../cedar/submit_language/jobad.py)"),
        ("pytest tests/serve tests/server -q", "pytest tests/http_api tests/daemons -q"),
        ("from tests.serve.conftest import client", "from tests.http_api.conftest import client"),
        ("python -m tests.submit.dry_run", "python -m tests.submit_language.dry_run"),
        ('("serve/models.py", "mcp_server/server.py")', '("http_api/models.py", "mcp/server.py")'),
        ('"commands/submit/errors.py"', '"submit_language/errors.py"'),
        ("the submit language (commands/submit/)", "the submit language (submit_language/)"),
        # left alone: the new names, the CLI's words, look-alikes
        ("cedar.service_core.scope cedar.http_api cedar.mcp", None),
        ("cedar serve --port 0; cedar mcp; cedar pool", None),
        ("tests/mcp_server/test_http.py tests.mcp_server.helpers", None),
        ("mycedar.server, cedar.serverless, cedar.commands.submitter, tests/submit_x", None),
        ("`server/discover`, role='server', commands/submit-x", None),
        ("from cedar.serve import x  # relayer: keep", None),
    ],
)
def test_rewrite_text(before: str, after: str | None) -> None:
    expected = before if after is None else after
    assert relayer.rewrite_text(before) == expected
    assert relayer.rewrite_text(expected) == expected  # idempotent


LAYERS = """\
x = 1
LAYERS: list[set[str]] = [
    {"errors"},  # facts
    {"config"},  # the configuration language
    {"commands"},  # clients
    {"server"},  # the mock daemons
    {"service"},  # what every service shares: the caller's identity, scoping, per-token sessions
    {"cli", "serve", "mcp_server"},
]
y = {"server"}
"""


def test_rewrite_layers() -> None:
    new = relayer.rewrite_layers(LAYERS)
    assert new == (
        "x = 1\n"
        "LAYERS: list[set[str]] = [\n"
        '    {"errors"},  # facts\n'
        '    {"config"},  # the configuration language\n'
        '    {"submit_language"},  # the submit language: a description -> job ads\n'
        '    {"commands"},  # clients\n'
        '    {"daemons"},  # the mock daemons\n'
        "    # what every service shares: the caller's identity, scoping, per-token sessions\n"
        '    {"service_core"},\n'
        '    {"cli", "http_api", "mcp"},\n'
        "]\n"
        'y = {"server"}\n'
    )
    assert relayer.rewrite_layers(new) == new


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("cedar/cli/x.py", "from cedar import serve"),
        ("cedar/cli/x.py", "from cedar.commands import submit"),
        ("cedar/cli/x.py", "from ..commands import submit"),
        ("cedar/commands/x.py", "from . import submit"),
        ("cedar/commands/__init__.py", "from .submit import Submit"),
        ("tests/x.py", "def f():\n    from cedar import (\n        mcp_server,\n    )"),
    ],
)
def test_old_imports_the_text_patterns_miss(name: str, source: str) -> None:
    """(``import cedar.serve.app`` and the like are the text patterns' business.)"""
    assert len(relayer.old_imports(name, source)) == 1
    assert relayer.old_imports(name, source.replace("submit", "schedd").replace("serve", "x")) == []


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_the_script_moves_and_is_idempotent(tmp_path: Path) -> None:
    """On a small tree: the packages move with git, references follow, a second run changes
    nothing, and a file added later under an old folder joins the new one."""
    (tmp_path / "tools").mkdir()
    shutil.copy(SCRIPT, tmp_path / "tools" / "relayer.py")
    files = {
        "cedar/server/__init__.py": '"""Daemons."""\n',
        "cedar/server/pool.py": "from cedar.server import x\n",
        "cedar/commands/submit/__init__.py": "from cedar.commands.submit.jobad import J\n",
        "cedar/commands/submit/jobad.py": "J = 1\n",
        "tests/serve/test_a.py": "import cedar.serve.app\n",
        "docs/a.md": "`cedar/serve/app.py` and `cedar.mcp_server`; `cedar serve`\n",
        "captures/x.txt": "cedar.serve stays\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    run = [sys.executable, "tools/relayer.py"]
    subprocess.run(run, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    _git(tmp_path, "add", "-A")
    status = _git(tmp_path, "status", "--short")
    assert "R  cedar/server/__init__.py -> cedar/daemons/__init__.py" in status
    assert "R  cedar/commands/submit/jobad.py -> cedar/submit_language/jobad.py" in status
    assert not (tmp_path / "cedar" / "server").exists()
    assert (tmp_path / "cedar/daemons/pool.py").read_text() == "from cedar.daemons import x\n"
    assert (tmp_path / "tests/http_api/test_a.py").read_text() == "import cedar.http_api.app\n"
    assert (tmp_path / "docs/a.md").read_text() == (
        "`cedar/http_api/app.py` and `cedar.mcp`; `cedar serve`\n"
    )
    assert (tmp_path / "captures/x.txt").read_text() == "cedar.serve stays\n"
    _git(tmp_path, "commit", "-qm", "moved")
    again = subprocess.run(run, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    assert b"rewrote 0 files" in again.stdout
    assert _git(tmp_path, "status", "--short") == ""
    # someone adds a file under the old layout (a branch merged after the move)
    (tmp_path / "cedar/server").mkdir()
    (tmp_path / "cedar/server/late.py").write_text("import cedar.service.x\n")
    _git(tmp_path, "add", ".")
    check = subprocess.run([*run, "--check"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 1
    assert "cedar/server/ still holds 1 tracked files" in check.stdout
    assert "cedar/server/late.py:1: import cedar.service.x" in check.stdout
    subprocess.run(run, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    assert (tmp_path / "cedar/daemons/late.py").read_text() == "import cedar.service_core.x\n"
    assert not (tmp_path / "cedar/server").exists()
    final = subprocess.run([*run, "--check"], cwd=tmp_path, capture_output=True, text=True)
    assert final.returncode == 0, final.stdout
