"""The old ``classad`` module on cedar: :mod:`cedar.compat.classad2` plus the pre-10 names
(``parseOld``, ``parseOldAds``, the ``ClassAd*Error`` classes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from cedar.compat.classad2 import *  # noqa: F403
from cedar.compat.classad2 import ClassAd, ParserType, parseAds, parseOne
from cedar.compat.classad2 import __all__ as _classad2_all
from cedar.compat.errors import (
    ClassAdEnumError,
    ClassAdEvaluationError,
    ClassAdInternalError,
    ClassAdOSError,
    ClassAdParseError,
    ClassAdTypeError,
    ClassAdValueError,
)


def parseOld(input: str | IO[str]) -> ClassAd:  # noqa: N802, A002
    """One ad in the old ``name = value`` lines form."""
    return parseOne(input if isinstance(input, str) else input.read(), ParserType.Old)


def parseOldAds(input: str | IO[str]) -> Iterator[ClassAd]:  # noqa: N802, A002
    """Every ad of old-form text (ads separated by blank lines)."""
    return parseAds(input, ParserType.Old)


__all__ = [
    *_classad2_all,
    "ClassAdEnumError",
    "ClassAdEvaluationError",
    "ClassAdInternalError",
    "ClassAdOSError",
    "ClassAdParseError",
    "ClassAdTypeError",
    "ClassAdValueError",
    "parseOld",
    "parseOldAds",
]
