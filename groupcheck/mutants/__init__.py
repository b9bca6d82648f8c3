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

from collections.abc import Callable
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


def _catalogue_mutant(name: str, summary: str, bug: str, field: str, config: Config) -> Mutant:
    also = tuple(
        (other, getattr(catalogue, function)) for other, function in catalogue.ALSO.get(name, ())
    )
    return Mutant(
        name, summary, bug, field, config, getattr(catalogue, name.replace("-", "_")), also=also
    )


MUTANTS: dict[str, Mutant] = {m.name: m for m in catalogue.build(_catalogue_mutant)}


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``; a ``KeyError`` naming the known ones otherwise."""
    try:
        return MUTANTS[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r}; known: {', '.join(MUTANTS)}") from None
