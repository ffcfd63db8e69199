"""No behaviour may depend on ``str()`` of an enum: Python 3.10 prints an ``IntEnum`` as
``Command.DC_NOP_WRITE`` where 3.11+ print ``60021``.

The fixture gives every enum cedar defines the 3.10 ``str()`` on whatever Python runs the test,
so the defect that broke ``cedar demo`` / ``MockPool`` on 3.10 (the post-authentication ad's
``ValidCommands`` written with ``str()``) is caught on any interpreter.
"""

from __future__ import annotations

import enum
import io
import sys
from collections.abc import Iterator

import pytest

import cedar.auth.policy
import cedar.commands.filetransfer
import cedar.numbers
from cedar.classad_wire import ClassAd
from cedar.numbers import Command, JobStatus


def _cedar_enums() -> list[type[enum.Enum]]:
    found: list[type[enum.Enum]] = []
    pending: list[type[enum.Enum]] = [enum.Enum]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("cedar.") and list(cls) and cls not in found:
            found.append(cls)
    return found


def _py310_str(self: enum.Enum) -> str:
    return f"{type(self).__name__}.{self.name}"


@pytest.fixture
def py310_enum_str() -> Iterator[list[type[enum.Enum]]]:
    """Every cedar enum's ``str()`` (and ``%s``) as Python 3.10 spells it."""
    classes = _cedar_enums()
    saved = [(cls, cls.__dict__.get("__str__")) for cls in classes]
    for cls in classes:
        type.__setattr__(cls, "__str__", _py310_str)
    try:
        yield classes
    finally:
        for cls, original in saved:
            if original is None:
                type.__delattr__(cls, "__str__")
            else:
                type.__setattr__(cls, "__str__", original)


def test_the_fixture_reproduces_python_310(py310_enum_str: list[type[enum.Enum]]) -> None:
    assert Command in py310_enum_str and JobStatus in py310_enum_str
    assert str(Command.DC_NOP_WRITE) == "Command.DC_NOP_WRITE"
    assert "%s" % JobStatus.HELD == "JobStatus.HELD"  # noqa: UP031 - what logging does


def test_classad_values_never_use_the_enum_name(py310_enum_str: object) -> None:
    ad = ClassAd({"JobStatus": JobStatus.HELD, "Cmd": Command.DC_NOP_WRITE})
    assert ad.raw_text("JobStatus") == "5"
    assert f"JobStatus = {int(JobStatus.HELD)}" in ad.print_old()
    assert "Command." not in ad.print_old() and "JobStatus." not in ad.print_old()


@pytest.mark.skipif(sys.platform != "linux", reason="the demo's FS authentication needs Linux")
def test_demo_runs_with_python_310_enum_text(
    py310_enum_str: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cedar.cli.main import main

    monkeypatch.setenv("CONDOR_CONFIG", "/dev/null")
    out = io.StringIO()
    status = main(["demo"], out=out)
    assert status == 0, out.getvalue()
    assert "demo succeeded" in out.getvalue()


def test_modules_imported() -> None:
    """The enum modules the fixture must reach are cedar's own (kept imported above)."""
    assert {cedar.numbers.__name__, cedar.auth.policy.__name__} <= {
        cls.__module__ for cls in _cedar_enums()
    }
    assert cedar.commands.filetransfer.TransferCommand in _cedar_enums()
