"""Small value classes without ``@dataclass`` (issue 39: start-up).

``@dataclass`` compiles its methods with ``exec`` when the class is made (~0.6 M instructions a
method) and needs ``dataclasses``, which imports ``inspect`` and ``ast`` (~75 M instructions
together): a third of what a ``cedar q`` spent before its first byte.  A :class:`Record`
subclass lists its fields in ``__slots__`` (in ``__init__``'s order) and writes its own
``__init__``; the base gives what the dataclass gave: ``repr``, equality on the fields (and a
hash for frozen ones), refused assignment for frozen ones, copying and pickling.

``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` keep working on records:
``__dataclass_fields__`` is made on first use, importing ``dataclasses`` only then.  The fields
it reports carry no defaults (the ``__init__`` holds those); ``repr`` and ``compare`` say what
the record shows and compares.
"""

from __future__ import annotations

from typing import Any, ClassVar

from cedar.errors import FrozenRecordError

__all__ = ["FrozenRecordError", "Record"]


class _DataclassFields:
    """``__dataclass_fields__``, made once per class on first use (real ``Field`` objects, from
    a dataclass with the same field names, shown and compared alike)."""

    def __get__(self, instance: object, owner: type[Record]) -> dict[str, Any]:
        made = owner.__dict__.get("_dataclass_fields")
        if made is None:
            import dataclasses

            specs = [
                (
                    name,
                    Any,
                    dataclasses.field(
                        repr=name in owner._repr_names, compare=name in owner._compare_names
                    ),
                )
                for name in owner._field_names
            ]
            shadow = dataclasses.make_dataclass(owner.__name__, specs)
            made = dict(shadow.__dataclass_fields__)  # type: ignore[attr-defined]
            type.__setattr__(owner, "_dataclass_fields", made)
        return dict(made)


class Record:
    """Base of a value class: fields from ``__slots__`` (base classes' first); subclass with
    ``frozen=True`` for an immutable, hashable one, ``hidden=(...)`` for fields the repr does
    not show (a secret, a whole ad) and ``uncompared=(...)`` for fields equality and the hash
    leave out."""

    __slots__ = ()
    _field_names: ClassVar[tuple[str, ...]] = ()
    _repr_names: ClassVar[tuple[str, ...]] = ()
    _compare_names: ClassVar[tuple[str, ...]] = ()
    _frozen: ClassVar[bool] = False
    __dataclass_fields__: ClassVar[Any] = _DataclassFields()

    def __init_subclass__(
        cls,
        *,
        frozen: bool | None = None,
        hidden: tuple[str, ...] = (),
        uncompared: tuple[str, ...] = (),
    ) -> None:
        own = cls.__dict__.get("__slots__", ())
        own = (own,) if isinstance(own, str) else own
        names = [name for name in own if not name.startswith("__")]  # __dict__, __weakref__
        cls._field_names = (*cls._field_names, *names)
        cls._repr_names = tuple(name for name in cls._field_names if name not in hidden)
        cls._compare_names = tuple(name for name in cls._field_names if name not in uncompared)
        if frozen is not None:
            cls._frozen = frozen
        if cls._frozen:
            cls.__hash__ = Record._hash  # type: ignore[method-assign, assignment]

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._field_names])

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._repr_names)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self._compare_names
        return [getattr(self, n) for n in names] == [getattr(other, n) for n in names]

    __hash__ = None  # type: ignore[assignment]  # as a dataclass: mutable ones are unhashable

    def _hash(self) -> int:
        return hash(tuple([getattr(self, name) for name in self._compare_names]))

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise FrozenRecordError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self._frozen:
            raise FrozenRecordError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    def __reduce__(self) -> tuple[Any, ...]:
        """Copies and pickles are made by ``__init__`` with the fields in order."""
        return (self.__class__, self._values())

    def _set(self, *values: Any) -> None:
        """Set every field, in order (``__init__`` of a frozen record)."""
        for name, value in zip(self._field_names, values, strict=True):
            object.__setattr__(self, name, value)
