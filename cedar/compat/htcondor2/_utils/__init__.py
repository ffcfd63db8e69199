"""``htcondor2._utils``: the pure-Python terminal helpers HTCondor's own programs import
(:mod:`~cedar.compat.htcondor2._utils.ansi` for colours, :mod:`~.keyboard` for key presses).
Written from the reference's observed behaviour (``tests/compat/test_compat_utils.py``)."""

from cedar.compat.htcondor2._utils import ansi, keyboard

__all__ = ["ansi", "keyboard"]
