"""The compat modules are packages with the reference's submodules, and ``run`` reaches the
Python children a program starts (multiprocessing "spawn")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cedar.compat.htcondor2._utils import ansi
from cedar.compat.htcondor2._utils.keyboard import KBHit


def _run(tmp_path: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(program))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CEDAR_COMPAT")}
    return subprocess.run(
        [sys.executable, "-m", "cedar.compat", "run", "--force", str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )


def test_submodules_import_under_the_bindings_names(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import htcondor2._utils.ansi
        from htcondor2._utils.ansi import Color, colorize
        from htcondor2._utils.keyboard import KBHit
        import cedar.compat.htcondor2._utils.ansi as native
        import classad2
        print(htcondor2._utils.ansi is native, colorize("x", Color.RED), KBHit.__module__)
        print(type(classad2.ClassAd()).__module__)
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "True x cedar.compat.htcondor2._utils.keyboard"
    assert result.stdout.split("\n")[1] == "cedar.compat.classad2"


def test_spawn_children_get_the_compat_modules(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import multiprocessing as mp
        import htcondor2

        def where(_):
            import htcondor2, classad2
            return (htcondor2.__name__, getattr(htcondor2, "__cedar_compat__", False),
                    classad2.ClassAd({"a": 1})["a"])

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            with ctx.Pool(1) as pool:
                print(pool.map(where, [0]))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[('cedar.compat.htcondor2', True, 1)]"


def test_ansi_is_plain_text_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ansi, "IS_TTY", False)
    assert ansi.colorize("xy", ansi.Color.RED) == "xy"
    assert ansi.stylize("xy", ansi.AnsiOptions(bold=True)) == "xy"
    assert ansi.id_colorize("xy", 3) == "xy"


def test_ansi_sequences_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ansi, "IS_TTY", True)
    assert ansi.colorize("xy", ansi.Color.RED) == "\x1b[31mxy\x1b[0m"
    assert ansi.bold("xy") == "\x1b[1mxy\x1b[0m"
    assert ansi.underline("xy") == "\x1b[4mxy\x1b[0m"
    assert ansi.blink("xy") == "\x1b[5mxy\x1b[0m"
    assert ansi.id_colorize("x", -1) == "\x1b[38;5;0mx\x1b[0m"
    assert ansi.highlight("x", 100) == "\x1b[48;5;100mx\x1b[0m"
    assert ansi.id_colorize("x", 300) == "x"
    every = ansi.AnsiOptions(color=ansi.Color.RED, bold=True, underline=True, blink=True)
    assert str(every) == "\x1b[1;4;5;31m"
    ids = ansi.AnsiOptions(color_id=3, highlight=2, bold=True)
    assert ansi.stylize("xy", ids) == "\x1b[1;38;5;3;48;5;2mxy\x1b[0m"
    styled = ansi.AnsiOptions(style=ansi.Style.UNDERLINE, color=ansi.Color.BRIGHT_WHITE)
    assert (styled.underline, styled.color, str(styled)) == (True, "97", "\x1b[4;97m")
    assert ansi.stylize("xy", ansi.AnsiOptions()) == "xy\x1b[0m"
    assert ansi.strip_ansi(ansi.bold(ansi.colorize("xy", ansi.Color.RED))) == "xy"


def test_kbhit_needs_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import termios

    with open(os.devnull) as devnull:
        monkeypatch.setattr(sys, "stdin", devnull)
        with pytest.raises(termios.error):
            KBHit()
