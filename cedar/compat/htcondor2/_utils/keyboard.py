"""Non-blocking key presses on a terminal, as ``htcondor2._utils.keyboard.KBHit`` behaves.

Observed behaviour: the constructor reads the terminal settings of standard input (so it raises
``termios.error`` when standard input is not a terminal); ``listen=True`` (or entering the
``with`` block) switches to unbuffered input without echo until :meth:`KBHit.reset_term` or the
end of the block; the original settings are restored at exit in any case.
"""

from __future__ import annotations

import atexit
import os
import select
import sys
from types import TracebackType
from typing import Any

IS_WINDOWS = os.name == "nt"

if not IS_WINDOWS:
    import termios


class KBHit:
    """Watches standard input for key presses without blocking."""

    def __init__(self, listen: bool = False) -> None:
        self.is_listening = False
        self.fd = sys.stdin.fileno()
        if IS_WINDOWS:  # pragma: no cover - the reference does nothing there either
            self.new_term: list[Any] = []
            self.old_term: list[Any] = []
            return
        self.old_term = termios.tcgetattr(self.fd)
        self.new_term = termios.tcgetattr(self.fd)
        lflag = 3
        self.new_term[lflag] = self.new_term[lflag] & ~termios.ICANON & ~termios.ECHO
        atexit.register(self.reset_term)
        if listen:
            self.listen_term()

    def __enter__(self) -> KBHit:
        self.listen_term()
        return self

    def __exit__(
        self,
        exec_type: type[BaseException] | None,
        exec_value: BaseException | None,
        exec_traceback: TracebackType | None,
    ) -> None:
        self.reset_term()

    def listening(self) -> bool:
        """Whether the terminal is in listening mode."""
        return self.is_listening

    def reset_term(self) -> None:
        """Restore the terminal settings found at construction."""
        if not IS_WINDOWS and self.is_listening:
            termios.tcsetattr(self.fd, termios.TCSAFLUSH, self.old_term)
        self.is_listening = False

    def listen_term(self) -> None:
        """Switch to unbuffered input without echo."""
        if not IS_WINDOWS:
            termios.tcsetattr(self.fd, termios.TCSAFLUSH, self.new_term)
        self.is_listening = True

    def __kbhit(self) -> bool | None:
        """Whether a key is waiting (``None`` when not listening)."""
        if not self.is_listening:
            return None
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        return bool(ready)

    def getch(self) -> str | None:
        """The key pressed, if any (never waits)."""
        if not self.__kbhit():
            return None
        return sys.stdin.read(1)

    def anyKeyPressed(self) -> bool:  # noqa: N802 - the reference's spelling
        """Whether any key was pressed (the key is consumed)."""
        return self.getch() is not None


__all__ = ["IS_WINDOWS", "KBHit"]
