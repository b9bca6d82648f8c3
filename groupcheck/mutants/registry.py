"""The ``Mutant`` record and the registries the catalogue's families declare their mutants
in: a mutant's entry — its name, bug, Rules field, scenario and what is known of it — is a
decorator on its function (``@mutant(...)``, ``Registry.mutant``), so adding a mutant is one
edit beside its function; ``groupcheck.mutants.catalogue`` collects the families'
registries, in order, into ``MUTANTS``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from groupcheck.mutants.scenarios import BASELINE_DEPTH
from model.config import Config
from model.rules import DEFAULT_RULES, Rules

Tla = Literal["", "spec", "agreement"]
"""A mutant's TLA+ counterpart: none; ``spec`` — ``tla/KIP848.tla`` switches the same rule
on with ``Mutant = "<name>"`` (``groupcheck.tla.configs.SPEC_MUTANTS``); ``agreement`` — that,
and its Python counterexample violates a safety property, so ``groupcheck tla mutants``
cross-checks it (``groupcheck.tla.crosscheck.TLA_MUTANTS``)."""


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
    unstated_harm: str = ""
    """For a variant whose harm no obligation of ``prove`` states: what it breaks and why
    the proof does not see it. ``prove --variant`` refuses it with this reason rather than
    report it proved (``groupcheck.symbolic.capabilities.UNSTATED_HARM``,
    docs/invariants.md)."""
    tla: Tla = ""
    """Its TLA+ counterpart in ``tla/KIP848.tla`` (:data:`Tla`)."""

    @property
    def baseline_depth(self) -> int | None:
        """The depth to which the scenario's default rules are checked clean
        (``scenarios.BASELINE_DEPTH``); None for a scenario outside the catalogue's."""
        return BASELINE_DEPTH.get(self.config.name)

    @property
    def fields(self) -> tuple[str, ...]:
        """Every Rules field the mutant replaces, ``field`` first."""
        return (self.field, *(name for name, _ in self.also))

    @property
    def kernel(self) -> Callable[..., Any] | None:
        """The reconciliation kernel of a mutant of ``Rules.reconcile`` written as one
        (``model.consumer.reconcile.kernel_rule``): its symbolic variant, which the KIP-848 relation
        runs as it runs a user's ``--rules`` kernel (``transition.Options.kernel``,
        ``KERNEL_VARIANTS``); None for any other mutant."""
        if self.field != "reconcile":
            return None
        kernel: Callable[..., Any] | None = getattr(self.function, "kernel", None)
        return kernel

    @property
    def commit_kernel(self) -> Callable[..., Any] | None:
        """The offset-commit check of a mutant of ``Rules.validate_offset_commit`` written
        as a kernel (``model.consumer.coordinator.commit_kernel_rule``): its symbolic variant, which
        the KIP-848 relation's OffsetCommit runs (``transition.Options.commit_kernel``,
        ``COMMIT_KERNEL_VARIANTS``); None for any other mutant."""
        if self.field != "validate_offset_commit":
            return None
        kernel: Callable[..., Any] | None = getattr(self.function, "kernel", None)
        return kernel

    @property
    def rules(self) -> Rules:
        return replace(DEFAULT_RULES, **{self.field: self.function, **dict(self.also)})

    def mutated_config(self) -> Config:
        """The scenario config with this mutant's rules installed."""
        return replace(self.config, rules=self.rules, name=f"{self.config.name}+{self.name}")


F = TypeVar("F", bound=Callable[..., Any])


class Registry:
    """The mutants one family module declares, in the order it declares them."""

    def __init__(self) -> None:
        self._mutants: dict[str, Mutant] = {}

    def add(self, mutant: Mutant) -> Mutant:
        """Register ``mutant``; a ``ValueError`` if its name is taken."""
        if mutant.name in self._mutants:
            raise ValueError(f"mutant {mutant.name!r} is declared twice")
        self._mutants[mutant.name] = mutant
        return mutant

    def mutant(
        self,
        *,
        name: str,
        summary: str,
        bug: str,
        field: str,
        config: Config,
        also: tuple[tuple[str, Callable[..., Any]], ...] = (),
        killed_by: str = "",
        bmc_depth: int | None = None,
        lasso_depth: int | None = None,
        outside: str = "",
        survivor: str = "",
        unstated_harm: str = "",
        tla: Tla = "",
    ) -> Callable[[F], F]:
        """The decorator declaring its function the catalogue mutant ``name``, which
        replaces the Rules ``field`` (and each field of ``also`` with its function) in
        ``config``, with what is known of it (``Mutant``'s fields of the same names). The
        function is named after the mutant (``-`` → ``_``) and is returned unchanged."""

        def declare(function: F) -> F:
            if function.__name__ != name.replace("-", "_"):
                raise ValueError(
                    f"mutant {name!r}: its function is named {function.__name__!r}, "
                    f"not {name.replace('-', '_')!r}"
                )
            self.add(
                Mutant(
                    name=name,
                    summary=summary,
                    bug=bug,
                    field=field,
                    config=config,
                    function=function,
                    also=also,
                    killed_by=killed_by,
                    bmc_depth=bmc_depth,
                    lasso_depth=lasso_depth,
                    outside=outside,
                    survivor=survivor,
                    unstated_harm=unstated_harm,
                    tla=tla,
                )
            )
            return function

        return declare

    def mutants(self) -> dict[str, Mutant]:
        """Name → mutant, in declaration order."""
        return dict(self._mutants)


def collect(registries: Iterable[Registry]) -> dict[str, Mutant]:
    """The mutants of ``registries``, in their order and each in its declaration order; a
    ``ValueError`` if two declare one name."""
    out = Registry()
    for registry in registries:
        for m in registry.mutants().values():
            out.add(m)
    return out.mutants()
