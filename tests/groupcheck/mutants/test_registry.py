"""A mutant is declared at its function (``@mutant(...)``, groupcheck/mutants/registry.py)
in its family's module, and the catalogue collects the families' registries: a name
declared twice fails, and the lists other layers keep of "the mutants with property X"
are read off the entries."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from groupcheck.mutants import MUTANTS, catalogue, tla_mutants, unstated_harms
from groupcheck.mutants.registry import Registry, collect
from model.presets import MUT2

ROOT = Path(__file__).resolve().parents[3]


def _declare(registry: Registry, name: str) -> None:
    def function(*args: Any) -> Any:
        return None

    function.__name__ = name.replace("-", "_")
    registry.mutant(name=name, summary="s", bug="b", field="reconcile", config=MUT2)(function)


def test_a_name_declared_twice_in_a_family_fails() -> None:
    registry = Registry()
    _declare(registry, "twice")
    with pytest.raises(ValueError, match="'twice' is declared twice"):
        _declare(registry, "twice")
    assert list(registry.mutants()) == ["twice"]


def test_a_name_declared_in_two_families_fails_when_collected() -> None:
    first, second = Registry(), Registry()
    _declare(first, "twice")
    _declare(second, "twice")
    with pytest.raises(ValueError, match="'twice' is declared twice"):
        collect([first, second])


def test_the_function_is_named_after_the_mutant() -> None:
    def other(*args: Any) -> Any:
        return None

    with pytest.raises(ValueError, match="named 'other'"):
        Registry().mutant(name="some-mutant", summary="s", bug="b", field="f", config=MUT2)(other)


def test_the_catalogue_is_the_families_in_order() -> None:
    collected = [n for family in catalogue.FAMILIES for n in family.REGISTRY.mutants()]
    assert collected == list(MUTANTS)
    for family in catalogue.FAMILIES:
        for m in family.REGISTRY.mutants().values():
            assert m.function.__module__ == family.__name__
            assert m.function.__name__ == m.name.replace("-", "_")
            assert m.source is None


def test_a_multi_field_mutant_names_its_further_functions() -> None:
    """``also``: the further (Rules field, function) pairs, each function declared in the
    mutant's family module beside the mutant's own."""
    several = [m for m in MUTANTS.values() if m.also]
    assert several
    for m in several:
        assert m.fields == (m.field, *(f for f, _ in m.also))
        for _, function in m.also:
            assert function.__module__ == m.function.__module__


def test_the_spec_switches_on_exactly_the_entries_with_a_tla_counterpart() -> None:
    spec = (ROOT / "tla" / "KIP848.tla").read_text(encoding="utf-8")
    in_spec = set(re.findall(r'Mutant = "([\w-]+)"', spec))
    assert in_spec == set(tla_mutants())
    assert set(tla_mutants(agreement=True)) < set(tla_mutants())
    assert all(MUTANTS[n].tla == "agreement" for n in tla_mutants(agreement=True))


def test_unstated_harm_is_read_off_the_entries() -> None:
    from groupcheck.symbolic.capabilities import UNSTATED_HARM

    assert unstated_harms() == UNSTATED_HARM
    assert set(UNSTATED_HARM) == {"install-before-static-replacement", "reject-epoch-zero-rejoin"}
