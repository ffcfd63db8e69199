"""The protocol requests and driver actions (``cedar/stream/protocol.py``) write their
``__slots__``, annotations and ``__init__`` by hand: these tests keep the three naming the same
fields in the same order, taken by position or by name, with the documented defaults, and no
per-instance ``__dict__``."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest

from cedar.stream import protocol

#: Each class, its fields in order, and the defaults of the trailing ones.
FIELDS: list[tuple[Any, tuple[str, ...], dict[str, Any]]] = [
    (protocol.Send, ("message", "flush"), {"flush": True}),
    (protocol.Receive, ("part_size",), {"part_size": None}),
    (protocol.SendRaw, ("data",), {}),
    (protocol.ReceiveRaw, ("max_bytes",), {}),
    (protocol.Emit, ("value", "many"), {"many": False}),
    (protocol.Write, ("data", "payload", "flush"), {"payload": b"", "flush": True}),
    (protocol.ReadMessage, ("part_size",), {"part_size": None}),
    (protocol.ReadRaw, ("max_bytes",), {}),
    (protocol.Deliver, ("value", "many"), {"many": False}),
    (protocol.Finished, ("result",), {}),
    (protocol.Offload, ("function",), {}),
]


@pytest.mark.parametrize(
    ("cls", "names", "defaults"), FIELDS, ids=lambda x: getattr(x, "__name__", "")
)
def test_fields_make_slots_and_signature(
    cls: Any, names: tuple[str, ...], defaults: dict[str, Any]
) -> None:
    assert cls.__slots__ == names == tuple(cls.__annotations__)
    parameters = inspect.signature(cls).parameters
    assert tuple(parameters) == names
    assert {n: p.default for n, p in parameters.items() if p.default is not p.empty} == defaults
    arguments = [f"value-{index}" for index in range(len(names))]
    by_position, by_name = cls(*arguments), cls(**dict(zip(names, arguments, strict=True)))
    assert by_position == by_name and not hasattr(by_position, "__dict__")
    assert [getattr(by_position, name) for name in names] == arguments
    assert cls.__init__.__qualname__ == f"{cls.__name__}.__init__"


def test_wrong_arguments_name_the_field() -> None:
    with pytest.raises(TypeError, match="'message'"):
        protocol.Send()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="flsh"):
        protocol.Send(b"x", flsh=False)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        protocol.Receive(1, 2)  # type: ignore[call-arg]


def test_every_request_and_action_is_listed() -> None:
    """A new request or action gets the same checks (its fields listed in ``FIELDS``);
    ``Offload`` is both (the driver runs the request itself)."""
    classes = typing.get_args(protocol.Request) + typing.get_args(protocol.Action)
    assert sorted({cls.__name__ for cls in classes}) == sorted(c.__name__ for c, _, _ in FIELDS)
