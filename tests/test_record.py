"""cedar.record: what a class made with @dataclass gave, without dataclasses at start-up."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from cedar.record import FrozenRecordError, Record


class Point(Record, frozen=True):
    __slots__ = ("x", "y")
    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        self._set(x, y)


class Point3(Point):
    __slots__ = ("z",)
    z: int

    def __init__(self, x: int, y: int, z: int) -> None:
        self._set(x, y, z)


class Login(Record, hidden=("password",), uncompared=("password",)):
    __slots__ = ("user", "password")

    def __init__(self, user: str, password: str) -> None:
        self.user = user
        self.password = password


def test_repr_equality_and_hash_as_a_dataclass() -> None:
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Point(1, 2) == Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != (1, 2)
    assert Point3(1, 2, 3) != Point(1, 2)  # another class: never equal
    assert {Point(1, 2): "a"}[Point(1, 2)] == "a"
    assert repr(Point3(1, 2, 3)) == "Point3(x=1, y=2, z=3)"
    with pytest.raises(TypeError):
        hash(Login("u", "p"))  # a mutable record is unhashable, as a dataclass


def test_frozen_records_refuse_assignment_mutable_ones_take_it() -> None:
    point = Point(1)
    with pytest.raises(FrozenRecordError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y  # type: ignore[misc]
    login = Login("u", "p")
    login.user = "v"
    assert login.user == "v"
    with pytest.raises(AttributeError):
        login.other = 1  # type: ignore[attr-defined]  # slots: no stray attributes


def test_hidden_fields_stay_out_of_the_repr_uncompared_ones_out_of_equality() -> None:
    assert repr(Login("alice", "hunter2")) == "Login(user='alice')"
    assert Login("alice", "a") == Login("alice", "b") != Login("bob", "a")


def test_copy_pickle_and_the_dataclasses_functions_work() -> None:
    point = Point3(1, 2, 3)
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point
    assert dataclasses.is_dataclass(point)
    assert [f.name for f in dataclasses.fields(point)] == ["x", "y", "z"]
    assert dataclasses.replace(point, z=9) == Point3(1, 2, 9)
    assert dataclasses.asdict(Point(4, 5)) == {"x": 4, "y": 5}
    shown = {f.name: (f.repr, f.compare) for f in dataclasses.fields(Login("u", "p"))}
    assert shown == {"user": (True, True), "password": (False, False)}
