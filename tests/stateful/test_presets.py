"""Hypothesis state machines built from the model, one per preset: a rule per action
family, every property after every step.

With Kafka's rules the presets with losses or target churn exhibit finding F1
(docs/findings.md) and the reordering preset F2; the machines must find them. With the F1
client fix (``report_pending_additions``) and without cross-connection reordering, every
preset must run clean under the active Hypothesis profile (``ci`` under CI=true).
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from groupcheck.explore.bfs import bfs
from groupcheck.explore.hypothesis_engine import run_hypothesis
from groupcheck.explore.machine import PropertyViolated, machine_for
from model.config import Config
from model.presets import PRESETS

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
EXAMPLES = {"ci": 60, "dev": 150, "deep": 1500}[PROFILE]


def fixed(config: Config) -> Config:
    return replace(config, report_pending_additions=True, reorder=False)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_machine_runs_clean_with_the_f1_fix(name: str) -> None:
    machine = machine_for(fixed(PRESETS[name]))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=50,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    assert machine.steps > 0


def test_machine_failure_is_reported_as_the_violated_property() -> None:
    from groupcheck.mutants import get_mutant

    machine = machine_for(get_mutant("assignor-assigns-twice").mutated_config())
    with pytest.raises(PropertyViolated, match=r"ValidTargetAssignment\.Unique"):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=50,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            ),
        )
    assert machine.last_path


def test_kafka_rules_exhibit_f1_bfs() -> None:
    result = bfs(PRESETS["STATIC"], budget_seconds=90)
    assert result.result == "violation", "F1 not found on STATIC"
    assert result.property == "OwnedPartitionsAreHeld"
    assert bfs(fixed(PRESETS["STATIC"]), budget_seconds=20).result == "ok"


def test_kafka_rules_exhibit_f2_hypothesis() -> None:
    outcome = run_hypothesis(PRESETS["LOSSY"], seed=0, profile="dev", budget_seconds=90)
    assert outcome.path is not None, "F2 not found on LOSSY"
    assert outcome.property in {"OwnedPartitionsAreHeld", "NoDoubleClientOwnership"}
