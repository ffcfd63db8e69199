"""Run programs written for the HTCondor Python bindings on cedar, unchanged.

``cedar.compat.install()`` registers :mod:`cedar.compat.htcondor2`, :mod:`~cedar.compat.classad2`,
:mod:`~cedar.compat.htcondor` (the pre-25 API Toil uses) and :mod:`~cedar.compat.classad` under
the import names ``htcondor2``, ``classad2``, ``htcondor`` and ``classad`` -- each only when the
real module cannot be imported, so an installed wheel always wins.  ``python -m cedar.compat run
prog.py ARGS...`` does the same and then runs the program as ``__main__``.
"""

from __future__ import annotations

import importlib.util
import sys

#: Import name -> the compat module standing in for it.
MODULES = {
    "classad2": "cedar.compat.classad2",
    "classad": "cedar.compat.classad",
    "htcondor2": "cedar.compat.htcondor2",
    "htcondor": "cedar.compat.htcondor",
}


def _real_module_exists(name: str) -> bool:
    if name in sys.modules:
        return not getattr(sys.modules[name], "__cedar_compat__", False)
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def install(*, force: bool = False) -> list[str]:
    """Register the compat modules under the bindings' import names where those are absent
    (``force=True``: even where they are present, e.g. to compare both); the names registered."""
    registered = []
    for name, target in MODULES.items():
        if not force and _real_module_exists(name):
            continue
        module = importlib.import_module(target)
        module.__cedar_compat__ = True  # type: ignore[attr-defined]
        sys.modules[name] = module
        registered.append(name)
    _link_submodules()
    return registered


def _link_submodules() -> None:
    """``htcondor2.classad`` is the classad module, as in the bindings."""
    for outer, inner in (("htcondor2", "classad2"), ("htcondor", "classad")):
        module = sys.modules.get(outer)
        if module is not None and getattr(module, "__cedar_compat__", False):
            module.classad = sys.modules.get(inner) or importlib.import_module(  # type: ignore[attr-defined]
                MODULES[inner]
            )


def uninstall() -> None:
    """Remove the compat modules from ``sys.modules`` (the real ones import again)."""
    for name in MODULES:
        if getattr(sys.modules.get(name), "__cedar_compat__", False):
            del sys.modules[name]


__all__ = ["MODULES", "install", "uninstall"]
