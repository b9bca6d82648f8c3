"""The Python and Z3 readings of every state and step property agree.

A property is defined once (its ``expr``); ``Property.holds`` is the Python reading and
``invariants.z3.check.z3_holds`` the Z3 reading. They are compared on random snapshots
(violating ones included, and counted), on real model states from seeded random walks
over every preset, and on the structures Z3 itself builds with ``find_violation``.

(No ``__init__.py`` in this directory on purpose: pytest would import it as a package
called ``z3`` and shadow z3-solver.)
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping
from typing import TypeVar

import pytest
import z3
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from groupcheck.explore.hypothesis_engine import SUPPRESSED_HEALTH_CHECKS
from invariants.check import Verdict
from invariants.expr import (
    FUNCTION_DEFAULT,
    And,
    Cmp,
    Const,
    Exists,
    Fn,
    ForAll,
    Implies,
    Not,
    Rel,
    Same,
    Snapshot,
    Sort,
    StepSnapshot,
    Structure,
    Var,
    compile_expr,
)
from invariants.properties import (
    ASSIGNMENT_EPOCH_BOUNDED,
    MEMBER_EPOCH_BOUNDED,
    NO_DOUBLE_CLIENT_OWNERSHIP,
    NO_DOUBLE_MEMBER_ASSIGNMENT,
    STATE_PROPERTIES,
    STATUS_STABLE,
    STEP_PROPERTIES,
    Property,
)
from invariants.snapshot import project
from invariants.z3.check import (
    Disagreement,
    Z3Unknown,
    check_structure,
    find_structure,
    find_violation,
    recheck,
    z3_holds,
)
from invariants.z3.encode import (
    Domains,
    SymbolicStructure,
    assert_snapshot,
    decode,
    encode,
    restrict,
    signature,
)
from model import system
from model.presets import PRESETS

ALL_PROPERTIES = STATE_PROPERTIES + STEP_PROPERTIES

CLIENTS = ("c0", "c1", "c2")
MEMBERS = ("m0", "m1", "m2", "m3")
PARTITIONS = (("t0", 0), ("t0", 1), ("t1", 0), ("t1", 2))
GHOSTS: dict[Sort, object] = {"client": "ghost", "member": "m-ghost", "partition": ("gone", 9)}
"""Elements outside every domain: tuples mentioning them must be ignored by both readings."""


def _vocabulary(props: tuple[Property, ...]) -> tuple[dict[str, tuple[Sort, ...]], ...]:
    """Relation and function names (with argument sorts) the properties use, ignoring
    ``when``: every relation and function name used by the catalogue."""
    sig = signature(*(p.expr for p in props if p.expr is not None))
    rels = {name: sorts for (kind, name, _), sorts in sig.items() if kind == "rel"}
    fns = {name: sorts for (kind, name, _), sorts in sig.items() if kind == "fn"}
    return rels, fns


STATE_RELS, STATE_FNS = _vocabulary(STATE_PROPERTIES)
STEP_RELS, STEP_FNS = _vocabulary(STEP_PROPERTIES)


# --------------------------------------------------------------------------- strategies


@st.composite
def domains(draw: st.DrawFn) -> Domains:
    return Domains(
        clients=tuple(
            draw(st.lists(st.sampled_from(CLIENTS), min_size=1, max_size=3, unique=True))
        ),
        members=tuple(
            draw(st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=4, unique=True))
        ),
        partitions=tuple(
            draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=4, unique=True))
        ),
    )


def _instances(d: Domains, sorts: tuple[Sort, ...]) -> list[tuple[object, ...]]:
    return list(itertools.product(*(d.domain(s) for s in sorts)))


def _ghost(sorts: tuple[Sort, ...]) -> tuple[object, ...]:
    return tuple(GHOSTS[s] for s in sorts)


SMALL_INTS = st.integers(-3, 4)
"""Small epochs, the statuses 0..3, the -2 of a static member's temporary leave."""


def _ints(pool: list[int]) -> st.SearchStrategy[int | None]:
    return st.one_of(
        st.none(),  # not listed: the function takes FUNCTION_DEFAULT
        st.sampled_from(pool),
        st.just(FUNCTION_DEFAULT),  # listed explicitly with the default value
    )


@st.composite
def snapshots(
    draw: st.DrawFn,
    rels: Mapping[str, tuple[Sort, ...]] = STATE_RELS,
    fns: Mapping[str, tuple[Sort, ...]] = STATE_FNS,
    base: Snapshot | None = None,
) -> Snapshot:
    """A random snapshot over random domains. With ``base``, often a small perturbation
    of it (so step properties see "unchanged" as well as "changed")."""
    d = Domains.of(base) if base is not None and draw(st.booleans()) else draw(domains())
    relations: dict[str, frozenset[tuple[object, ...]]] = {}
    for name, sorts in rels.items():
        inst = _instances(d, sorts)
        flips = draw(st.sets(st.sampled_from(inst))) if inst else set()
        old = base.relations.get(name, frozenset()) if base is not None else frozenset()
        tuples = set(old) ^ flips if base is not None and draw(st.booleans()) else flips
        if draw(st.integers(0, 9)) == 0:
            tuples.add(_ghost(sorts))
        relations[name] = frozenset(tuples)
    functions: dict[str, dict[tuple[object, ...], int]] = {}
    # Values come from a small per-snapshot pool so that equalities between functions
    # (a fresh target: group epoch == assignment epoch; an unchanged incarnation) are common.
    ints = _ints(draw(st.lists(SMALL_INTS, min_size=1, max_size=4)))
    for name, sorts in fns.items():
        old_values = base.functions.get(name, {}) if base is not None else {}
        keep = base is not None and draw(st.booleans())
        table: dict[tuple[object, ...], int] = {}
        for args in _instances(d, sorts):
            if keep and args in old_values:
                table[args] = old_values[args]
                continue
            value = draw(ints)
            if value is not None:
                table[args] = value
        if draw(st.integers(0, 9)) == 0:
            table[_ghost(sorts)] = draw(SMALL_INTS)
        functions[name] = table
    return Snapshot(d.clients, d.members, d.partitions, relations, functions)


@st.composite
def step_snapshots(draw: st.DrawFn) -> StepSnapshot:
    pre = draw(snapshots(STEP_RELS, STEP_FNS))
    post = draw(snapshots(STEP_RELS, STEP_FNS, base=pre))
    return StepSnapshot(pre, post)


SETTINGS = settings(
    # Random structures of a whole group are large by design.
    suppress_health_check=[*SUPPRESSED_HEALTH_CHECKS, HealthCheck.data_too_large],
)


def _agree(prop: Property, s: Structure, seen: Counter[tuple[str, bool]]) -> None:
    python = prop.holds(s)
    assert z3_holds(prop, s) == python, f"{prop.name}: Python {python}, Z3 {not python}"
    seen[(prop.name, python)] += 1
    event(f"{prop.name}: {'holds' if python else 'violated'}")


def _both_outcomes(props: tuple[Property, ...], seen: Counter[tuple[str, bool]]) -> None:
    """The random structures were not vacuous: each property was seen holding and
    violated."""
    for prop in props:
        assert seen[(prop.name, False)] > 0, f"no violating example generated for {prop.name}"
        assert seen[(prop.name, True)] > 0, f"no satisfying example generated for {prop.name}"


# --------------------------------------------------------------------------- random structures


STABLE_BUT_BEHIND = Snapshot(
    CLIENTS[:1],
    MEMBERS[:1],
    PARTITIONS[:1],
    {"is_member": frozenset({(MEMBERS[0],)})},
    {
        "group_status": {(): 3},
        "group_epoch": {(): 2},
        "assignment_epoch": {(): 2},
        "member_epoch": {(MEMBERS[0],): 1},
    },
)
"""A STABLE group whose member lags behind the assignment epoch: violates
``GroupStatusConsistent.Stable`` whatever the random draws are."""

TWO_RUNS_IN_FLIGHT = Snapshot(
    CLIENTS[:1], MEMBERS[:1], PARTITIONS[:1], {}, {"assignor_runs": {(): 2}}
)
"""Two assignor runs in flight: violates ``AssignorRunsInFlight.AtMostOne`` whatever the
random draws are (random function values rarely exceed 1)."""

ASSIGNOR_OUTDATED = Snapshot(
    CLIENTS[:1], MEMBERS[:1], PARTITIONS[:1], {}, {"assignor_outdated": {(): 1}}
)
"""A current target computed by another assignor than the members ask for: violates
``TargetByPreferredAssignor``."""

INDEX_CONSISTENT = Snapshot(
    CLIENTS[:1],
    MEMBERS[:2],
    PARTITIONS[:1],
    {"is_member": frozenset({(MEMBERS[0],), (MEMBERS[1],)}), "indexed": frozenset({(MEMBERS[0],)})},
    {
        "instance": {(MEMBERS[0],): 1, (MEMBERS[1],): 0},
        "index_entries": {(MEMBERS[0],): 1, (MEMBERS[1],): 0},
    },
)
"""A static member indexed under its instance id, once, and a dynamic one no entry names:
satisfies ``StaticIndexConsistent`` (random draws rarely give every member the count its
``indexed`` says)."""

OWNS_UNHELD = Snapshot(
    CLIENTS[:1],
    MEMBERS[:1],
    PARTITIONS[:1],
    {
        "client_owns": frozenset({(CLIENTS[0], PARTITIONS[0])}),
        "client_synced": frozenset({(CLIENTS[0],)}),
        "client_member": frozenset({(CLIENTS[0], MEMBERS[0])}),
        "is_member": frozenset({(MEMBERS[0],)}),
    },
    {},
)
"""A synced client consuming a partition its member does not hold: violates
``OwnedPartitionsAreHeld`` whatever the random draws are (the random structures need
three relations to line up for it, and a growing vocabulary makes that rarer)."""

COVERS_MISSED = Snapshot(
    CLIENTS[:1],
    MEMBERS[:1],
    PARTITIONS[:1],
    {
        "is_member": frozenset({(MEMBERS[0],)}),
        "subscribed": frozenset({(MEMBERS[0], PARTITIONS[0])}),
    },
    {"group_epoch": {(): 3}, "assignment_epoch": {(): 3}, "member_epoch": {(MEMBERS[0],): 5}},
)
"""A fresh target that leaves a subscribed partition unassigned, and a member ahead of
the assignment epoch: violates ``ValidTargetAssignment.Covers`` and
``EpochOrder.MemberEpoch`` whatever the random draws are."""


STABLE_UNSUBSCRIBED = Snapshot(
    CLIENTS[:1],
    MEMBERS[:1],
    PARTITIONS[:1],
    {
        "is_member": frozenset({(MEMBERS[0],)}),
        "target": frozenset({(MEMBERS[0], PARTITIONS[0])}),
        "exists": frozenset({(PARTITIONS[0],)}),
    },
    {"group_status": {(): 3}},
    family="classic",
)
"""A Stable classic group that gives a member a partition of a topic it does not
subscribe to: violates ``StableAssignmentSubscribed`` whatever the random draws are."""


_M, _P = MEMBERS[0], PARTITIONS[0]
NON_STICKY_INSTALL = StepSnapshot(
    Snapshot(
        CLIENTS[:1],
        MEMBERS[:1],
        PARTITIONS[:2],
        {"is_member": frozenset({(_M,)})},
        {"group_status": {(): 2}, "sticky_assignor": {(): 1}},
    ),
    Snapshot(
        CLIENTS[:1],
        MEMBERS[:1],
        PARTITIONS[:2],
        {
            "is_member": frozenset({(_M,)}),
            "claims": frozenset({(_M, _P)}),
            "subscribed": frozenset({(_M, _P), (_M, PARTITIONS[1])}),
            "assigned": frozenset({(_M, PARTITIONS[1])}),
        },
        {"group_status": {(): 3}, "sticky_assignor": {(): 1}},
    ),
)
"""An installed sticky assignment swaps the one partition a member claims for another:
violates ``StickyAssignment`` (random draws rarely reach its premise)."""

RESET_WHILE_MEMBER = StepSnapshot(
    Snapshot(
        CLIENTS[:1],
        MEMBERS[:1],
        PARTITIONS[:1],
        {
            "is_member": frozenset({(_M,)}),
            "client_member": frozenset({(CLIENTS[0], _M)}),
            "client_in_group": frozenset({(CLIENTS[0],)}),
        },
        {
            "client_epoch": {(CLIENTS[0],): 2},
            "member_epoch": {(_M,): 2},
            "client_incarnation": {(CLIENTS[0],): 0},
        },
    ),
    Snapshot(
        CLIENTS[:1],
        MEMBERS[:1],
        PARTITIONS[:1],
        {
            "is_member": frozenset({(_M,)}),
            "client_member": frozenset({(CLIENTS[0], _M)}),
            "client_in_group": frozenset({(CLIENTS[0],)}),
        },
        {
            "client_epoch": {(CLIENTS[0],): -1},
            "member_epoch": {(_M,): 2},
            "client_incarnation": {(CLIENTS[0],): 0},
        },
    ),
)
"""A client resets its generation while its member is in the group at that generation:
violates ``LostOnlyWhenOut``."""


_MEMBER_AT = Snapshot(
    CLIENTS[:1],
    MEMBERS[:1],
    PARTITIONS[:1],
    {"is_member": frozenset({(_M,)})},
    {"member_epoch": {(_M,): 3}, "group_deletions": {(): 0}},
)
EPOCH_BACK = StepSnapshot(
    _MEMBER_AT,
    Snapshot(
        CLIENTS[:1],
        MEMBERS[:1],
        PARTITIONS[:1],
        {"is_member": frozenset({(_M,)})},
        {"member_epoch": {(_M,): 1}, "group_deletions": {(): 0}},
    ),
)
"""A member's epoch goes back from 3 to 1: violates ``MemberEpochMonotone`` (random draws
over a growing vocabulary rarely keep a member in both snapshots)."""

DELETED_WITH_MEMBER = StepSnapshot(
    _MEMBER_AT,
    Snapshot(CLIENTS[:1], MEMBERS[:1], PARTITIONS[:1], {}, {"group_deletions": {(): 1}}),
)
"""The group is deleted while it has a member: violates ``GroupDeletedOnlyWhenEmpty``."""


def test_state_properties_agree_on_random_snapshots() -> None:
    seen: Counter[tuple[str, bool]] = Counter()

    @SETTINGS
    @given(snapshots())
    @example(STABLE_BUT_BEHIND)
    @example(TWO_RUNS_IN_FLIGHT)
    @example(OWNS_UNHELD)
    @example(COVERS_MISSED)
    @example(STABLE_UNSUBSCRIBED)
    @example(ASSIGNOR_OUTDATED)
    @example(INDEX_CONSISTENT)
    def run(s: Snapshot) -> None:
        for prop in STATE_PROPERTIES:
            _agree(prop, s, seen)

    run()
    _both_outcomes(STATE_PROPERTIES, seen)


def test_step_properties_agree_on_random_step_snapshots() -> None:
    seen: Counter[tuple[str, bool]] = Counter()

    @SETTINGS
    @given(step_snapshots())
    @example(NON_STICKY_INSTALL)
    @example(RESET_WHILE_MEMBER)
    @example(EPOCH_BACK)
    @example(DELETED_WITH_MEMBER)
    def run(s: StepSnapshot) -> None:
        for prop in STEP_PROPERTIES:
            _agree(prop, s, seen)

    run()
    _both_outcomes(STEP_PROPERTIES, seen)


@SETTINGS
@given(st.one_of(snapshots(), step_snapshots()))
def test_decode_round_trips_and_recheck_matches(s: Structure) -> None:
    """A model of ``assert_snapshot`` decodes to the snapshot (restricted to the symbols
    used, with function defaults explicit), and ``recheck`` is the Python verdict."""
    props = STEP_PROPERTIES if isinstance(s, StepSnapshot) else STATE_PROPERTIES
    exprs = [p.expr for p in props if p.expr is not None]
    sym = SymbolicStructure.for_structure(s, *exprs)
    solver = z3.Solver()
    solver.add(*assert_snapshot(sym, s))
    assert solver.check() == z3.sat
    decoded = decode(solver.model(), sym)
    assert decoded == restrict(s, sym)
    for prop in props:
        assert prop.holds(decoded) == prop.holds(s)
        outcome = check_structure(prop, s)
        assert outcome.verdict == (Verdict.PROVED if prop.holds(s) else Verdict.VIOLATED)
        if outcome.verdict is Verdict.VIOLATED:
            assert outcome.counterexample is not None
            assert not prop.holds(outcome.counterexample)


# --------------------------------------------------------------------------- model states

_S = TypeVar("_S", Snapshot, StepSnapshot)


def _walk(name: str, seed: int, steps: int = 40) -> list[Snapshot]:
    config = PRESETS[name]
    rng = random.Random(seed)
    state = system.initial(config)
    snaps = [project(state)]
    for _ in range(steps):
        actions = system.enabled(state, config)
        if not actions:
            break
        state = system.step(state, rng.choice(actions), config)
        snaps.append(project(state))
    return snaps


def _distinct(items: list[_S]) -> list[_S]:
    """``items`` without repeats, in order (snapshots are unhashable: they hold dicts)."""
    seen: list[_S] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_readings_agree_on_model_states(preset: str) -> None:
    snaps = _walk(preset, seed=sum(map(ord, preset)))
    assert len(snaps) > 1
    # A walk revisits projections (many steps change nothing the projection keeps): each
    # distinct snapshot and step is compared once, as both readings are functions of it.
    for snap in _distinct(snaps):
        for prop in STATE_PROPERTIES:
            assert prop.holds(snap) == z3_holds(prop, snap), prop.name
    for step in _distinct([StepSnapshot(pre, post) for pre, post in itertools.pairwise(snaps)]):
        for prop in STEP_PROPERTIES:
            assert prop.holds(step) == z3_holds(prop, step), prop.name
    # The three-way verdict with its Python re-check, on the last state and step.
    for prop in STATE_PROPERTIES:
        expected = Verdict.PROVED if prop.holds(snaps[-1]) else Verdict.VIOLATED
        assert recheck(prop, snaps[-1]) is expected
    for prop in STEP_PROPERTIES:
        step = StepSnapshot(snaps[-2], snaps[-1])
        expected = Verdict.PROVED if prop.holds(step) else Verdict.VIOLATED
        assert recheck(prop, step) is expected


# --------------------------------------------------------------------------- Z3-built structures


SMALL = Domains(("c0", "c1"), ("m0", "m1"), (("t0", 0), ("t0", 1)))


@pytest.mark.parametrize("prop", ALL_PROPERTIES, ids=lambda p: p.name)
def test_find_violation_is_rejected_by_python(prop: Property) -> None:
    """Every property is falsifiable over small domains, and the structure Z3 builds is a
    counterexample for both readings (a deterministic violation per property)."""
    found = find_violation(prop, SMALL)
    assert found is not None
    assert isinstance(found, StepSnapshot if prop in STEP_PROPERTIES else Snapshot)
    assert not prop.holds(found)
    assert not z3_holds(prop, found)
    outcome = check_structure(prop, found)
    assert outcome.verdict is Verdict.VIOLATED


@pytest.mark.parametrize("prop", ALL_PROPERTIES, ids=lambda p: p.name)
def test_every_property_is_satisfiable(prop: Property) -> None:
    """No property is vacuously false: some structure satisfies it in both readings."""
    assert prop.expr is not None
    found = find_structure(prop.expr, SMALL, step=prop in STEP_PROPERTIES)
    assert found is not None
    assert prop.holds(found)
    assert z3_holds(prop, found)
    assert recheck(prop, found) is Verdict.PROVED


m, m1, m2 = Var("m", "member"), Var("m1", "member"), Var("m2", "member")
p = Var("p", "partition")


def test_bounded_proofs_with_constraints() -> None:
    # One client cannot double-own a partition: no violation exists over these domains.
    assert (
        find_violation(NO_DOUBLE_CLIENT_OWNERSHIP, Domains(("c0",), ("m0",), (("t", 0),))) is None
    )
    # Member epochs below the group epoch and a fresh target imply the epoch order.
    bounded = ForAll(
        (m,),
        Implies(Rel("is_member", (m,)), Cmp("<=", Fn("member_epoch", (m,)), Fn("group_epoch"))),
    )
    fresh = Cmp("==", Fn("assignment_epoch"), Fn("group_epoch"))
    assert find_violation(MEMBER_EPOCH_BOUNDED, SMALL, [bounded, fresh]) is None
    assert find_violation(MEMBER_EPOCH_BOUNDED, SMALL, [bounded]) is not None
    # Coordinator ownership is exclusive if every partition has at most one holder.
    exclusive = ForAll(
        (m1, m2, p),
        Implies(And((Rel("holds", (m1, p)), Rel("holds", (m2, p)))), Same(m1, m2)),
    )
    assert find_violation(NO_DOUBLE_MEMBER_ASSIGNMENT, SMALL, [exclusive]) is None


def test_stable_is_satisfiable_non_vacuously() -> None:
    """A STABLE group with members satisfies GroupStatusConsistent.Stable in both readings
    (random snapshots mostly satisfy it vacuously, with a status other than STABLE)."""
    assert STATUS_STABLE.expr is not None
    found = find_structure(
        STATUS_STABLE.expr,
        SMALL,
        [
            Cmp("==", Fn("group_status"), Const(3)),
            ForAll((m,), Rel("is_member", (m,))),
            Exists((m, p), Rel("target", (m, p))),
        ],
    )
    assert isinstance(found, Snapshot)
    assert found.relations["is_member"] == {("m0",), ("m1",)}
    assert STATUS_STABLE.holds(found)
    assert z3_holds(STATUS_STABLE, found)


def test_find_violation_with_a_z3_constraint() -> None:
    found = find_violation(
        ASSIGNMENT_EPOCH_BOUNDED, SMALL, [lambda sym: sym.fn("group_epoch") == 5]
    )
    assert isinstance(found, Snapshot)
    assert found.functions["group_epoch"][()] == 5
    assert found.functions["assignment_epoch"][()] > 5


# --------------------------------------------------------------------------- edge cases


def test_unknown_is_a_verdict_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = Snapshot(("c0",), ("m0",), (("t", 0),), {}, {})
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    outcome = check_structure(ASSIGNMENT_EPOCH_BOUNDED, snap)
    assert outcome.verdict is Verdict.UNKNOWN
    assert outcome.reason == "timeout"
    assert recheck(ASSIGNMENT_EPOCH_BOUNDED, snap) is Verdict.UNKNOWN
    with pytest.raises(Z3Unknown, match="timeout"):
        z3_holds(ASSIGNMENT_EPOCH_BOUNDED, snap)
    with pytest.raises(Z3Unknown):
        find_violation(ASSIGNMENT_EPOCH_BOUNDED, SMALL)


def test_a_disagreement_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the two readings ever disagree, ``recheck`` says so instead of choosing one."""
    snap = Snapshot(("c0",), ("m0",), (("t", 0),), {}, {"group_epoch": {(): 1}})
    broken = Property(
        "Broken",
        ASSIGNMENT_EPOCH_BOUNDED.kind,
        "",
        "",
        ASSIGNMENT_EPOCH_BOUNDED.expr,
        None,
        compile_expr(Cmp(">", Fn("assignment_epoch"), Fn("group_epoch"))),
    )
    with pytest.raises(Disagreement):
        recheck(broken, snap)


def test_reading_mismatches_are_errors() -> None:
    state = Snapshot(("c0",), ("m0",), (("t", 0),), {}, {})
    step = StepSnapshot(state, state)
    for prop in STEP_PROPERTIES:
        with pytest.raises(ValueError, match="step"):
            z3_holds(prop, state)
    for prop in STATE_PROPERTIES:
        with pytest.raises(ValueError, match="step"):
            z3_holds(prop, step)


def test_quantifiers_unroll_to_a_quantifier_free_formula() -> None:
    prop = NO_DOUBLE_MEMBER_ASSIGNMENT
    assert prop.expr is not None
    sym = SymbolicStructure.build(SMALL, prop.expr)
    formula = encode(prop.expr, sym)
    seen: list[object] = []

    def walk(e: object) -> None:
        assert not z3.is_quantifier(e)
        seen.append(e)
        for child in e.children():  # type: ignore[attr-defined]
            walk(child)

    walk(formula)
    # holds(m, p) for 2 members × 2 partitions: four Bools, nothing else.
    assert sorted(str(v) for v in sym.variables()) == sorted(
        f"now.holds({a},t0-{i})" for a in ("m0", "m1") for i in (0, 1)
    )


def test_bindings_are_lexically_scoped() -> None:
    """An inner quantifier re-binding a name shadows the outer binding only in its body."""
    inner = Exists((m,), Rel("is_member", (m,)))
    expr = ForAll((m,), And((inner, Rel("stable", (m,)))))
    snap = Snapshot(
        (), ("a", "b"), (), {"is_member": frozenset({("a",)}), "stable": frozenset({("a",)})}, {}
    )
    sym = SymbolicStructure.for_structure(snap, expr)
    solver = z3.Solver()
    solver.add(*assert_snapshot(sym, snap))
    solver.add(encode(expr, sym))
    assert solver.check() == z3.unsat  # "b" is not stable


def test_empty_domains_follow_the_python_reading() -> None:
    empty = Snapshot((), (), (), {}, {})
    for prop in STATE_PROPERTIES:
        assert z3_holds(prop, empty) == prop.holds(empty), prop.name
    assert z3_holds(NO_DOUBLE_CLIENT_OWNERSHIP, empty)


def test_constants_and_defaults() -> None:
    """A function tuple the snapshot does not list is FUNCTION_DEFAULT in both readings."""
    expr = ForAll((m,), Cmp("==", Fn("member_epoch", (m,)), Const(FUNCTION_DEFAULT)))
    prop = Property("Default", STATE_PROPERTIES[0].kind, "", "", expr, None, compile_expr(expr))
    unlisted = Snapshot((), ("m0",), (), {}, {"member_epoch": {}})
    listed = Snapshot((), ("m0",), (), {}, {"member_epoch": {("m0",): 3}})
    assert prop.holds(unlisted)
    assert z3_holds(prop, unlisted)
    assert not prop.holds(listed)
    assert not z3_holds(prop, listed)
    assert not z3_holds(
        Property("N", prop.kind, "", "", Not(expr), None, compile_expr(Not(expr))), unlisted
    )
