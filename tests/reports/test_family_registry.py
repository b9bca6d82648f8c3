"""The protocol-family registry (issue 39): every family registered once, every preset's
family found, an unknown protocol refused by name, each layer's facet tables complete, and
no new branch on a state's type or ``Config.protocol`` outside a family's own modules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from groupcheck.families import (
    CAPTURE,
    CHECK_WORDING,
    COORDINATOR,
    SAFETY,
    STATISTICS,
    TIMED,
    TLA,
)
from groupcheck.timed.engine import TimedRun, Timing
from groupcheck.tla.configs import check_in_scope
from groupcheck.tla.crosscheck import bounded_python_states
from invariants.families import CONVERGED, SNAPSHOTS, FacetTable, missing
from model import system
from model.config import Config
from model.family import (
    FAMILIES,
    FAMILY_MODULES,
    ProtocolFamily,
    family_named,
    family_of,
    family_of_group,
    family_of_state,
    load_families,
    register,
)
from model.presets import PRESETS
from model.status import ConfigError
from reports.families import CASESTUDY, EXPLAIN, RENDER, WORDING

ROOT = Path(__file__).resolve().parents[2]

BRANCH = re.compile(
    r"isinstance\([^)]*(State|Group|Client)\b|config\.protocol ==|\.protocol == |\.protocol in "
    r'|\.protocol != "|\.protocol not in '
)
"""A branch on a protocol family: a state, group or client type test, or a test of a
config's (or a trace's) protocol — for or against a family named (``!= "classic"``); a
comparison of two protocols (a trace's header with its config's) is no branch."""

SCANNED = ("invariants", "reports", "groupcheck")

EXCLUDED = (
    "invariants/z3/proof/",  # one symbolic relation per family, each in files of its own
    "invariants/classic_snapshot.py",  # the classic family's facet modules
    "invariants/mixed_snapshot.py",  # the mixed family's facet modules
    "invariants/mixed_liveness.py",
    "reports/mixed_casestudy.py",
    # the mixed family's replays (``model.migration.system``, whose group is a classic or a
    # consumer group, converted between the two): coordinator mode on classic and mixed
    # captures, and the classic-group vectors
    "groupcheck/validate/mixed_coordinator.py",
    "groupcheck/vectors/mixed.py",
)
"""Folders and files that are a family's own (their branches are the family's business)."""

ALLOWED: dict[str, int] = {}
"""The branches each file still holds (issue 39 wants none): a count may only shrink —
lower it here when a change removes one; a file not listed may hold none."""


def _branches() -> dict[str, int]:
    counts: dict[str, int] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXCLUDED):
                continue
            n = sum(1 for line in path.read_text().splitlines() if BRANCH.search(line))
            if n:
                counts[rel] = n
    return counts


def test_no_new_family_branches() -> None:
    counts = _branches()
    grown = {f: (n, ALLOWED.get(f, 0)) for f, n in counts.items() if n > ALLOWED.get(f, 0)}
    assert not grown, (
        "branches on a protocol family (file: found, allowed) — ask the family's registry "
        f"(model.family, invariants.families, reports.families) instead: {grown}"
    )


def test_allowlist_is_tight() -> None:
    """A count that shrank is lowered in ``ALLOWED`` (so no branch comes back unseen)."""
    counts = _branches()
    loose = {f: (counts.get(f, 0), n) for f, n in ALLOWED.items() if counts.get(f, 0) < n}
    assert not loose, f"lower ALLOWED (file: found, allowed): {loose}"


def test_the_scan_sees_a_branch() -> None:
    assert BRANCH.search("    if isinstance(state, ClassicState):")
    assert BRANCH.search('    if config.protocol == "mixed":')
    assert BRANCH.search('    if header.protocol != "consumer":')
    assert not BRANCH.search("    if header.protocol != config.protocol:")
    assert not BRANCH.search("    if isinstance(body, SyncGroupResponse):")


def test_every_family_registered_once() -> None:
    families = load_families()
    assert sorted(families) == ["classic", "consumer", "mixed"]
    assert len(FAMILY_MODULES) == len(families)
    assert len({f.state_type for f in families.values()}) == len(families)
    for family in families.values():
        assert family_named(family.name) is family
        with pytest.raises(ValueError, match="registered twice"):
            register(family)


def test_a_second_family_of_one_name_is_refused() -> None:
    consumer = family_named("consumer")
    other = ProtocolFamily(
        name="consumer",
        state_type=int,
        group_type=None,
        initial=consumer.initial,
        enabled=consumer.enabled,
        step=consumer.step,
        shared=consumer.shared,
        one_family=consumer.one_family,
        client_epoch=consumer.client_epoch,
        consumer_members=consumer.consumer_members,
    )
    with pytest.raises(ValueError, match="'consumer' is registered twice"):
        register(other)
    assert FAMILIES["consumer"] is consumer


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_family_of_every_preset(name: str) -> None:
    config = PRESETS[name]
    family = family_of(config)
    assert family.name == config.protocol
    state = system.initial(config)
    assert isinstance(state, family.state_type)
    assert family_of_state(state) is family
    assert system.enabled(state, config) == family.enabled(state, config)
    one = family.one_family(state)
    assert family_of_group(one.group) is family_of_state(one)


def test_unknown_protocol_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="protocol must be 'consumer', 'classic' or 'mixed'"):
        Config(name="odd", topics=(("t", 1),), clients=(), protocol="share")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown protocol 'share'; known protocol families: "):
        family_named("share")
    with pytest.raises(TypeError, match="str is the state type of no protocol family"):
        family_of_state("not a state")


@pytest.mark.parametrize(
    ("table", "families"),
    [
        (SNAPSHOTS, {"consumer", "classic", "mixed"}),
        (CONVERGED, {"consumer", "classic", "mixed"}),
        (CASESTUDY, {"consumer", "classic", "mixed"}),
        # a mixed path is drawn and told as its group's family (ProtocolFamily.one_family)
        (RENDER, {"consumer", "classic"}),
        (EXPLAIN, {"consumer", "classic"}),
    ],
)
def test_layer_tables_hold_every_family(table: FacetTable[object], families: set[str]) -> None:
    for name in families:
        table.named(name)
    assert set(missing(table)) == {"consumer", "classic", "mixed"} - families


@pytest.mark.parametrize(
    ("table", "families"),
    [
        (SAFETY, {"consumer", "classic", "mixed"}),
        (COORDINATOR, {"consumer", "classic", "mixed"}),
        (CAPTURE, {"consumer", "classic", "mixed"}),
        # facets only the consumer family (KIP-848) has: another family is refused by name
        (TIMED, {"consumer"}),
        (TLA, {"consumer"}),
        (STATISTICS, {"consumer"}),
        # the wording of a family whose terms are not the consumer protocol's
        (WORDING, {"classic"}),
        (CHECK_WORDING, {"classic"}),
    ],
)
def test_command_tables_hold_their_families(table: FacetTable[object], families: set[str]) -> None:
    for name in families:
        table.named(name)
    assert set(missing(table)) == {"consumer", "classic", "mixed"} - families


@pytest.mark.parametrize("name", ["CLASSIC_EAGER", "MIXED_STATIC"])
def test_a_consumer_only_command_refuses_another_family_by_name(name: str) -> None:
    """The timed simulation and the TLA+ cross-check run the consumer family only: a
    config of another is a ``ConfigError`` naming its family and those that have one."""
    config = PRESETS[name]
    with pytest.raises(
        ConfigError,
        match=rf"no timed simulation \(groupcheck.timed.engine\) registered for protocol "
        rf"family '{config.protocol}' \(families: classic, consumer, mixed; registered: "
        r"consumer\)",
    ):
        TimedRun(config, Timing(), seed=1)
    with pytest.raises(ConfigError, match=rf"no TLA\+ projection .* family '{config.protocol}'"):
        bounded_python_states(config, max_states=10)
    with pytest.raises(ConfigError, match=f"uses the {config.protocol} protocol; the TLA"):
        check_in_scope(config)


def test_an_unregistered_facet_is_a_clear_error() -> None:
    table: FacetTable[int] = FacetTable("test facet", ())
    with pytest.raises(LookupError, match="no test facet registered for protocol family 'mixed'"):
        table.named("mixed")


def test_the_registry_closes_no_import_cycle() -> None:
    """``model.family`` imports no family and ``model.system`` no other family's system:
    the families are imported by the registry on first use (``FAMILY_MODULES``), so
    ``model.migration.system`` -> ``model.consumer.system`` is one way."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("model")
    for family_module in FAMILY_MODULES:
        assert graph.find_shortest_chain(importer="model.family", imported=family_module) is None
    for other in ("model.migration.system", "model.classic.system", "model.consumer.system"):
        assert graph.find_shortest_chain(importer="model.system", imported=other) is None
    assert graph.find_shortest_chain(
        importer="model.migration.system", imported="model.consumer.system"
    )
