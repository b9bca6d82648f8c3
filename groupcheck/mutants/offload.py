"""The KIP-1263 assignor-offload mutants: rules of starting and installing an offloaded
assignor run (``model.consumer.target``). Each is declared at its function with ``@mutant(...)``
(``groupcheck.mutants.registry``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from groupcheck.mutants.registry import Registry
from model.consumer import target as tg
from model.ids import FrozenMap
from model.presets import MUT2_OFFLOAD, MUT2_OFFLOAD_STATIC
from model.records import Group, TopicMetadata

REGISTRY = Registry()
mutant = REGISTRY.mutant


@mutant(
    name="install-without-reapplying-removals",
    summary="an offloaded run is installed with members that left while it ran",
    bug="KIP-1263 Assignment Offload (removed members' assignments discarded)",
    field="install_assignor_run",
    config=MUT2_OFFLOAD,
    killed_by="ValidTargetAssignment.OnlyMembers",
    bmc_depth=3,
)
def install_without_reapplying_removals(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run is installed with the entries of members that left or were
    fenced while it ran (the removals made meanwhile are not re-applied)."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    if out.assignment_epoch == group.assignment_epoch:
        return out  # discarded
    run = group.assignor_runs[0]
    gone = {mid: parts for mid, parts in run.target_assignment.items() if mid not in group.members}
    return replace(out, target_assignment=FrozenMap({**out.target_assignment.as_dict(), **gone}))


@mutant(
    name="two-runs-in-flight",
    summary="a second assignor run starts while one is in flight",
    bug="KIP-1263 Assignment Offload (one in-flight run per group)",
    field="start_assignor_run",
    config=MUT2_OFFLOAD,
    killed_by="AssignorRunsInFlight.AtMostOne",
    bmc_depth=2,
)
def two_runs_in_flight(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    default_assignor: str,
    compute: Callable[[Group, Mapping[str, TopicMetadata], str], Group],
) -> Group:
    """A heartbeat that needs a new target starts another assignor run although one is
    already in flight."""
    idle = replace(group, assignor_runs=())
    started = tg.start_assignor_run(idle, topics, default_assignor, compute)
    return replace(group, assignor_runs=(*group.assignor_runs, *started.assignor_runs))


@mutant(
    name="install-before-static-replacement",
    summary="an offloaded run is installed without moving a replaced static member's entry",
    bug="KIP-1263 Assignment Offload (replaced static members' assignments moved); KAFKA-20292",
    field="install_assignor_run",
    config=MUT2_OFFLOAD_STATIC,
    killed_by="ValidTargetAssignment.Covers",
    bmc_depth=4,
    unstated_harm=(
        "breaks only ValidTargetAssignment.Covers (the "
        "replaced static member's entry is dropped, so the current target covers nothing), "
        "which prove does not state (its relation takes any assignor, covering or not): "
        "under this variant every obligation of MUT2_OFFLOAD_STATIC is still proved"
    ),
)
def install_before_static_replacement(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run is installed as computed before a static member was
    replaced: the new instance's member id gets nothing (the old id's entry is not moved
    to it)."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    if out.assignment_epoch == group.assignment_epoch:
        return out
    run = group.assignor_runs[0]
    kept = FrozenMap(
        (mid, parts) for mid, parts in out.target_assignment.items() if mid in run.target_assignment
    )
    return replace(out, target_assignment=kept)


@mutant(
    name="install-without-epoch",
    summary="an offloaded run is installed without bumping the assignment epoch",
    bug="KIP-1263 Assignment Offload; KIP-848 Assignment Epoch",
    field="install_assignor_run",
    config=MUT2_OFFLOAD,
    killed_by="TargetEpochAdvances",
    bmc_depth=2,
)
def install_without_epoch(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run's target is installed but the assignment epoch is left
    where it was."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    return replace(out, assignment_epoch=group.assignment_epoch)
