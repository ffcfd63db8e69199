"""The package names before issue 37's re-layering stay importable (``cedar/old_names.py``):
the very module objects of the new names, under any spelling of import, with no warning."""

from __future__ import annotations

import json
import subprocess
import sys

from cedar.old_names import RENAMED, new_name

#: An old name of each moved package and of a module in it.
OLD = [
    "cedar.server",
    "cedar.server.pool",
    "cedar.serve",
    "cedar.serve.app",
    "cedar.service",
    "cedar.service.access",
    "cedar.mcp_server",
    "cedar.mcp_server.tools",
    "cedar.commands.submit",
    "cedar.commands.submit.factory",
]


def _fresh(code: str) -> object:
    """Run ``code`` in a new interpreter (so nothing is imported yet), warnings as errors;
    its last line of output, as JSON."""
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_old_names_are_the_new_modules() -> None:
    """Imported first under the old name, then the new: one module, named by its new name."""
    code = f"""
import importlib, json, sys
seen = []
for old in {OLD!r}:
    module = importlib.import_module(old)
    seen.append([old, module.__name__, module.__spec__.name,
                 module is importlib.import_module(module.__name__), module is sys.modules[old]])
print(json.dumps(seen))
"""
    seen = _fresh(code)
    assert seen == [[old, new_name(old), new_name(old), True, True] for old in OLD]


def test_every_spelling_gives_the_same_objects() -> None:
    code = """
import json
import cedar.commands.submit
from cedar.commands import submit
from cedar.commands.submit import Submit
from cedar.serve.app import create_app
import cedar.server.pool as old_pool
import cedar.daemons.pool as new_pool
import cedar.http_api.app
import cedar.submit_language
print(json.dumps([
    submit is cedar.submit_language,
    cedar.commands.submit is cedar.submit_language,
    Submit is cedar.submit_language.Submit,
    create_app is cedar.http_api.app.create_app,
    old_pool is new_pool,
    old_pool.MockPool.__module__,
]))
"""
    assert _fresh(code) == [True, True, True, True, True, "cedar.daemons.pool"]


def test_the_new_name_first_then_the_old() -> None:
    code = """
import json, sys
import cedar.service_core.scope as new
import cedar.service.scope as old
print(json.dumps([old is new, sorted(k for k in sys.modules if k.startswith("cedar.service."))]))
"""
    assert _fresh(code) == [True, ["cedar.service.scope"]]


def test_a_missing_module_under_an_old_name_is_not_found() -> None:
    code = """
import json
try:
    import cedar.serve.no_such_module
except ModuleNotFoundError as exc:
    print(json.dumps(exc.name))
"""
    assert _fresh(code) == "cedar.http_api.no_such_module"


def test_import_cedar_loads_none_of_them() -> None:
    """The finder costs a string test: ``import cedar`` imports no moved package."""
    code = """
import json, sys
import cedar
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("cedar.", "cedar_")))))
"""
    loaded = _fresh(code)
    assert isinstance(loaded, list)
    moved = [m for m in loaded if any(m.startswith(n) for n in [*RENAMED, *RENAMED.values()])]
    assert moved == []
    assert "cedar.old_names" in loaded


def test_new_name() -> None:
    assert new_name("cedar.serve.iri.spec") == "cedar.http_api.iri.spec"
    assert new_name("cedar.server") == "cedar.daemons"
    assert new_name("cedar.commands.submit.jobad") == "cedar.submit_language.jobad"
    assert new_name("cedar.serve_x") is None
    assert new_name("cedar.commands.schedd") is None
    assert new_name("cedar.http_api.app") is None
