"""The KIP-1263 presets explored exhaustively: every property holds with assignment
batching and assignor offload on, every required witness is hit, and the distinct-state
counts are pinned (a changed count means the reachable behaviour changed: review it)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupcheck.explore.bfs import bfs
from invariants.liveness import required_witnesses
from model.config import Config
from model.presets import BATCHING, OFFLOAD, OFFLOAD_LOSSY

PINNED = {"BATCHING": 40208, "OFFLOAD": 54192, "OFFLOAD_LOSSY": 55268}


@pytest.mark.parametrize("config", [BATCHING, OFFLOAD, OFFLOAD_LOSSY], ids=lambda c: c.name)
def test_preset_is_exhausted_ok_with_its_witnesses(config: Config) -> None:
    result = bfs(config)
    assert result.property is None, result.message
    assert result.exhausted is True
    assert result.result == "ok", result.reasons
    assert required_witnesses(config) <= set(result.witnesses)
    assert result.distinct_states == PINNED[config.name]


def test_offload_witnesses_are_required_of_offload_configs_only() -> None:
    offload = {"AssignorRunOutlivesMember", "StaleAssignorRunFollowedUp"}
    assert offload <= required_witnesses(replace(OFFLOAD, required_witnesses=None))
    assert not offload & required_witnesses(replace(BATCHING, required_witnesses=None))


def test_offload_reaches_finding_f1_without_the_client_side_fix() -> None:
    """A run completing between a member's response and its next heartbeat changes the
    target under it: in a two-client group the coordinator takes a partition the client is
    about to add as revoked (docs/findings.md, F1)."""
    result = bfs(replace(OFFLOAD, report_pending_additions=False), check_convergence=False)
    assert result.property == "OwnedPartitionsAreHeld"
    assert result.path is not None
    assert any(a.kind == "CompleteAssignorRun" for a in result.path.actions)
