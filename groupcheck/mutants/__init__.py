"""Mutants: the default rules with exactly one function replaced.

Each mutant re-creates a plausible implementation bug — most of them a historical Kafka
bug (docs/bugs.md) — so that the exploration engines can show they find it. The model
itself carries no bug switches: a mutant is ``dataclasses.replace(DEFAULT_RULES,
<field>=<buggy function>)`` installed in a config. A historical bug that needed more than
one rule wrong at once (KAFKA-13406: an assignor check and the generation a client
reports) replaces further fields too (``Mutant.also``). A mutant holds its function itself, so
a mutant defined anywhere — a user's file (``groupcheck mutants --from FILE``) as well as
the catalogue — can join the kill matrix.

A catalogue mutant is declared at its function, in its family's module (``consumer``,
``offload``, ``classic``, ``deletion``, ``mixed``), with an ``@mutant(...)`` entry
(``registry.Registry.mutant``) holding every fact known of it; ``catalogue`` collects the
families into ``MUTANTS``, and the lists other layers keep of "the mutants with property X"
(the TLA+ counterparts, the variants whose harm ``prove`` does not state) are read off it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from groupcheck.mutants.catalogue import MUTANTS
from groupcheck.mutants.registry import Mutant, Registry

__all__ = [
    "MUTANTS",
    "Mutant",
    "Registry",
    "bmc_depth",
    "bmc_depths",
    "get_mutant",
    "lasso_depths",
    "outside",
    "outside_reasons",
    "survivors",
    "tla_mutants",
    "unstated_harms",
    "variant_commit_kernel",
    "variant_kernel",
]


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


def variant_kernel(name: str | None) -> Callable[..., Any] | None:
    """The kernel of mutant ``name`` (``Mutant.kernel``): what the KIP-848 relation runs for
    its variant; None for no mutant, one outside the catalogue or one not of the kernel."""
    mutant = MUTANTS.get(name or "")
    return mutant.kernel if mutant is not None else None


def variant_commit_kernel(name: str | None) -> Callable[..., Any] | None:
    """The offset-commit kernel of mutant ``name`` (``Mutant.commit_kernel``): what the
    KIP-848 relation's OffsetCommit runs for its variant; None for no mutant, one outside
    the catalogue or one not of the check."""
    mutant = MUTANTS.get(name or "")
    return mutant.commit_kernel if mutant is not None else None


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


def unstated_harms() -> dict[str, str]:
    """The variants whose harm no obligation of ``prove`` states, each with the reason
    (``Mutant.unstated_harm``)."""
    return {m.name: m.unstated_harm for m in MUTANTS.values() if m.unstated_harm}


def tla_mutants(*, agreement: bool = False) -> tuple[str, ...]:
    """The mutants ``tla/KIP848.tla`` switches on with ``Mutant = "<name>"``
    (``Mutant.tla``), in the catalogue's order; with ``agreement``, only those whose
    counterexample ``groupcheck tla mutants`` cross-checks."""
    wanted = ("agreement",) if agreement else ("spec", "agreement")
    return tuple(m.name for m in MUTANTS.values() if m.tla in wanted)


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
