"""htc-cedar: a pure-Python, async-first implementation of HTCondor's CEDAR protocol."""

from cedar.errors import *  # noqa: F403
from cedar.errors import __all__ as _errors_all

__version__ = "0.1.0"
__all__ = [*_errors_all]
