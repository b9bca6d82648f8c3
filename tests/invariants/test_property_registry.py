"""The property registry (issue 39): every property and witness is registered where it is
declared, in declaration order; the tuples the checkers read are views of it, and a name
declared twice is refused (``invariants/registry.py``)."""

from __future__ import annotations

import pytest

from invariants.check import all_properties
from invariants.liveness import (
    CLASSIC_WITNESSES,
    CONVERGENCE,
    REBALANCE_TIME,
    WITNESS_REGISTRY,
    WITNESSES,
    _witness,
)
from invariants.properties import (
    NO_DOUBLE_CLIENT_OWNERSHIP,
    PROPERTIES,
    STATE_PROPERTIES,
    STEP_PROPERTIES,
    Kind,
    Property,
    _prop,
    declare,
)
from invariants.registry import Registry


def test_a_registry_keeps_declaration_order_and_refuses_a_second_name() -> None:
    registry: Registry[int] = Registry("number")
    assert registry.register("b", 2) == 2
    registry.register("a", 1)
    registry.register("c", 3)
    with pytest.raises(ValueError, match="number 'a' is declared twice"):
        registry.register("a", 4)
    assert list(registry) == [2, 1, 3]
    assert registry.names() == ("b", "a", "c")
    assert registry.where(lambda n: n != 1) == (2, 3)
    assert registry.named("a") == 1
    assert "c" in registry
    assert "d" not in registry
    assert len(registry) == 3
    with pytest.raises(KeyError, match="no number 'd'; known: b, a, c"):
        registry.named("d")


def test_a_property_declared_twice_is_refused_and_the_registry_is_unchanged() -> None:
    before = PROPERTIES.names()
    name = NO_DOUBLE_CLIENT_OWNERSHIP.name
    with pytest.raises(ValueError, match=f"property '{name}' is declared twice"):
        declare(Property(name, Kind.ALWAYS_STATE, "", ""))
    with pytest.raises(ValueError, match=f"property '{name}' is declared twice"):
        _prop(name, Kind.ALWAYS_STEP, "", "", NO_DOUBLE_CLIENT_OWNERSHIP.expr)  # type: ignore[arg-type]
    assert PROPERTIES.names() == before
    assert PROPERTIES.named(name) is NO_DOUBLE_CLIENT_OWNERSHIP


def test_a_witness_named_like_a_property_or_witness_is_refused() -> None:
    before, witnesses = PROPERTIES.names(), WITNESS_REGISTRY.names()
    for name in (WITNESSES[0].prop.name, CONVERGENCE.name, STEP_PROPERTIES[0].name):
        with pytest.raises(ValueError, match=f"property '{name}' is declared twice"):
            _witness(name, "", "", lambda pre, action, post: False)
    assert (PROPERTIES.names(), WITNESS_REGISTRY.names()) == (before, witnesses)


def test_the_views_are_the_registry_in_declaration_order() -> None:
    registered = tuple(PROPERTIES)
    assert tuple(p for p in registered if p.kind is Kind.ALWAYS_STATE) == STATE_PROPERTIES
    assert tuple(p for p in registered if p.kind is Kind.ALWAYS_STEP) == STEP_PROPERTIES
    assert tuple(p for p in registered if p.kind is Kind.EVENTUALLY) == (
        CONVERGENCE,
        REBALANCE_TIME,
    )
    assert tuple(WITNESS_REGISTRY) == WITNESSES
    assert tuple(w.prop for w in WITNESSES) == tuple(
        p for p in registered if p.kind is Kind.SOMETIMES
    )
    assert all(PROPERTIES.named(w.prop.name) is w.prop for w in WITNESSES)
    assert (
        tuple(w for w in WITNESSES if w.prop.families == frozenset({"classic"}))
        == CLASSIC_WITNESSES
    )
    # every property is checked, listed and documented in the order it is declared
    assert tuple(all_properties()) == registered


def test_every_state_and_step_property_has_an_expression_and_no_witness_has_one() -> None:
    for p in PROPERTIES:
        checked = p.kind in (Kind.ALWAYS_STATE, Kind.ALWAYS_STEP)
        assert (p.expr is not None) == checked, p.name
        assert (p.compiled is not None) == checked, p.name
        assert (p.witness_of is not None) == (p.kind is Kind.SOMETIMES), p.name
