"""Put on ``PYTHONPATH`` by ``python -m cedar.compat run``, so that every Python process the
program starts -- multiprocessing "spawn" children, ``subprocess`` calls of ``sys.executable`` --
finds the compat modules too (``CEDAR_COMPAT=force``: ahead of installed bindings, as ``run
--force`` does).  Registers the lazy import hook only (cedar is imported when a program imports
``htcondor2``...), then runs the ``sitecustomize`` this file hides, if any."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _register() -> None:
    hook_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook.py")
    spec = importlib.util.spec_from_file_location("cedar_compat_hook", hook_path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.register(force=os.environ.get("CEDAR_COMPAT") == "force")


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    others = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if os.environ.get("CEDAR_COMPAT"):
    _register()
_chain()
