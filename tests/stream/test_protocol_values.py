"""The protocol requests and driver actions behave as frozen dataclasses would (they are
written by hand for start-up time): equal and hashed by value, immutable, readable repr."""

from __future__ import annotations

import copy
import pickle

import pytest

from cedar.record import FrozenRecordError
from cedar.stream.protocol import (
    Deliver,
    Emit,
    Finished,
    ReadMessage,
    ReadRaw,
    Receive,
    ReceiveRaw,
    Send,
    SendRaw,
    Write,
)

VALUES = [
    Send(b"x"),
    Send(b"x", flush=False),
    Receive(),
    Receive(part_size=4096),
    SendRaw(b"body"),
    ReceiveRaw(10),
    Emit(1),
    Emit((1, 2), many=True),
    Write(b"a", payload=b"p"),
    ReadMessage(),
    ReadRaw(3),
    Deliver((1, 2), many=True),
    Finished("done"),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_value_semantics(value: object) -> None:
    twin = copy.copy(value)
    assert twin == value and twin is not value and hash(twin) == hash(value)
    assert pickle.loads(pickle.dumps(value)) == value
    assert eval(repr(value)) == value  # noqa: S307 - the repr is the constructor call
    assert value != object() and value != Finished(value)
    with pytest.raises(FrozenRecordError):
        value.anything = 1  # type: ignore[attr-defined]
    with pytest.raises(FrozenRecordError):
        del value.anything  # type: ignore[attr-defined]


def test_fields_and_defaults() -> None:
    assert repr(Send(b"x")) == "Send(message=b'x', flush=True)"
    assert Send(b"x") != Send(b"x", False) and Emit(1) != Deliver(1)
    assert (Write(b"d").payload, Write(b"d").flush) == (b"", True)
    assert Deliver(5).values() == (5,) and Deliver([5, 6], many=True).values() == [5, 6]
    assert len({Send(b"x"), Send(b"x"), Send(b"y")}) == 2
