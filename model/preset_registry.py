"""The preset registry (issue 39): every named ``Config`` registers itself where it is
declared, with :func:`register`, beside its protocol family — the consumer protocol's
(KIP-848) and the presets shared by the families in ``model/presets.py``, the classic
protocol's in ``model/classic/presets.py``, the mixed groups' (KIP-848 "Online
Migration") in ``model/migration/presets.py``.

``model/presets.py`` is the collection point: it imports every family's presets module,
so its ``PRESETS`` (this module's :data:`LISTED`) and ``BENCHMARK_PRESETS``
(:data:`BENCHMARKS`) hold every preset once it is imported. This module imports none of
the declaring modules, so they import it without an import cycle
(``model.family`` registers the protocol families the same way).

A preset's :data:`Kind` fixes its place: :data:`LISTED` lists the kinds in the order of
:data:`LISTED_KINDS` and, within a kind, in the order of declaration — the same order
whichever family's module is imported first.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from model.config import Config

Kind = Literal[
    "example",
    "scenario",
    "classic",
    "classic-scenario",
    "offsets",
    "deletion",
    "migration",
    "benchmark",
]
"""What a preset is for: one of the README's examples of the consumer protocol, a mutant
scenario of it (groupcheck/mutants/catalogue.py), a classic-protocol preset or mutant
scenario, an offset-expiry (KIP-211) or group-deletion preset of either protocol, a
mixed-group preset, or a benchmark (docs/benchmarks.md)."""

LISTED_KINDS: tuple[Kind, ...] = (
    "example",
    "scenario",
    "classic",
    "classic-scenario",
    "offsets",
    "deletion",
    "migration",
)
"""The kinds :data:`LISTED` holds, in its order; a benchmark is left out (an exhaustive
search of ``MUT2_LOSS4`` visits over two million states), and ``preset`` still names it."""

KINDS: tuple[Kind, ...] = (*LISTED_KINDS, "benchmark")
"""Every kind."""

_KIND_OF: dict[str, Kind] = {}
_BY_KIND: dict[Kind, dict[str, Config]] = {kind: {} for kind in KINDS}
_LISTED: dict[str, Config] = {}

LISTED: Mapping[str, Config] = MappingProxyType(_LISTED)
"""Every registered preset but the benchmarks, by name (read-only; ``model.presets.PRESETS``)."""

BENCHMARKS: Mapping[str, Config] = MappingProxyType(_BY_KIND["benchmark"])
"""The registered benchmarks, by name (read-only; ``model.presets.BENCHMARK_PRESETS``)."""


def register(config: Config, *, kind: Kind) -> Config:
    """Register ``config`` as a preset of ``kind`` under its ``name`` and return it.

    A name is upper-case (``model.presets.preset`` looks a name up in upper case) and
    names one preset, benchmarks included: a second preset of a registered name is a
    ``ValueError`` naming both kinds, and nothing is registered."""
    name = config.name
    if kind not in KINDS:
        raise ValueError(f"preset {name!r}: unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    if not name or name != name.upper():
        raise ValueError(f"preset name {name!r} is not upper-case")
    first = _KIND_OF.get(name)
    if first is not None:
        raise ValueError(
            f"preset {name!r} is declared twice (of kind {first!r}, then of kind {kind!r}): "
            "a preset name names one preset"
        )
    _KIND_OF[name] = kind
    _BY_KIND[kind][name] = config
    if kind in LISTED_KINDS:
        ordered = {n: c for k in LISTED_KINDS for n, c in _BY_KIND[k].items()}
        _LISTED.clear()
        _LISTED.update(ordered)
    return config


def of_kind(kind: Kind) -> tuple[Config, ...]:
    """The presets of ``kind`` registered so far, in the order of declaration."""
    return tuple(_BY_KIND[kind].values())
