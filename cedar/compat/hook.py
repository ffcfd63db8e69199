"""The import hook behind ``cedar.compat``: a finder placed *last* on ``sys.meta_path``, so it
answers ``import htcondor2`` (``classad2``, ``htcondor``, ``classad``) only when no installed
module did.  Kept free of cedar imports: ``python -m cedar.compat install-hook`` loads it from a
``.pth`` file at every interpreter start, and then cedar is imported only by programs that
import one of those names."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
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


class _SubmoduleLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Already executed under its cedar name."""


class SubmoduleFinder(importlib.abc.MetaPathFinder):
    """Answers ``import htcondor2._utils.ansi`` (any submodule of a compat package) with the
    cedar module itself, so each submodule exists once whichever name imported it.  Placed
    *first* on ``sys.meta_path``; it only answers below a package that is a compat module."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, dot, rest = fullname.partition(".")
        if not dot or top not in MODULES:
            return None
        if not getattr(sys.modules.get(top), "__cedar_compat__", False):
            return None
        cedar_name = f"{MODULES[top]}.{rest}"
        try:
            if importlib.util.find_spec(cedar_name) is None:
                return None
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(fullname, _SubmoduleLoader(cedar_name))


def register(*, force: bool = False) -> None:
    """Put the finder at the end of ``sys.meta_path`` (``force``: at its start, ahead of
    installed bindings) and the submodule finder at its start (once each)."""
    if not any(isinstance(finder, CompatFinder) for finder in sys.meta_path):
        if force:
            sys.meta_path.insert(0, CompatFinder())
        else:
            sys.meta_path.append(CompatFinder())
    register_submodules()


def register_submodules() -> None:
    """Put the submodule finder at the start of ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, SubmoduleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SubmoduleFinder())
