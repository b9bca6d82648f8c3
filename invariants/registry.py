"""Named entries registered where they are declared (issue 39): the properties of
``invariants.properties`` and ``invariants.liveness`` and the witnesses of the latter.

A :class:`Registry` keeps its entries in declaration order and refuses a name declared
twice; the tuples the checkers read (``STATE_PROPERTIES``, ``STEP_PROPERTIES``,
``WITNESSES``) are views of it, so a property is written in one place only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """The ``what``s declared so far, by name, in declaration order."""

    __slots__ = ("_by_name", "what")

    def __init__(self, what: str) -> None:
        self.what = what
        self._by_name: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        """Record ``entry`` under ``name`` and return it; a name already taken is a
        ``ValueError`` naming it."""
        if name in self._by_name:
            raise ValueError(f"{self.what} {name!r} is declared twice: names must be unique")
        self._by_name[name] = entry
        return entry

    def __iter__(self) -> Iterator[T]:
        return iter(tuple(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def named(self, name: str) -> T:
        """The entry registered under ``name``; ``KeyError`` naming the known ones."""
        entry = self._by_name.get(name)
        if entry is None:
            raise KeyError(f"no {self.what} {name!r}; known: {', '.join(self._by_name)}")
        return entry

    def names(self) -> tuple[str, ...]:
        """The registered names, in declaration order."""
        return tuple(self._by_name)

    def where(self, keep: Callable[[T], bool]) -> tuple[T, ...]:
        """The entries ``keep`` accepts, in declaration order (a view: the registry is
        not changed)."""
        return tuple(e for e in self._by_name.values() if keep(e))
