"""``groupcheck.api.prove`` (docs/json.md, "From Python and pytest"): the proof as a typed
verdict, consistent with ``prove --json`` (docs/json/prove.schema.json). Bounded: one
goal (``only``), no BMC search for the counterexample's reachability (``reach=0``)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from groupcheck import api
from groupcheck.jsonout import document
from model.status import ConfigError

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "json" / "prove.schema.json").read_text()
)


def test_prove_a_variant_gives_its_counterexample_to_induction() -> None:
    """bookkeeping-drops-pending's rule breaks Lemma.PartitionEpochs on a heartbeat
    (tests/invariants/z3/proof/test_vacuity.py pins the same CTI through the command line)."""
    verdict = api.prove(
        variant="bookkeeping-drops-pending", only=["Lemma.PartitionEpochs"], reach=0
    )
    assert verdict.result == "violation"
    assert not verdict.ok
    assert verdict.exit_code == 1
    assert verdict.variant == "bookkeeping-drops-pending"
    assert verdict.summary["failed"] == 1
    assert verdict.summary["proved"] > 0
    assert verdict.non_vacuity == "satisfiable"
    (failed,) = verdict.unproved
    assert (failed.goal, failed.family, failed.status) == (
        "Lemma.PartitionEpochs",
        "DeliverMessage.heartbeat",
        "failed",
    )
    assert failed.cti[0].startswith("pre-state")
    (goal,) = verdict.goals
    assert (goal.goal, goal.layer, goal.status) == ("Lemma.PartitionEpochs", "core", "failed")
    # --only leaves the other conjuncts assumed and unchecked: said, whatever the result.
    assert any(r.startswith("assumed in the pre-state but not checked") for r in verdict.reasons)
    assert "failed: Lemma.PartitionEpochs / DeliverMessage.heartbeat" in verdict.explain()
    jsonschema.Draft202012Validator(SCHEMA).validate(document("prove", verdict.document))


def test_prove_bad_input_raises_config_error() -> None:
    with pytest.raises(ConfigError):
        api.prove("NO_SUCH_PRESET")
    with pytest.raises(ConfigError, match="--only 'NoSuchGoal' is no goal"):
        api.prove(only=["NoSuchGoal"])
    with pytest.raises(ConfigError, match="not both"):
        api.prove("TINY", file="tiny.toml")
    with pytest.raises(ConfigError, match="timeout_seconds"):
        api.prove(timeout_seconds=0)
