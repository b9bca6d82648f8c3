"""Identifiers and assignments shared by every part of the model.

A partition is named by its topic *id* (KIP-516) and index, as the KIP-848 records do;
topic names appear only in subscriptions and in metadata. Assignments are frozensets of
partitions so that equal assignments are equal values.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import TypeVar, overload

TopicPartition = tuple[str, int]
"""``(topic_id, partition_index)`` — ConsumerGroupTargetAssignmentMemberValue.TopicPartitions."""

Assignment = frozenset[TopicPartition]

EMPTY: Assignment = frozenset()

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class FrozenMap(Mapping[K, V]):
    """An immutable, hashable mapping with a canonical (sorted) iteration order.

    Used for the group's keyed collections (target assignment, partition epochs,
    committed offsets) so that state records stay hashable values.
    """

    __slots__ = ("_d", "_h")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        d = dict(items)
        try:
            self._d: dict[K, V] = dict(sorted(d.items()))  # type: ignore[type-var,unused-ignore]
        except TypeError:
            self._d = d
        self._h: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    # The reads below are ``Mapping``'s, answered by the dict itself (read-only views)
    # rather than by the generic mixins, which call ``__getitem__`` once per key.

    @overload
    def get(self, key: K, /) -> V | None: ...

    @overload
    def get(self, key: K, /, default: V | T) -> V | T: ...

    def get(self, key: K, /, default: object = None) -> object:
        return self._d.get(key, default)

    def keys(self) -> KeysView[K]:
        return self._d.keys()

    def values(self) -> ValuesView[V]:
        return self._d.values()

    def items(self) -> ItemsView[K, V]:
        return self._d.items()

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self._d.items()))
        return self._h

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    @classmethod
    def _in_order(cls, d: dict[K, V]) -> FrozenMap[K, V]:
        """A map holding ``d``, whose keys are in the canonical order already (the copy of
        a map's dict with one value replaced or one key removed): no sort."""
        new: FrozenMap[K, V] = object.__new__(cls)
        new._d = d
        new._h = None
        return new

    def set(self, key: K, value: V) -> FrozenMap[K, V]:
        """A copy with ``key`` bound to ``value``."""
        d = dict(self._d)
        known = key in d
        d[key] = value
        return FrozenMap._in_order(d) if known else FrozenMap(d)

    def remove(self, key: K) -> FrozenMap[K, V]:
        """A copy without ``key`` (the same object when ``key`` is absent)."""
        if key not in self._d:
            return self
        d = dict(self._d)
        del d[key]
        return FrozenMap._in_order(d)

    def as_dict(self) -> dict[K, V]:
        """A mutable copy."""
        return dict(self._d)


def format_partitions(
    partitions: Iterable[TopicPartition], names: Mapping[str, str] | None = None
) -> str:
    """Render partitions the way the KIP-848 case studies do: ``[foo-0, foo-1]``."""
    names = names or {}
    items = sorted(partitions)
    return "[" + ", ".join(f"{names.get(t, t)}-{p}" for t, p in items) + "]"
