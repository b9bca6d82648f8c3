"""Search speed for the model's records, not part of the specification: a copier
generated per record class (``replace``, the ``dataclasses.replace`` a step calls) and a
hash kept once computed (``Record``, ``hash_once``). Neither changes a record's value,
equality or hash — only how fast a search copies and hashes the hundreds of thousands of
records it builds. The records themselves are in ``model/records.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")

_Copier = Callable[[Any, dict[str, Any]], Any]
_Shape = tuple[frozenset[str], _Copier]
_SHAPES: dict[type, _Shape | None] = {}


def _shape(cls: type) -> _Shape | None:
    """The field names of a record class that ``replace`` may copy field by field, and a
    copier generated for the class (one slot write per field, no loop); ``None`` for a
    class that needs ``__init__``."""
    fields = dataclasses.fields(cls)
    if len(fields) < 2 or hasattr(cls, "__post_init__") or not all(f.init for f in fields):
        return None
    names = tuple(f.name for f in fields)
    slots = [cls.__dict__.get(n) for n in names]
    if not all(hasattr(s, "__set__") for s in slots):
        return None  # not a slotted record
    values = [f"changes[{n!r}] if {n!r} in changes else record.{n}" for n in names]
    draft = _draft_class(cls) if issubclass(cls, Record) else None
    if draft is not None:
        # Plain slot writes into a draft, which then becomes a ``cls``: half the time of
        # calling each slot's setter (``_draft_class``).
        body = "".join(f"    new.{n} = {v}\n" for n, v in zip(names, values, strict=True))
        body += "    new._hash = -1\n    new.__class__ = _cls\n"
        source = f"def copy(record, changes):\n    new = _new(_draft)\n{body}    return new\n"
    else:
        body = "".join(f"    _set{i}(new, {v})\n" for i, v in enumerate(values))
        if issubclass(cls, Record):
            body += "    _put_hash(new, -1)\n"  # not computed yet (``_hash_kept``)
        source = f"def copy(record, changes):\n    new = _new(_cls)\n{body}    return new\n"
    scope: dict[str, Any] = {
        "_new": object.__new__,
        "_cls": cls,
        "_draft": draft,
        "_put_hash": _put_hash,
    }
    scope.update({f"_set{i}": s.__set__ for i, s in enumerate(slots)})  # type: ignore[union-attr]
    exec(source, scope)
    return frozenset(names), scope["copy"]


def _draft_class(cls: type) -> type | None:
    """A class of ``cls``'s bases and slots without its frozen ``__setattr__``: ``replace``
    fills an instance of it with plain slot writes and then makes it a ``cls`` (CPython
    lets an object change its class to one of the same layout); None when that is not
    possible. Nothing outside ``replace`` ever holds a draft."""
    try:
        draft = type(f"{cls.__name__}Draft", cls.__bases__, {"__slots__": cls.__slots__})  # type: ignore[attr-defined]
        probe: Any = object.__new__(draft)
        probe.__class__ = cls
    except (TypeError, AttributeError):
        return None
    if draft.__setattr__ is not object.__setattr__:  # type: ignore[comparison-overlap]
        return None
    return draft


def replace(record: R, /, **changes: Any) -> R:
    """A copy of ``record`` with ``changes`` applied: ``dataclasses.replace`` for the
    model's frozen records (every field an ``__init__`` argument, no ``__post_init__``),
    which copies the fields directly instead of re-running ``__init__`` with its
    per-call field checks. Steps copy records hundreds of thousands of times in an
    exhaustive search; other dataclasses go through ``dataclasses.replace``."""
    cls = type(record)
    try:
        shape = _SHAPES[cls]
    except KeyError:
        shape = _SHAPES[cls] = _shape(cls)
    if shape is None:
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    known, copy = shape
    if not known.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - known))
        raise TypeError(f"{cls.__name__} has no field {unknown}")
    new: R = copy(record, changes)
    return new


class Record:
    """Base of the records that keep their hash once computed (``hash_once``): one slot
    beside the fields, which is never compared, copied by ``replace`` or pickled."""

    __slots__ = ("_hash",)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """A record whose hash is not computed yet: its slot marked -1 (``_hash_kept``),
        as ``replace`` marks a copy's."""
        record = object.__new__(cls)
        _put_hash(record, -1)
        return record


_put_hash = Record._hash.__set__  # type: ignore[attr-defined]


def same_value(new: R, old: R) -> bool:
    """Whether a step's result equals the state it started from (the step stutters). The
    kept hashes are compared first (``hash_once``; a search hashes every state it reaches
    anyway): a step that changed something is told apart without comparing field by
    field."""
    return new is old or (hash(new) == hash(old) and new == old)


def hash_once(*classes: type[Record]) -> None:
    """Make each record class keep its hash after computing it. A record is an immutable
    value, so its hash (the dataclass's hash of its fields) never changes. Used for the
    states and groups, which a search hashes again and again (the visited states, the
    convergence memos, the snapshot keys), and for the members, clients and messages they
    hold: a successor shares all but one or two of them with its parent, so hashing it
    hashes only what the step built. The value is the dataclass's, so nothing keyed by
    records sees a difference."""
    for cls in classes:
        setattr(cls, "__hash__", _hash_kept(cls))  # noqa: B010


def _hash_kept(cls: type) -> Callable[[Any], int]:
    """The kept hash, computed on first use: the hash of the tuple of the fields the
    dataclass hashes, in one generated function (a wrapper around the dataclass's
    ``__hash__`` would cost a second call per record hashed). A new record's slot holds
    -1, a value Python's ``hash`` never returns (``Record.__new__``, ``replace``); an
    empty slot (a record made some other way) counts as not computed too."""
    hashed = [f.name for f in dataclasses.fields(cls) if (f.compare if f.hash is None else f.hash)]
    fields = "".join(f"self.{n}, " for n in hashed)
    source = (
        "def __hash__(self):\n"
        "    try:\n"
        "        h = self._hash\n"
        "    except AttributeError:\n"  # built by __init__: the slot is empty
        "        h = -1\n"
        "    if h == -1:\n"
        f"        h = _hash(({fields}))\n"
        "        _put_hash(self, h)\n"
        "    return h\n"
    )
    scope: dict[str, Any] = {"_hash": hash, "_put_hash": _put_hash}
    exec(source, scope)
    kept: Callable[[Any], int] = scope["__hash__"]
    kept.__qualname__ = f"{cls.__name__}.__hash__"
    return kept
