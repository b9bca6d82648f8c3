"""Hypothesis state machines built from the model, one per preset: a rule per action
family, every property after every step.

With Kafka's rules the presets with losses or target churn exhibit finding F1
(docs/findings.md) and the reordering preset F2; the machines must find them. With the F1
client fix (``report_pending_additions``) and without cross-connection reordering, every
preset must run clean under the active Hypothesis profile (``ci`` under CI=true).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from groupcheck.explore.bfs import bfs
from groupcheck.explore.hypothesis_engine import run_hypothesis
from groupcheck.explore.machine import PropertyViolated, machine_for
from model.config import Config
from model.presets import EXAMPLES, PRESETS

NO_SHRINK = settings(settings.default, phases=[Phase.explicit, Phase.reuse, Phase.generate])
"""The loaded profile without Hypothesis' shrinking: the failure tests check which property
the machine reports, not the shrinker (14 and 21 CPU s of it; the engine's shrinking is
tested through ``run_hypothesis`` in tests/groupcheck/explore/test_explore.py)."""


def fixed(config: Config) -> Config:
    return replace(config, report_pending_additions=True, reorder=False)


@pytest.mark.parametrize("name", sorted(c.name for c in EXAMPLES))
def test_preset_machine_runs_clean_with_the_f1_fix(name: str) -> None:
    machine = machine_for(fixed(PRESETS[name]))
    run_state_machine_as_test(machine)  # the loaded profile's examples and steps
    assert machine.examples >= settings.default.max_examples
    assert machine.steps > 0


def test_machine_failure_is_reported_as_the_violated_property() -> None:
    from groupcheck.mutants import get_mutant

    machine = machine_for(get_mutant("assignor-assigns-twice").mutated_config())
    with pytest.raises(PropertyViolated, match=r"ValidTargetAssignment\.Unique"):
        run_state_machine_as_test(machine, settings=NO_SHRINK)
    assert machine.last_path


def test_kafka_rules_exhibit_f1_bfs() -> None:
    result = bfs(PRESETS["STATIC"])
    assert result.result == "violation", "F1 not found on STATIC"
    assert result.property == "OwnedPartitionsAreHeld"
    # With the client-side fix, no violation within the depth at which F1 appears.
    assert result.depth is not None
    fixed_result = bfs(fixed(PRESETS["STATIC"]), max_depth=result.depth)
    assert fixed_result.property is None, fixed_result.message
    assert "every state within" in fixed_result.checked or fixed_result.exhausted


def test_kafka_rules_exhibit_f2_hypothesis() -> None:
    """The machine finds a safety violation on LOSSY. The convergence check at each
    example's end is off: it draws nothing, so the examples (and the one that fails, the
    same with it on) are the same, and it cost about 30% of the run's CPU time (the
    engine's convergence check: tests/groupcheck/explore/test_hypothesis_convergence_shown.py)."""
    outcome = run_hypothesis(PRESETS["LOSSY"], seed=0, profile="dev", check_convergence=False)
    assert outcome.path is not None, "F2 not found on LOSSY"
    assert outcome.property in {"OwnedPartitionsAreHeld", "NoDoubleClientOwnership"}


@pytest.mark.parametrize("name", ["CLASSIC_EAGER", "CLASSIC_COOPERATIVE", "CLASSIC_STATIC"])
def test_classic_preset_machine_runs_clean(name: str) -> None:
    machine = machine_for(PRESETS[name])
    run_state_machine_as_test(machine)  # the loaded profile's examples and steps
    assert machine.examples >= settings.default.max_examples
    assert machine.steps > 0


def test_classic_machine_failure_is_reported_as_the_violated_property() -> None:
    from groupcheck.mutants import get_mutant

    machine = machine_for(get_mutant("assign-without-withholding").mutated_config())
    with pytest.raises(PropertyViolated, match="MovesOnlyReleased"):
        run_state_machine_as_test(machine, settings=NO_SHRINK)
    assert machine.last_path
