"""The catalogue: the mutants of every family module, collected in order.

Each family module declares its mutants where their functions are: a function with the
signature of the ``model.rules.Rules`` field it replaces, differing from the default in one
rule, under an ``@mutant(...)`` entry naming the bug, the field, the scenario and what is
known of it (``groupcheck.mutants.registry``). docs/bugs.md describes each one, the bug it
stands for and the property that kills it.

* ``consumer`` — the KIP-848 coordinator's and client's rules;
* ``offload`` — KIP-1263 assignor offload;
* ``classic`` — the classic protocol's rules, and offset expiry (KIP-211);
* ``deletion`` — group deletion;
* ``mixed`` — mixed groups (KIP-848 migration).

The catalogue's order — docs/bugs.md's table, the kill matrix — is theirs in that order.
The names below that other modules import from here (scenarios, ``after_assignor``, a few
mutant functions) are re-exported.
"""

from __future__ import annotations

from groupcheck.mutants import classic, consumer, deletion, mixed, offload
from groupcheck.mutants.classic import (
    generation_of_last_assignment,
    highest_generation_claims_only,
    sticky_without_generation,
    validate_stale_claims,
)
from groupcheck.mutants.consumer import after_assignor
from groupcheck.mutants.registry import Mutant, collect
from groupcheck.mutants.scenarios import (
    BASELINE_DEPTH,
    LOSSY_TWO,
    REJOIN,
    THREE_ON_TWO,
    TWO_ON_TWO,
)

__all__ = [
    "BASELINE_DEPTH",
    "FAMILIES",
    "LOSSY_TWO",
    "MUTANTS",
    "REJOIN",
    "THREE_ON_TWO",
    "TWO_ON_TWO",
    "after_assignor",
    "generation_of_last_assignment",
    "highest_generation_claims_only",
    "sticky_without_generation",
    "validate_stale_claims",
]

FAMILIES = (consumer, offload, classic, deletion, mixed)
"""The family modules, in the catalogue's order."""

MUTANTS: dict[str, Mutant] = collect(family.REGISTRY for family in FAMILIES)
"""Every catalogue mutant by name, in the catalogue's order."""
