"""Public names resolved on first use (PEP 562): a package lists which module defines each
name, and importing the package loads none of them, so a command loads only what it runs."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["LazyLogger", "lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name of ``table`` is imported from its
    module when first used and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        module_name = table.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__


class LazyLogger:
    """A ``logging.getLogger(name)`` that imports :mod:`logging` only when a record could be
    emitted: a command that logs nothing does not pay for the import (start-up, issue 39).

    Until something imports :mod:`logging`, nobody can have configured it, so DEBUG and INFO
    records would be dropped (the root level is WARNING): they are dropped here without the
    import. WARNING and above always go to the real logger (its last-resort handler prints them).
    """

    __slots__ = ("_logger", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: Any = None

    def _real(self) -> Any:
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self.name)
        return self._logger

    def debug(self, msg: object, *args: object) -> None:
        """``Logger.debug``, free while :mod:`logging` is not imported."""
        if "logging" in sys.modules:
            self._real().debug(msg, *args)

    def info(self, msg: object, *args: object) -> None:
        """``Logger.info``, free while :mod:`logging` is not imported."""
        if "logging" in sys.modules:
            self._real().info(msg, *args)

    def warning(self, msg: object, *args: object) -> None:
        """``Logger.warning``."""
        self._real().warning(msg, *args)

    def error(self, msg: object, *args: object) -> None:
        """``Logger.error``."""
        self._real().error(msg, *args)
