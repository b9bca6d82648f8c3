"""Mutants: the default rules with exactly one function replaced.

Each mutant re-creates a plausible implementation bug — most of them a historical Kafka
bug, listed with its JIRA issue in docs/bugs.md — so that the exploration engines can show
they find it. The
model itself carries no bug switches: a mutant is ``dataclasses.replace(DEFAULT_RULES,
<field>=<buggy function>)`` installed in a config.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupcheck.mutants import catalogue
from model.config import Config
from model.rules import DEFAULT_RULES, Rules


@dataclass(frozen=True)
class Mutant:
    """A named one-function change of the rules and the scenario it is hunted in."""

    name: str
    summary: str
    bug: str
    field: str
    config: Config

    @property
    def rules(self) -> Rules:
        return replace(DEFAULT_RULES, **{self.field: getattr(catalogue, _impl(self.name))})

    def mutated_config(self) -> Config:
        """The scenario config with this mutant's rules installed."""
        return replace(self.config, rules=self.rules, name=f"{self.config.name}+{self.name}")


def _impl(name: str) -> str:
    return name.replace("-", "_")


MUTANTS: dict[str, Mutant] = {m.name: m for m in catalogue.build(Mutant)}


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``; a ``KeyError`` naming the known ones otherwise."""
    try:
        return MUTANTS[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r}; known: {', '.join(MUTANTS)}") from None
