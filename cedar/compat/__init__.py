"""Run programs written for the HTCondor Python bindings on cedar, unchanged.

``cedar.compat.install()`` registers :mod:`cedar.compat.htcondor2`, :mod:`~cedar.compat.classad2`,
:mod:`~cedar.compat.htcondor` (the pre-25 API Toil uses) and :mod:`~cedar.compat.classad` under
the import names ``htcondor2``, ``classad2``, ``htcondor`` and ``classad`` -- each only when the
real module cannot be imported, so an installed wheel always wins.  ``python -m cedar.compat run
prog.py ARGS...`` does the same and then runs the program as ``__main__``; ``python -m
cedar.compat install-hook`` makes it permanent for one Python environment (a ``.pth`` file
adds the lazy :class:`~cedar.compat.hook.CompatFinder`), which reaches programs that start more
Python processes, e.g. snakemake's jobs.  ``run`` reaches the Python children of the program
too (multiprocessing "spawn" children): it puts :data:`BOOT_DIR` on the ``PYTHONPATH`` they
inherit (:func:`child_environment`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from collections.abc import MutableMapping

from cedar.compat.hook import MODULES, compat_module, register_submodules

#: Directory with the ``sitecustomize`` that ``run`` puts on ``PYTHONPATH`` for child processes.
BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")


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
    for name in MODULES:
        if not force and _real_module_exists(name):
            continue
        sys.modules[name] = compat_module(name)
        registered.append(name)
    register_submodules()
    return registered


def child_environment(environ: MutableMapping[str, str], *, force: bool = False) -> None:
    """Set up ``environ`` so that Python children started with it (multiprocessing "spawn",
    ``subprocess`` of ``sys.executable``) register the compat import hook at start-up."""
    paths = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != BOOT_DIR]
    environ["PYTHONPATH"] = os.pathsep.join([BOOT_DIR, *paths])
    environ["CEDAR_COMPAT"] = "force" if force else "1"


PTH_NAME = "cedar-compat.pth"


def install_hook(site_dir: str | None = None) -> str:
    """Write a ``.pth`` file into ``site_dir`` (default: this environment's site-packages) that
    registers the lazy import hook at every start of this Python; the file's path."""
    site_dir = site_dir or sysconfig.get_paths()["purelib"]
    hook = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook.py")
    line = (
        "import importlib.util as _u; _s = _u.spec_from_file_location('cedar_compat_hook', "
        f"{hook!r}); _m = _u.module_from_spec(_s); _s.loader.exec_module(_m); _m.register()\n"
    )
    path = os.path.join(site_dir, PTH_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(line)
    return path


def uninstall() -> None:
    """Remove the compat modules from ``sys.modules`` (the real ones import again)."""
    for name in list(sys.modules):
        top = name.partition(".")[0]
        compat = getattr(sys.modules.get(top), "__cedar_compat__", False)
        if name != top and top in MODULES and compat:
            del sys.modules[name]
    for name in MODULES:
        if getattr(sys.modules.get(name), "__cedar_compat__", False):
            del sys.modules[name]


__all__ = [
    "BOOT_DIR",
    "MODULES",
    "PTH_NAME",
    "child_environment",
    "install",
    "install_hook",
    "uninstall",
]
