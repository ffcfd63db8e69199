"""The exception classes of the HTCondor bindings, and the one place cedar errors become them.

The class names and bases follow what the reference modules expose (``htcondor.HTCondorIOError``
is also an ``OSError``, ``RuntimeError`` and ``ValueError``, so old ``except`` clauses keep
working).  :func:`translated` turns a :class:`cedar.CedarError` raised inside a compat call into
the class a program written for the bindings expects, keeping the cedar error as ``__cause__``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from cedar.errors import (
    CedarConnectionError,
    CedarError,
    ClassAdError,
    InvalidArgument,
    SecurityError,
)
from cedar.errors import ClassAdParseError as _CedarParseError


class HTCondorException(Exception):
    """Base of every error the ``htcondor``/``htcondor2`` compat modules raise."""


class HTCondorIOError(HTCondorException, OSError, RuntimeError, ValueError):
    """A daemon could not be reached or the conversation with it failed."""


class HTCondorLocateError(HTCondorException, OSError, RuntimeError, ValueError):
    """The collector knows no such daemon."""


class HTCondorReplyError(HTCondorException, RuntimeError, ValueError):
    """A daemon answered with a failure."""


class HTCondorValueError(HTCondorException, ValueError, RuntimeError):
    """A bad argument (constraint, job id, ...)."""


class HTCondorTypeError(HTCondorException, TypeError, RuntimeError, ValueError):
    """An argument of the wrong type."""


class HTCondorInternalError(HTCondorException, RuntimeError, TypeError, ValueError):
    """Something that should not happen."""


class HTCondorEnumError(HTCondorException, ValueError, NotImplementedError, RuntimeError):
    """An unknown enum value."""


class ClassAdException(Exception):
    """Base of the ``classad``/``classad2`` compat errors."""


class ClassAdParseError(ClassAdException, SyntaxError):
    """Text that is not a ClassAd or expression."""


class ClassAdValueError(ClassAdException, ValueError):
    """A bad value."""


class ClassAdEvaluationError(ClassAdException, TypeError):
    """An expression could not be evaluated."""


class ClassAdTypeError(ClassAdException, TypeError):
    """An argument of the wrong type."""


class ClassAdOSError(ClassAdException, OSError):
    """Reading a ClassAd file failed."""


class ClassAdEnumError(ClassAdException, TypeError):
    """An unknown enum value."""


class ClassAdInternalError(ClassAdException, ValueError, TypeError):
    """Something that should not happen."""


def convert(exc: CedarError) -> Exception:
    """The bindings' exception for a cedar error (same message)."""
    text = str(exc)
    if isinstance(exc, (_CedarParseError, InvalidArgument)):
        return HTCondorValueError(text)
    if isinstance(exc, ClassAdError):
        return ClassAdValueError(text)
    if isinstance(exc, (CedarConnectionError, SecurityError)):
        return HTCondorIOError(text)
    return HTCondorReplyError(text)


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Re-raise cedar errors (and cedar's ``ValueError`` for bad arguments) as the bindings do."""
    try:
        yield
    except CedarError as exc:
        raise convert(exc) from exc
    except ValueError as exc:
        if isinstance(exc, (HTCondorException, ClassAdException)):
            raise
        raise HTCondorValueError(str(exc)) from exc


__all__ = [
    "ClassAdEnumError",
    "ClassAdEvaluationError",
    "ClassAdException",
    "ClassAdInternalError",
    "ClassAdOSError",
    "ClassAdParseError",
    "ClassAdTypeError",
    "ClassAdValueError",
    "HTCondorEnumError",
    "HTCondorException",
    "HTCondorIOError",
    "HTCondorInternalError",
    "HTCondorLocateError",
    "HTCondorReplyError",
    "HTCondorTypeError",
    "HTCondorValueError",
    "convert",
    "translated",
]
