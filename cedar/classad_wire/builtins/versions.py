"""Version comparison (versioncmp and the versionGT/... tests)."""

from __future__ import annotations

from collections.abc import Callable

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    to_string,
)
from cedar.classad_wire.values import Error, Undefined


def _signed(byte: int) -> int:
    return byte - 256 if byte > 127 else byte


def _digit_run(data: bytes, pos: int) -> int:
    end = pos
    while end < len(data) and 48 <= data[end] <= 57:
        end += 1
    return end


def _leading_zeros(data: bytes, pos: int) -> int:
    """The zeros that start the digit run at ``pos``, not counting the run's last digit."""
    end = _digit_run(data, pos)
    zeros = len(data[pos:end]) - len(data[pos:end].lstrip(b"0"))
    return min(zeros, end - pos - 1)


def version_compare(left: str, right: str) -> int:
    """The reference's ``versioncmp`` (a black-box model; strverscmp-like order).

    At the first differing byte: inside a digit run whose common part is only zeros, the end
    of a run is larger (+1/-1); inside one that starts with a zero, bytes compare as
    characters; inside one that starts with another digit, the longer run is larger (by the
    difference in length); two fractions differ by their counts of leading zeros.  At the
    start of two digit runs a run of two or more digits starting with a zero is a fraction,
    smaller by its leading zeros (a lone zero is a number); else the longer run is larger.
    Otherwise the result is the difference of the two (signed) bytes.
    """
    a, b = left.encode("utf-8", "surrogateescape"), right.encode("utf-8", "surrogateescape")
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    c1 = a[p] if p < len(a) else 0
    c2 = b[p] if p < len(b) else 0
    if c1 == c2:
        return 0
    diff = _signed(c1) - _signed(c2)
    d1, d2 = 48 <= c1 <= 57, 48 <= c2 <= 57
    k = p
    while k > 0 and 48 <= a[k - 1] <= 57:
        k -= 1
    if k < p:  # inside a digit run
        common = a[k:p]
        if not common.strip(b"0"):
            if d1 != d2:
                # A run of zeros is a fraction: the one with more leading zeros is smaller, by
                # how many more (a run's last digit is its value, not a leading zero).
                zeros = _leading_zeros(a if d1 else b, k) - _leading_zeros(a if d2 else b, k)
                return -max(zeros, 1) if d1 else max(zeros, 1)
            # Two fractions: the one with more leading zeros is smaller, by how many more
            # (observed: "1.002" < "1.02" by 1, "000" < "09" by 1).
            zeros = _leading_zeros(b, k) - _leading_zeros(a, k)
            return zeros if zeros else diff
        if common[0] == 48:
            return diff
        if d1 or d2:
            length = (_digit_run(a, k) - k) - (_digit_run(b, k) - k)
            return length if length else diff
        return diff
    if d1 and d2:
        la, lb = _digit_run(a, p) - p, _digit_run(b, p) - p
        # A fraction (a run of two or more digits starting with 0) is smaller, by its count of
        # leading zeros less its last digit; a lone "0" is a number like any other (observed:
        # "000" < "1" by 2, "01" < "999" by 1, "0" < "100" by 2, "0" < "9" by 9).
        if c1 == 48 and la > 1:
            return -_leading_zeros(a, p)
        if c2 == 48 and lb > 1:
            return _leading_zeros(b, p)
        return la - lb if la != lb else diff
    return diff


def _version_strings(ev: Context, args: tuple[Expr, ...], scope: Scope, count: int) -> Value:
    if len(args) != count:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if any(v is Undefined for v in values):
        return Undefined  # observed: undefined wins over error here
    if any(v is Error for v in values):
        return Error
    return [to_string(v) for v in values]


@register("versioncmp")
def _versioncmp(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    strings = _version_strings(ev, args, scope, 2)
    if not isinstance(strings, list):
        return strings
    return version_compare(strings[0], strings[1])


def _version_test(test: Callable[[int], bool]) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        strings = _version_strings(ev, args, scope, 2)
        if not isinstance(strings, list):
            return strings
        return test(version_compare(strings[0], strings[1]))

    return call


FUNCTIONS["versiongt"] = _version_test(lambda c: c > 0)
FUNCTIONS["versionge"] = _version_test(lambda c: c >= 0)
FUNCTIONS["versionlt"] = _version_test(lambda c: c < 0)
FUNCTIONS["versionle"] = _version_test(lambda c: c <= 0)
FUNCTIONS["versioneq"] = _version_test(lambda c: c == 0)


@register("version_in_range")
def _version_in_range(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Observed: the bounds are checked last to first; an undefined version is an error."""
    if len(args) != 3:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if values[2] is Undefined or values[1] is Undefined:
        return Undefined
    if values[2] is Error or values[1] is Error:
        return Error
    if values[0] is Undefined or values[0] is Error:
        return Error
    version, low, high = (to_string(v) for v in values)
    return version_compare(low, version) <= 0 and version_compare(version, high) <= 0
