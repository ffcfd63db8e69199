"""Users: userHome and userMap."""

from __future__ import annotations

from cedar.classad_wire.builtins.registry import register
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
)
from cedar.classad_wire.values import Error, Undefined


@register("userHome")
def _user_home(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """The home directory of a local user, else the default (second argument), else undefined."""
    if not 1 <= len(args) <= 2:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    default = values[1] if len(values) == 2 else Undefined
    name = values[0]
    if type(name) is str and name:
        try:
            import pwd

            return pwd.getpwnam(name).pw_dir
        except (ImportError, KeyError):
            pass
    return default


@register("userMap")
def _user_map(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """No user maps are configured in cedar: the default (fourth argument) or undefined."""
    if not 2 <= len(args) <= 4:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if any(v is Error for v in values[:2]):
        return Error
    return values[3] if len(values) == 4 else Undefined
