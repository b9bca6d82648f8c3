"""Symmetry reduction over interchangeable clients.

Two dynamic clients whose specs are equal except for the name (same subscription, same
assignor, both initially subscribed or not) are interchangeable: renaming one into the
other everywhere — client names, the member ids derived from them (``A``, ``A.1`` …),
target-assignment keys, committed-offset authors, message addresses and bodies — maps
reachable states to reachable states. ``canonical`` picks one representative per orbit.

Caveat: assignors break ties by member id (uniform gives leftovers in member order,
range orders by member id), so renaming is an exact symmetry only up to those tie-breaks;
``bfs(symmetry=False)`` explores without the reduction, and tests pin both counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass, replace
from typing import Any

from model.config import ClientSpec, Config
from model.ids import FrozenMap
from model.system import AnyState


def symmetry_classes(config: Config) -> list[list[str]]:
    """Groups (of size ≥ 2) of interchangeable client names."""
    by_spec: dict[tuple[object, ...], list[str]] = {}
    for spec in config.clients:
        if spec.instance_id is not None:
            continue
        key = (tuple(sorted(spec.subscription)), spec.server_assignor, spec.subscribed)
        by_spec.setdefault(key, []).append(spec.name)
    return [names for names in by_spec.values() if len(names) > 1]


def _renamer(mapping: dict[str, str]) -> Callable[[str], str]:
    def rename(s: str) -> str:
        head, dot, tail = s.partition(".")
        if head in mapping:
            return mapping[head] + dot + tail
        return s

    return rename


def rename_value(value: Any, rename: Callable[[str], str]) -> Any:
    """Rename every client-derived string inside a model value."""
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, FrozenMap):
        return FrozenMap(
            (rename_value(k, rename), rename_value(v, rename)) for k, v in value.items()
        )
    if isinstance(value, tuple):
        return tuple(rename_value(v, rename) for v in value)
    if isinstance(value, frozenset):
        return frozenset(rename_value(v, rename) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, ClientSpec | Config):
            return value
        changes = {}
        for f in fields(value):
            old = getattr(value, f.name)
            new = rename_value(old, rename)
            if new is not old:
                changes[f.name] = new
        return replace(value, **changes) if changes else value
    return value


def permute(state: AnyState, mapping: dict[str, str]) -> AnyState:
    """``state`` with clients renamed by ``mapping`` (clients re-sorted by name)."""
    renamed: AnyState = rename_value(state, _renamer(mapping))
    clients = tuple(sorted(renamed.clients, key=lambda c: c.name))
    return replace(renamed, clients=clients)  # type: ignore[arg-type]


def canonicaliser(config: Config) -> Callable[[AnyState], Hashable]:
    """A function mapping each state to the representative of its symmetry orbit."""
    classes = symmetry_classes(config)
    if not classes:
        return lambda state: state
    perms: list[dict[str, str]] = []
    for combo in itertools.product(*(itertools.permutations(c) for c in classes)):
        mapping: dict[str, str] = {}
        for original, permuted in zip(classes, combo, strict=True):
            mapping.update(dict(zip(original, permuted, strict=True)))
        if any(k != v for k, v in mapping.items()):
            perms.append(mapping)

    def canonical(state: AnyState) -> Hashable:
        best: AnyState = state
        best_key = repr(state)
        for mapping in perms:
            other = permute(state, mapping)
            key = repr(other)
            if key < best_key:
                best, best_key = other, key
        return best

    return canonical
