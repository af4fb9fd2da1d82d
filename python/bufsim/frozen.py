"""Read-only records: what a frozen dataclass gives, without the dataclass machinery (which, with
the ``inspect`` module it loads, was a third of ``bufsim run``'s start-up).

A low-level module: it imports nothing."""

from __future__ import annotations


class Frozen:
    """A record of the fields its class lists in ``__slots__``: set once by ``_fill``, read-only
    after, equal to a record of its class with equal fields (and hashed by them, as a frozen
    dataclass is), shown with its fields, and picklable."""

    __slots__ = ()

    def _fill(self, values) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a {type(self).__name__} is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a {type(self).__name__} is read-only: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(_hashable(self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"

    def __reduce__(self):
        return (_refilled, (type(self), self._values()))


def _hashable(value: object) -> object:
    """``value`` with its mappings and lists (a result's ``request_sizes``, a first level's
    ``clients``) as tuples, so that equal records hash alike."""
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def _refilled(cls: type, values: tuple) -> Frozen:
    record = cls.__new__(cls)
    record._fill(values)
    return record
