"""The configurations shared by the Python model and ``tla/``: each ``tla/<NAME>.cfg`` is
generated from the Python ``Config`` of the same name (``cfg_text``), so the two cannot
drift apart silently (a test compares the committed files with the generated text).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from groupcheck.configfile import load_config_file
from groupcheck.explore.symmetry import symmetry_classes
from groupcheck.families import TLA
from groupcheck.mutants import tla_mutants
from groupcheck.mutants.catalogue import LOSSY_TWO, REJOIN, TWO_ON_TWO
from invariants.properties import STATE_PROPERTIES as PY_STATE_PROPERTIES
from invariants.properties import STEP_PROPERTIES as PY_STEP_PROPERTIES
from invariants.properties import Property
from model.config import ClientSpec, Config
from model.family import family_of
from model.presets import MUT2_LOSS2, MUT2_LOSS4, TINY
from model.status import ConfigError

TLA_DIR = Path(__file__).resolve().parents[2] / "tla"

SPEC_PERTURBATIONS = frozenset({"Subscribe", "Leave", "Crash", "LoseMessage"})
"""The perturbation families ``tla/KIP848.tla`` models."""

MODEL_VALUES = ("A", "B", "C")
"""Client names the model module declares as model values (``tla/MC.tla``)."""

TINY1 = replace(TINY, name="TINY1", max_perturbations=1)
"""TINY with one perturbation: B joins, or A leaves or crashes."""

LOSSY1 = replace(LOSSY_TWO, name="LOSSY1", max_perturbations=1)
"""Two clients; B may join, or one message is lost, or a client crashes."""

REJOIN1 = replace(REJOIN, name="REJOIN1", max_perturbations=1)
"""Two clients; B may join or A may leave."""

PAIR_LOSS1 = Config(
    kafka_version="4.2",
    name="PAIR_LOSS1",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=1,
    perturbations=frozenset({"LoseMessage"}),
    report_pending_additions=True,
)
"""Two clients join together over a network that may lose one message."""

# MUT2_LOSS4 (MUT2 with four perturbations of every kind the specification models) and
# MUT2_LOSS2 (two) are benchmark presets (model.presets.BENCHMARK_PRESETS): --preset names
# them; a test pins MUT2_LOSS2's count, tla/manifest.json MUT2_LOSS4's.

CONFIGS: dict[str, Config] = {
    c.name: c
    for c in (
        TINY1,
        LOSSY1,
        REJOIN1,
        PAIR_LOSS1,
        TINY,
        TWO_ON_TWO,
        LOSSY_TWO,
        REJOIN,
        MUT2_LOSS2,
        MUT2_LOSS4,
    )
}
"""Every configuration with a ``tla/<NAME>.cfg``."""

CI_CONFIGS = ("TINY1", "LOSSY1", "REJOIN1")
"""The tiny configurations the test suite checks and cross-checks."""


def check_in_scope(config: Config) -> None:
    """Raise ConfigError unless the specification models everything ``config`` uses."""
    if TLA.get(family_of(config).name) is None:  # no projection: the consumer family's only
        raise ConfigError(
            f"config {config.name!r} uses the {config.protocol} protocol; the TLA+ "
            "specification models the KIP-848 consumer protocol only (tla/README.md)"
        )
    where = f"config {config.name!r}"
    problems: list[str] = []
    if len(config.topics) != 1 or config.topics[0][0] != "foo":
        problems.append("exactly one topic named 'foo'")
    if config.max_partitions_per_topic < config.topics[0][1]:
        problems.append("a partition count within max_partitions_per_topic")
    if len(config.clients) > len(MODEL_VALUES):
        problems.append(f"at most {len(MODEL_VALUES)} clients")
    for i, spec in enumerate(config.clients):
        if spec.name != MODEL_VALUES[i]:
            problems.append(f"clients named {', '.join(MODEL_VALUES)} in order")
        if spec.instance_id is not None:
            problems.append("no static members")
        if spec.rack is not None or spec.regex is not None:
            problems.append("no racks and no regular-expression subscriptions")
        if spec.subscription != ("foo",) or spec.server_assignor is not None:
            problems.append("every client subscribed to ('foo',) with no server assignor")
    extra = config.perturbations - SPEC_PERTURBATIONS
    if extra:
        problems.append(f"perturbations within {sorted(SPEC_PERTURBATIONS)} (not {sorted(extra)})")
    if not config.compute_target_in_heartbeat or not config.reconcile_while_assigning:
        problems.append("the target computed and reconciled inside the heartbeat")
    if config.epoch_layout != "kip-848" or config.realign_empty_group:
        problems.append("the kip-848 epoch layout without realign_empty_group")
    if (
        not config.rejoin_with_epoch_zero
        or config.reorder
        or config.slow_clients
        or config.live_timers
        or config.callback_steps
        or config.assignment_epochs
    ):
        problems.append(
            "rejoin_with_epoch_zero, no reorder, no slow_clients, no live_timers, "
            "no callback_steps, no assignment_epochs"
        )
    if config.effective_assignment_interval_ms() > 0 or config.assignor_offload:
        problems.append(
            "no KIP-1263 assignment batching or assignor offload (the spec computes every "
            "target inline; tla/README.md)"
        )
    if config.allows("DeleteGroup") or config.delete_expired_groups:
        problems.append(
            "no group deletion (DeleteGroup, delete_expired_groups: the spec's group is never "
            "deleted; tla/README.md)"
        )
    if config.server_assignors[0] != "uniform" or config.max_group_size < len(config.clients):
        problems.append("the uniform assignor and no group size limit")
    if problems:
        wanted = "; ".join(dict.fromkeys(problems))
        raise ConfigError(f"{where} is outside the TLA+ specification's scope; it needs {wanted}")


def _tla_bool(b: bool) -> str:
    return "TRUE" if b else "FALSE"


def _tla_set(items: list[str], quote: bool) -> str:
    return "{" + ", ".join(f'"{i}"' if quote else i for i in items) + "}"


def symmetry_name(config: Config) -> str | None:
    """The ``MC.tla`` symmetry set for ``config``'s interchangeable clients, if any."""
    classes = symmetry_classes(config)
    if len(classes) != 1:
        return None
    name = "Symmetry" + "".join(sorted(classes[0]))
    return name if name in ("SymmetryAB", "SymmetryBC", "SymmetryABC") else None


def cfg_text(config: Config, liveness: bool = False, symmetry: bool = False) -> str:
    """The TLC model configuration for ``config``; with ``liveness`` the fair
    specification and ``Convergence`` instead of the step properties (TLC checks action
    properties slowly inside its liveness checker; the safety run checks them)."""
    check_in_scope(config)
    names = [c.name for c in config.clients]
    subscribed = [c.name for c in config.clients if c.subscribed]
    lines = [
        f"\\* {config.name}: generated from the Python configuration of the same name",
        "\\* (groupcheck/tla/configs.py); run by hand as tla/README.md says.",
        "CONSTANTS",
        *(f"    {v} = {v}" for v in MODEL_VALUES),
        f"    Clients = {_tla_set(names, quote=False)}",
        f"    ClientOrder <- Order{len(names)}",
        f"    NumPartitions = {config.topics[0][1]}",
        f"    InitiallySubscribed = {_tla_set(subscribed, quote=False)}",
        f"    Perturbations = {_tla_set(sorted(config.perturbations), quote=True)}",
        f"    MaxPerturbations = {config.max_perturbations}",
        f"    RebalanceTimeoutMs = {config.rebalance_timeout_ms}",
        f"    ReportPendingAdditions = {_tla_bool(config.report_pending_additions)}",
        f"    CommitOnRevoke = {_tla_bool(config.commit_on_revoke)}",
        f"    AutoCommit = {_tla_bool(config.auto_commit)}",
        '    Mutant = "none"',
        *(["SPECIFICATION FairSpec"] if liveness else ["INIT Init", "NEXT Next"]),
        "INVARIANTS",
        *(f"    {name}" for name in STATE_INVARIANTS),
        "PROPERTIES",
        *(["    Convergence"] if liveness else (f"    {name}" for name in STEP_PROPERTIES)),
        *_symmetry_lines(config, symmetry),
        "",
    ]
    return "\n".join(lines)


def _symmetry_lines(config: Config, symmetry: bool) -> list[str]:
    if not symmetry:
        return []
    name = symmetry_name(config)
    if name is None:
        raise ConfigError(f"config {config.name!r} has no interchangeable clients to permute")
    return [f"SYMMETRY {name}"]


PROPERTIES_LEFT_OUT = {
    "ValidTargetAssignment.OnlyMembers": "KIP-1263 assignor offload (tla/README.md)",
    "AssignorRunsInFlight.AtMostOne": "KIP-1263 assignor offload (tla/README.md)",
    "AssignmentEpochMonotone": "KIP-1263 assignor offload (tla/README.md)",
    "InstalledTarget.OnlyExisting": "KIP-1263 assignor offload (tla/README.md)",
    "TargetEpochAdvances": "KIP-1263 assignor offload (tla/README.md)",
    "GroupDeletedOnlyWhenEmpty": "group deletion (tla/README.md)",
    "MigrationPolicyHonoured": "mixed groups (protocol 'mixed') are outside the spec",
    "TargetByPreferredAssignor": "the uniform assignor only (ChangeServerAssignor left out)",
    "AssignmentEpochHolderUnique": "KIP-1251's assignment history, a ghost the spec does not keep",
    "EpochCommitFromHolder": "KIP-1251's assignment history, a ghost the spec does not keep",
    "StaticIndexConsistent": "static membership: the spec has no instance ids (tla/README.md)",
}
"""Properties of the Python model the spec does not state: they are about the KIP-1263
offload the spec leaves out (every target it computes is inline, from the current group),
about group deletion, which the spec does not model (its group is never deleted), about
static membership (its clients have no instance ids), or about KIP-1251's assignment
history, a ghost of the Python model's (docs/invariants.md)."""


SPEC_MUTANTS = tla_mutants()
"""Mutants the specification can switch on with ``Mutant = "<name>"``: the catalogue
entries with a TLA+ counterpart (``Mutant.tla``, declared at each mutant's function)."""


def check_mutant(name: str | None) -> None:
    """Raise ConfigError unless the specification knows the mutant ``name``."""
    if name is not None and name not in SPEC_MUTANTS:
        raise ConfigError(
            f"mutant {name!r} has no TLA+ counterpart; known in the spec: {', '.join(SPEC_MUTANTS)}"
        )


def python_name(tla_name: str) -> str:
    """The Python property name of a TLA+ invariant or property."""
    return tla_name.replace("_", ".")


def tla_name(python: str) -> str:
    """The TLA+ spelling of a Python property name."""
    return python.replace(".", "_")


def _in_spec(prop: Property) -> bool:
    """Whether ``tla/KIP848Properties.tla`` states ``prop``: the spec is of the consumer
    protocol (a property of the classic family only is not its), less
    ``PROPERTIES_LEFT_OUT``."""
    return "consumer" in prop.families and prop.name not in PROPERTIES_LEFT_OUT


STATE_INVARIANTS = tuple(tla_name(p.name) for p in PY_STATE_PROPERTIES if _in_spec(p))
"""State properties, in TLA+ spelling (``Parent.Conjunct`` becomes ``Parent_Conjunct``): a
view of ``invariants.properties.STATE_PROPERTIES``, in its order."""

STEP_PROPERTIES = tuple(tla_name(p.name) for p in PY_STEP_PROPERTIES if _in_spec(p))
"""Step properties, checked by TLC as ``[][P_Step]_vars``: a view of
``invariants.properties.STEP_PROPERTIES``, in its order."""


def config_named(name: str) -> Config:
    """The configuration called ``name`` — or read from a config file (``*.toml``,
    ``*.json``: the ``--config`` format of ``groupcheck explore``, README "Configs");
    ConfigError lists the known names."""
    if name.lower().endswith((".toml", ".json")):
        return load_config_file(name)
    config = CONFIGS.get(name.upper())
    if config is None:
        raise ConfigError(f"unknown TLA+ configuration {name!r}; known: {', '.join(CONFIGS)}")
    return config
