"""Issue 42 in the Hypothesis engine: an example's Convergence check is a violation only
when a fair loop or a stuck state shows it; a fair schedule its bound cut is counted as
undecided and the run is inconclusive, naming the bound."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.explore.hypothesis_engine import Profile, run_hypothesis
from groupcheck.mutants import MUTANTS
from invariants.liveness import undecided_reason
from model.presets import preset

SMALL_RUN = Profile(examples=4, steps=4, batch=4)


def test_a_cut_schedule_is_undecided_not_a_violation() -> None:
    tiny = replace(preset("TINY"), max_perturbations=0)
    out = run_hypothesis(tiny, seed=0, profile=SMALL_RUN, convergence_bound=3)
    assert out.path is None  # before: a Convergence violation in the first example
    assert out.property is None
    assert out.undecided
    assert set(out.undecided) == {3}
    (reason,) = undecided_reason(len(out.undecided), max(out.undecided))
    assert "its bound of 3 fair steps" in reason
    # The default bound (grown with the group): every example converges.
    assert run_hypothesis(tiny, seed=0, profile=SMALL_RUN).undecided == ()


def test_a_fair_loop_is_still_a_violation() -> None:
    looping = MUTANTS["reject-epoch-zero-rejoin"].mutated_config()
    out = run_hypothesis(looping, seed=0, profile=Profile(examples=20, steps=12, batch=20))
    assert out.property == "Convergence"
    assert "Shown:" in (out.message or "")
