"""ITF (Informal Trace Format, the JSON traces of Apalache and Quint) for state sequences.

A state is exported as the property vocabulary's snapshot (``invariants.snapshot``): one
ITF variable per relation (a set of tuples) and per function (a map from argument tuples
to integers), plus the domains ``clients``, ``members`` and ``partitions``. A TLA+ or
Quint specification that names its variables the same way can be imported and checked
against every state and step property (``groupcheck validate --format itf``).

ITF values used: ``{"#bigint": "n"}`` for integers (plain JSON numbers are accepted on
import), ``{"#set": [...]}``, ``{"#tup": [...]}``, ``{"#map": [[k, v], ...]}``. A
partition is the tuple ``<<topic_id, index>>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from invariants.expr import Snapshot
from invariants.snapshot import (
    BINARY_FUNCTIONS,
    FUNCTIONS,
    NULLARY_FUNCTIONS,
    RELATIONS,
    UNARY_RELATIONS,
)

ITF_RELATIONS = RELATIONS
ITF_FUNCTIONS = FUNCTIONS
_UNARY = UNARY_RELATIONS
_NULLARY_FUNCTIONS = NULLARY_FUNCTIONS


class ItfError(ValueError):
    """Malformed ITF input: the message names the state index and the variable."""


def _value(x: object) -> Any:
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return {"#bigint": str(x)}
    if isinstance(x, str):
        return x
    if isinstance(x, tuple):
        return {"#tup": [_value(v) for v in x]}
    raise TypeError(f"no ITF form for {x!r}")


def _set(items: Iterable[object]) -> dict[str, Any]:
    return {"#set": [_value(v) for v in sorted(items, key=repr)]}


def snapshot_to_itf(snap: Snapshot, index: int) -> dict[str, Any]:
    """One ITF state."""
    state: dict[str, Any] = {"#meta": {"index": index}}
    state["clients"] = _set(snap.clients)
    state["members"] = _set(snap.members)
    state["partitions"] = _set(snap.partitions)
    for name in ITF_RELATIONS:
        tuples = snap.relations.get(name, frozenset())
        # Unary relations are sets of elements; others sets of tuples.
        state[name] = _set(t[0] for t in tuples) if name in _UNARY else _set(tuples)
    for name in ITF_FUNCTIONS:
        table = snap.functions.get(name, {})
        if name in _NULLARY_FUNCTIONS:
            state[name] = _value(table.get((), 0))
            continue
        state[name] = {
            "#map": [
                [_value(k if name in BINARY_FUNCTIONS else k[0]), _value(v)]
                for k, v in sorted(table.items(), key=repr)
            ]
        }
    return state


def to_itf(snapshots: Sequence[Snapshot], source: str) -> dict[str, Any]:
    """An ITF trace of a state sequence."""
    return {
        "#meta": {"format": "ITF", "source": source, "description": "groupcheck snapshots"},
        "vars": ["clients", "members", "partitions", *ITF_RELATIONS, *ITF_FUNCTIONS],
        "states": [snapshot_to_itf(s, i) for i, s in enumerate(snapshots)],
    }


def _decode(x: Any, where: str) -> Any:
    if isinstance(x, bool | str):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, dict):
        if "#bigint" in x:
            try:
                return int(x["#bigint"])
            except (TypeError, ValueError):
                raise ItfError(f"{where}: bad #bigint {x['#bigint']!r:.30}") from None
        if "#tup" in x and isinstance(x["#tup"], list):
            return tuple(_decode(v, where) for v in x["#tup"])
        if "#set" in x and isinstance(x["#set"], list):
            return frozenset(_decode(v, where) for v in x["#set"])
        if "#map" in x and isinstance(x["#map"], list):
            out = {}
            for pair in x["#map"]:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ItfError(f"{where}: #map entries must be [key, value] pairs")
                out[_decode(pair[0], where)] = _decode(pair[1], where)
            return out
    raise ItfError(f"{where}: unsupported ITF value {x!r:.60}")


def _as_tuple(v: Any) -> tuple[Any, ...]:
    return v if isinstance(v, tuple) else (v,)


def snapshot_from_itf(state: Mapping[str, Any], index: int) -> Snapshot:
    """Rebuild a snapshot from one ITF state; missing relations are empty."""
    where = f"state {index}"

    def domain(name: str) -> tuple[Any, ...]:
        if name not in state:
            raise ItfError(f"{where}: missing variable {name!r}")
        value = _decode(state[name], f"{where}, {name}")
        if not isinstance(value, frozenset):
            raise ItfError(f"{where}, {name}: expected a set")
        return tuple(sorted(value, key=repr))

    relations: dict[str, frozenset[tuple[object, ...]]] = {}
    for name in ITF_RELATIONS:
        if name in state:
            value = _decode(state[name], f"{where}, {name}")
            if not isinstance(value, frozenset):
                raise ItfError(f"{where}, {name}: expected a set of tuples")
            relations[name] = frozenset((v,) if name in _UNARY else _as_tuple(v) for v in value)
    functions: dict[str, dict[tuple[object, ...], int]] = {}
    for name in ITF_FUNCTIONS:
        if name in state:
            value = _decode(state[name], f"{where}, {name}")
            if name in _NULLARY_FUNCTIONS:
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ItfError(f"{where}, {name}: expected an integer")
                functions[name] = {(): value}
                continue
            if not isinstance(value, dict) or not all(isinstance(v, int) for v in value.values()):
                raise ItfError(f"{where}, {name}: expected a map to integers")
            if name in BINARY_FUNCTIONS:
                if not all(isinstance(k, tuple) and len(k) == 2 for k in value):
                    raise ItfError(f"{where}, {name}: expected pairs as keys")
                functions[name] = dict(value.items())
                continue
            functions[name] = {(k,): v for k, v in value.items()}
    return Snapshot(
        clients=domain("clients"),
        members=domain("members"),
        partitions=domain("partitions"),
        relations=relations,
        functions=functions,
    )


def from_itf(doc: Mapping[str, Any]) -> list[Snapshot]:
    """The snapshots of an ITF trace."""
    states = doc.get("states")
    if not isinstance(states, list):
        raise ItfError("not an ITF trace: no 'states' list")
    return [snapshot_from_itf(s, i) for i, s in enumerate(states)]
