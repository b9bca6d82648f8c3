"""The properties' facets of each protocol family (issue 39), registered where they are
written and keyed by ``model.family.ProtocolFamily.name``: ``model/`` cannot import them.

A :class:`FacetTable` holds one facet per family: ``invariants.snapshot.SNAPSHOT_KEYS``
(how a state is read in the snapshot vocabulary), ``invariants.snapshot.VOCABULARIES``
(how a snapshot key is projected, by the family of its group), and
``invariants.liveness.CONVERGED`` (Convergence's "converged"). A layer asks its table
instead of branching on a state's type or ``Config.protocol``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from model.config import Config
from model.family import FAMILIES, ProtocolFamily, family_of, family_of_state, load_families

T = TypeVar("T")


class FacetTable(Generic[T]):
    """One facet (``what``) of each protocol family, by family name. ``modules`` are the
    modules that register a facet in the table (each on import): imported the first time
    the table is asked for a facet it does not hold, so the module that declares a table
    imports none of them (no import cycle)."""

    __slots__ = ("_by_name", "modules", "what")

    def __init__(self, what: str, modules: tuple[str, ...]) -> None:
        self.what = what
        self.modules = modules
        self._by_name: dict[str, T] = {}

    def load(self) -> None:
        """Import every module of ``modules``."""
        for module in self.modules:
            importlib.import_module(module)

    def register(self, family: str, facet: T) -> T:
        """Register ``family``'s facet (once) and return it."""
        if family in self._by_name:
            raise ValueError(f"{self.what} of protocol family {family!r} is registered twice")
        self._by_name[family] = facet
        return facet

    def named(self, family: str) -> T:
        """The facet of the family named ``family``."""
        facet = self._by_name.get(family)
        if facet is None:
            self.load()
            facet = self._by_name.get(family)
        if facet is None:
            known = sorted(load_families())
            raise LookupError(
                f"no {self.what} registered for protocol family {family!r} "
                f"(families: {', '.join(known)}; registered: {', '.join(sorted(self._by_name))})"
            )
        return facet

    def get(self, family: str) -> T | None:
        """The facet of the family named ``family``, or None when it registers none (a
        facet that only some families have, and whose absence is no error)."""
        if family not in self._by_name:
            self.load()
        return self._by_name.get(family)

    def of(self, family: ProtocolFamily) -> T:
        """The facet of ``family``."""
        return self.named(family.name)

    def of_config(self, config: Config) -> T:
        """The facet of ``config``'s family (resolve it once per run, not per state)."""
        return self.named(family_of(config).name)

    def of_state(self, state: object) -> T:
        """The facet of ``state``'s family."""
        return self.named(family_of_state(state).name)

    def names(self) -> frozenset[str]:
        """The families with a registered facet."""
        self.load()
        return frozenset(self._by_name)


def missing(table: FacetTable[object]) -> list[str]:
    """The registered protocol families ``table`` holds no facet for."""
    return sorted(set(load_families()) - table.names())


CONVERGED: FacetTable[Callable[[Any], bool]] = FacetTable(
    "converged (invariants.liveness)", ("invariants.liveness", "invariants.mixed_liveness")
)
"""Convergence's "converged" of each family: ``invariants.liveness.consumer_converged``,
``invariants.liveness.classic_converged``, ``invariants.mixed_liveness.mixed_converged``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotFacet:
    """How a family's states are read by the properties (``invariants.snapshot``):
    ``key`` the part of a state its snapshot is a function of, ``key_after`` the key of a
    successor from its predecessor's (a family may reuse what a step left alone), and
    ``project`` the snapshot of a key whose group is of this family."""

    key: Callable[[Any], Any]
    key_after: Callable[[Any, Any, Any], Any]
    project: Callable[[Any], Any]


def key_after_by_reading(key: Callable[[Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """``SnapshotFacet.key_after`` that reads the successor's key afresh."""

    def key_after(pre_key: Any, pre: Any, post: Any) -> Any:
        return key(post)

    return key_after


SNAPSHOTS: FacetTable[SnapshotFacet] = FacetTable(
    "snapshot facet (invariants.snapshot)",
    ("invariants.snapshot", "invariants.classic_snapshot", "invariants.mixed_snapshot"),
)
"""The snapshot vocabulary's reading of each family: ``invariants.snapshot`` (consumer),
``invariants.classic_snapshot``, ``invariants.mixed_snapshot``."""

__all__ = ["CONVERGED", "FAMILIES", "SNAPSHOTS", "FacetTable", "SnapshotFacet", "missing"]
