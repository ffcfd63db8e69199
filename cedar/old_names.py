"""The package names cedar had before its layers were named (issue 37), kept importable.

``import cedar.server.mock_pool`` still works and gives the very module object of
``cedar.daemons.mock_pool``: a finder first on ``sys.meta_path`` answers the old names with
the module imported under its new name, so no module exists twice (its ``__name__`` and
``__spec__`` are the new ones). No warning is raised: the old names are kept, documented in
docs/ARCHITECTURE.md, and the tree itself uses only the new ones (``tools/relayer.py
--check`` in the suite). Registered by ``cedar/__init__.py``; costs a string test per import
until an old name is used.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["RENAMED", "OldNameFinder", "new_name", "register"]

#: Old package -> the package it is now.
RENAMED = {
    "cedar.server": "cedar.daemons",
    "cedar.serve": "cedar.http_api",
    "cedar.service": "cedar.service_core",
    "cedar.mcp_server": "cedar.mcp",
    "cedar.commands.submit": "cedar.submit_language",
}


def new_name(fullname: str) -> str | None:
    """``cedar.serve.app`` -> ``cedar.http_api.app``; None for a name that did not move."""
    for old, new in RENAMED.items():
        if fullname == old or fullname.startswith(old + "."):
            return new + fullname[len(old) :]
    return None


class _SameModule:
    """A loader that hands back the module imported under its new name, unchanged."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        import importlib

        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Already executed; the import system set the alias's spec on it: put its own back."""
        module.__spec__ = self.spec


class OldNameFinder:
    """Answers the old names of :data:`RENAMED` (first on ``sys.meta_path``, so that the path
    finder never loads a second copy of a module under an old name)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> Any:
        if not fullname.startswith("cedar.") or (new := new_name(fullname)) is None:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, _SameModule(new))  # type: ignore[arg-type]


def register() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, OldNameFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldNameFinder())
