"""The convergence ranking over KIP-1263 assignor runs and KIP-211 expiry / group deletion
(invariants/z3/proof/ranking.py, ``OFFLOAD_RANKING``): the run in flight is counted, the
step that starts it and the one that installs it decrease the ranking, expiry and
deletion never increase it, and the variants that break progress fail an obligation with
a counterexample the Python reading confirms. (Every ranking obligation of the offload
and expiry presets is in ``prove --preset P``, measured in docs/benchmarks.md.)

Bounded by obligations, never by seconds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import z3

from groupcheck.cli import main
from invariants.z3.proof import ranking
from invariants.z3.proof.obligations import Obligation
from invariants.z3.proof.transition import Options
from model.presets import PRESETS

TIMEOUT_MS = 60_000
RUN = "CompleteAssignorRun"
HEARTBEAT = "DeliverMessage.heartbeat"


def _status(preset: str, goal: str, family: str | None, variant: str | None = None) -> str:
    options = Options.of(PRESETS[preset], variant)
    return ranking.check(Obligation("ranking", goal, family), options, TIMEOUT_MS).status


def test_the_run_in_flight_is_counted_and_its_steps_decrease_the_ranking() -> None:
    """On ``OFFLOAD``: the heartbeat that starts a run and ``CompleteAssignorRun`` decrease
    the ranking, no quiet heartbeat increases it, a state off zero has a member or a run
    to move it, and zero (no run in flight either) is convergence."""
    options = Options.of(PRESETS["OFFLOAD"])
    assert [c.name for c in ranking.components(options)][:4] == ["L", "T", "S", "W"]
    chosen = [
        ob
        for ob in ranking.obligations(options)
        if ob.goal in (ranking.DECREASES, ranking.ENABLED, ranking.ZERO)
        or (ob.goal, ob.family) == (ranking.NON_INCREASING, HEARTBEAT)
    ]
    assert (ranking.DECREASES, RUN) in {(ob.goal, ob.family) for ob in chosen}
    results = [ranking.check(ob, options, TIMEOUT_MS) for ob in chosen]
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []


def test_without_the_mask_a_heartbeat_under_a_run_increases_the_ranking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting ``A`` … ``D`` while a target is due fails: a heartbeat reconciles against
    the previous target with a subscription changed since, and moves a partition to
    pending revocation while the run is in flight."""
    unmasked = ranking.OFFLOAD_RANKING[:4] + ranking.RANKING[2:]
    monkeypatch.setattr(ranking, "OFFLOAD_RANKING", unmasked)
    options = Options.of(PRESETS["OFFLOAD"])
    result = ranking.check(
        Obligation("ranking", ranking.NON_INCREASING, HEARTBEAT), options, TIMEOUT_MS
    )
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms
    assert result.cti.pre.group_epoch != result.cti.pre.assignment_epoch


def test_a_heartbeat_under_a_run_in_flight_makes_no_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Calling a member enabled while a target is due and a run is in flight fails
    ``Ranking.Decreases``: its heartbeat starts no second run; only
    ``CompleteAssignorRun`` moves on (the fairness assumed on it)."""
    own = ranking.enabled

    def eager(s: Any, m: Any, options: Options) -> Any:
        return z3.Or(own(s, m, options), z3.And(s.is_member(m), ranking._due(s)))

    monkeypatch.setattr(ranking, "enabled", eager)
    options = Options.of(PRESETS["OFFLOAD"])
    result = ranking.check(Obligation("ranking", ranking.DECREASES, HEARTBEAT), options, TIMEOUT_MS)
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms
    assert any("assignor run" in line and "in flight" in line for line in result.cti.lines())


@pytest.mark.parametrize(
    ("variant", "preset"),
    [("install-without-epoch", "MUT2_OFFLOAD"), ("install-run-after-deletion", "OFFLOAD_DELETION")],
)
def test_an_install_that_leaves_a_target_due_fails_the_ranking(variant: str, preset: str) -> None:
    """A run installed without its epoch leaves the group epoch ahead (the target stays
    due: a run starts again and again); a deleted group's run installed in the group
    created again puts the assignment epoch above the group epoch. Both fail
    ``Ranking.Decreases / CompleteAssignorRun``, which the reference rules prove."""
    options = Options.of(PRESETS[preset], variant)
    result = ranking.check(Obligation("ranking", ranking.DECREASES, RUN), options, TIMEOUT_MS)
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms
    assert result.cti.post is not None
    assert result.cti.post.group_epoch != result.cti.post.assignment_epoch
    assert _status(preset, ranking.DECREASES, RUN) == "proved"


def test_expiry_and_deletion_are_quiet_steps() -> None:
    """On ``GROUP_DELETION`` (expiry deleting the emptied group): ``ExpireOffsets`` and
    ``DeleteGroup`` never increase the ranking, and keep its lemmas."""
    options = Options.of(PRESETS["GROUP_DELETION"])
    families = ("ExpireOffsets", "DeleteGroup")
    chosen = [ob for ob in ranking.obligations(options) if ob.family in families]
    assert {(ob.goal, ob.family) for ob in chosen} >= {
        (ranking.NON_INCREASING, f) for f in families
    }
    assert len(chosen) == len(families) * (len(ranking.RANKING_LEMMAS) + 1)
    results = [ranking.check(ob, options, TIMEOUT_MS) for ob in chosen]
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []


def test_prove_checks_the_ranking_on_offload(capsys: pytest.CaptureFixture[str]) -> None:
    """``prove --preset OFFLOAD --only Ranking.Decreases`` runs the ranking's obligations
    (the run's included; inconclusive: the rest is assumed), names ``S`` and ``W`` and the
    fairness it assumes; with ``--variant install-without-epoch`` it fails (exit 1)."""
    args = ["prove", "--preset", "MUT2_OFFLOAD", "--json", "--quiet", "--only", ranking.DECREASES]
    assert main(args) == 3
    doc = json.loads(capsys.readouterr().out)
    names = [c["name"] for c in doc["ranking"]["components"]]
    assert names[:4] == ["L", "T", "S", "W"]
    obs = doc["ranking"]["obligations"]
    assert {ob["family"] for ob in obs} == {HEARTBEAT, RUN, "CoordinatorLoaded"}
    assert {ob["status"] for ob in obs} == {"proved"}
    assert any("weak fairness on CompleteAssignorRun" in r for r in doc["reasons"])
    assert main([*args, "--variant", "install-without-epoch"]) == 1
    doc = json.loads(capsys.readouterr().out)
    failed = [ob["family"] for ob in doc["ranking"]["obligations"] if ob["status"] == "failed"]
    assert failed == [RUN]


def test_prove_names_the_quiet_deletion(capsys: pytest.CaptureFixture[str]) -> None:
    """``prove --preset ZOMBIE_DELETION --only Ranking.NonIncreasing``: ``DeleteGroup``
    (the relation has no ``ExpireOffsets`` there) is among the quiet steps, proved, and
    the reasons say so, naming only that family."""
    args = ["prove", "--preset", "ZOMBIE_DELETION", "--json", "--quiet"]
    assert main([*args, "--only", ranking.NON_INCREASING]) == 3
    doc = json.loads(capsys.readouterr().out)
    obs = doc["ranking"]["obligations"]
    assert "DeleteGroup" in {ob["family"] for ob in obs}
    assert {ob["status"] for ob in obs} == {"proved"}
    (reason,) = [r for r in doc["reasons"] if r.startswith("KIP-211")]
    assert "DeleteGroup is a quiet step" in reason
    assert "ExpireOffsets" not in reason
