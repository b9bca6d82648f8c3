"""Mutants: the default rules with exactly one function replaced.

Each mutant re-creates a plausible implementation bug — most of them a historical Kafka
bug (docs/bugs.md) — so that the exploration engines can show they find it. The model
itself carries no bug switches: a mutant is ``dataclasses.replace(DEFAULT_RULES,
<field>=<buggy function>)`` installed in a config. A historical bug that needed more than
one rule wrong at once (KAFKA-13406: an assignor check and the generation a client
reports) replaces further fields too (``Mutant.also``). A mutant holds its function itself, so
a mutant defined anywhere — a user's file (``groupcheck mutants --from FILE``) as well as
the catalogue — can join the kill matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from groupcheck.mutants import catalogue
from model.config import Config
from model.rules import DEFAULT_RULES, Rules


@dataclass(frozen=True)
class Mutant:
    """A named one-function change of the rules and the scenario it is hunted in;
    ``expected`` is the property it should violate (None: any)."""

    name: str
    summary: str
    bug: str
    field: str
    config: Config
    function: Callable[..., Any]
    expected: str | None = None
    source: str | None = None
    """Where the mutant was defined: None for the catalogue, else the file."""
    also: tuple[tuple[str, Callable[..., Any]], ...] = ()
    """Further (Rules field, function) pairs replaced together with ``field``."""
    killed_by: str = ""
    """The property that kills the mutant on its scenario, the one breadth-first search
    reports with the shortest counterexample (docs/bugs.md, "Killed by"), or the witness
    whose loss kills it; empty for a known survivor or a user's mutant."""
    bmc_depth: int | None = None
    """The steps of the shortest path BMC finds of the mutant's symbolic variant on its
    scenario (the coordinator's steps; a client variant's with the client layer): ``explore
    --engine bmc --mutant M``'s depth without ``--depth``, which
    tests/groupcheck/symbolic/test_bmc_mutants.py, test_classic_bmc.py and test_mixed_relation.py
    find it at. None: no safety variant BMC finds by default (a lasso, a survivor, a variant outside
    the relations, a user's mutant). Every symbolic variant is named as its mutant
    (``transition.VARIANTS``, ``classic_transition.VARIANTS``, ``mixed_transition.VARIANTS``, the
    client layers')."""
    lasso_depth: int | None = None
    """For a mutant whose kill is Convergence only: the steps of the shortest lasso BMC
    finds of its variant on its scenario (``bmc_lasso.LASSO_VARIANTS``,
    ``classic_lasso.LASSO_VARIANTS``), ``explore --engine bmc --mutant M``'s depth without
    ``--depth`` for the consumer protocol's (tests/groupcheck/symbolic/test_bmc_lasso.py,
    test_classic_lasso.py)."""
    outside: str = ""
    """Why the symbolic relations have no variant of the mutant: what of its rule or of the
    property that kills it they lack (docs/invariants.md, "Not covered yet"); empty for a
    catalogue mutant with a variant. ``prove --variant`` and ``explore --engine bmc``
    refuse such a mutant with this reason."""
    survivor: str = ""
    """Why no property kills the mutant on its scenario (a known survivor,
    tests/quality/test_mutants.py ``test_a_known_survivor_survives``); empty for one that is
    killed."""

    @property
    def baseline_depth(self) -> int | None:
        """The depth to which the scenario's default rules are checked clean
        (``catalogue.BASELINE_DEPTH``); None for a scenario outside the catalogue's."""
        return catalogue.BASELINE_DEPTH.get(self.config.name)

    @property
    def fields(self) -> tuple[str, ...]:
        """Every Rules field the mutant replaces, ``field`` first."""
        return (self.field, *(name for name, _ in self.also))

    @property
    def rules(self) -> Rules:
        return replace(DEFAULT_RULES, **{self.field: self.function, **dict(self.also)})

    def mutated_config(self) -> Config:
        """The scenario config with this mutant's rules installed."""
        return replace(self.config, rules=self.rules, name=f"{self.config.name}+{self.name}")


def _catalogue_mutant(
    name: str, summary: str, bug: str, field: str, config: Config, **facts: Any
) -> Mutant:
    also = tuple(
        (other, getattr(catalogue, function)) for other, function in catalogue.ALSO.get(name, ())
    )
    function = getattr(catalogue, name.replace("-", "_"))
    return Mutant(name, summary, bug, field, config, function, also=also, **facts)


MUTANTS: dict[str, Mutant] = {m.name: m for m in catalogue.build(_catalogue_mutant)}


def bmc_depth(name: str | None) -> int | None:
    """The catalogue's BMC depth of mutant ``name`` (``Mutant.bmc_depth``); None for no
    mutant, one outside the catalogue or one without a depth."""
    mutant = MUTANTS.get(name or "")
    return mutant.bmc_depth if mutant is not None else None


def bmc_depths(names: Iterable[str]) -> dict[str, int]:
    """Per mutant of ``names`` with a BMC depth, that depth: a symbolic family's view of
    the catalogue (``names`` its variants)."""
    found = (MUTANTS[n] for n in names if n in MUTANTS)
    return {m.name: m.bmc_depth for m in found if m.bmc_depth is not None}


def lasso_depths(names: Iterable[str]) -> dict[str, int]:
    """Per mutant of ``names`` with a lasso depth, that depth (``Mutant.lasso_depth``)."""
    found = (MUTANTS[n] for n in names if n in MUTANTS)
    return {m.name: m.lasso_depth for m in found if m.lasso_depth is not None}


def outside(name: str | None) -> str:
    """Why mutant ``name`` has no symbolic variant (``Mutant.outside``); empty for none."""
    mutant = MUTANTS.get(name or "")
    return mutant.outside if mutant is not None else ""


def outside_reasons() -> dict[str, str]:
    """The catalogue mutants with no symbolic variant, each with the reason."""
    return {m.name: m.outside for m in MUTANTS.values() if m.outside}


def survivors() -> dict[str, str]:
    """The known survivors: the mutants no property kills on their scenario, with the
    reason (``Mutant.survivor``)."""
    return {m.name: m.survivor for m in MUTANTS.values() if m.survivor}


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``; a ``KeyError`` naming the known ones otherwise."""
    try:
        return MUTANTS[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r}; known: {', '.join(MUTANTS)}") from None
