"""The import hook behind ``cedar.compat``: a finder placed *last* on ``sys.meta_path``, so it
answers ``import htcondor2`` (``classad2``, ``htcondor``, ``classad``) only when no installed
module did.  Kept free of cedar imports: ``python -m cedar.compat install-hook`` loads it from a
``.pth`` file at every interpreter start, and then cedar is imported only by programs that
import one of those names."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: Import name -> the compat module standing in for it.
MODULES = {
    "classad2": "cedar.compat.classad2",
    "classad": "cedar.compat.classad",
    "htcondor2": "cedar.compat.htcondor2",
    "htcondor": "cedar.compat.htcondor",
}
#: ``htcondor2.classad`` is the classad module, as in the bindings.
SUBMODULE_LINKS = {"htcondor2": "classad2", "htcondor": "classad"}


def compat_module(name: str) -> ModuleType:
    """The compat module for import name ``name``, marked and linked."""
    module = importlib.import_module(MODULES[name])
    module.__cedar_compat__ = True  # type: ignore[attr-defined]
    inner = SUBMODULE_LINKS.get(name)
    if inner is not None:
        module.classad = importlib.import_module(MODULES[inner])  # type: ignore[attr-defined]
    return module


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return compat_module(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Already executed under its cedar name."""


class CompatFinder(importlib.abc.MetaPathFinder):
    """Finds the compat modules for names nothing earlier on ``sys.meta_path`` found."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader())


def register() -> None:
    """Put the finder at the end of ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, CompatFinder) for finder in sys.meta_path):
        sys.meta_path.append(CompatFinder())
