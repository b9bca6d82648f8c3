"""A Convergence counterexample drawn and told whole (issue 38): the fair schedule's lasso
after the prefix, its loop marked as the repeating part, and what never happens in it;
properties described in their family's terms; the coordinator's assignment beside the
clients' ownership."""

from __future__ import annotations

from invariants.liveness import fair_loop
from model.path import Path
from model.presets import preset
from reports.render.dot import sequence_dot, timeline_dot
from reports.render.explain import explain
from reports.render.lasso import lasso_lines, never
from reports.render.report import property_text
from reports.render.view import view_of_lasso, view_of_path

LOSSY_CONVERGENCE = "0325235443"
"""``groupcheck explore --preset LOSSY --engine walk --only Convergence`` (seed 0)."""


def test_the_lasso_of_a_convergence_violation_is_found_drawn_and_told() -> None:
    config = preset("LOSSY")
    path = Path.decode(config, LOSSY_CONVERGENCE)
    states = list(path.states())
    lasso = fair_loop(states[-1], config)
    assert lasso is not None
    assert lasso.loop
    assert lasso.fair
    assert not lasso.stuck
    assert lasso.states[-1] == lasso.entry  # the loop returns to its entry
    assert len(lasso.states) == 1 + len(lasso.stem) + len(lasso.loop)
    # What never happens, in every state of the loop: B never consumes foo-1.
    (gap,) = never(lasso.loop_states)
    assert gap.startswith("client B never consumes [foo-1]")
    text = "\n".join(lasso_lines(lasso, len(path.actions) + 1))
    first = len(path.actions) + len(lasso.stem) + 1
    assert f"LOOP, repeating for ever (steps {first}–{first + len(lasso.loop) - 1}" in text
    assert "answered without an assignment" in text  # why: no assignment is ever resent
    view = view_of_lasso(states, path.actions, lasso, "Convergence", "")
    phases = [r.phase for r in view.rows]
    assert phases == [""] * len(path.actions) + ["stem"] * len(lasso.stem) + ["loop"] * len(
        lasso.loop
    )
    assert [r.index for r in view.rows if r.violation] == [first]
    seq = sequence_dot(view)
    assert f"↻ LOOP: steps {first}–{first + len(lasso.loop) - 1} repeat for ever" in seq
    assert f"↻ back to the state after step {first - 1}" in seq
    timeline = timeline_dot(view)
    assert f"↻{first + 1}</b>" in timeline
    assert "coordinator assigns" in timeline
    told = explain(states, path.actions, "Convergence", "m", lasso=lasso)
    assert "What never happens:" in told
    assert "So Convergence is violated" in told


def test_a_converging_state_has_no_lasso() -> None:
    config = preset("LOSSY")
    assert fair_loop(Path.decode(config, "").final(), config) is None


def test_the_coordinator_row_shows_a_hand_out_the_clients_row_cannot() -> None:
    """revoke-without-waiting: the coordinator drops A's foo-1 while A's client still
    consumes it — the clients' rows show nothing wrong, the coordinator's cell is orange."""
    from dataclasses import replace

    from groupcheck.mutants import get_mutant

    mutant = get_mutant("revoke-without-waiting")
    config = replace(preset("MUT2"), rules=mutant.rules)
    path = Path.decode(config, "000013110")
    view = view_of_path(list(path.states()), path.actions, "OwnedPartitionsAreHeld", "", 9)
    assert view.coordinator[-1][("foo", 1)] == "B wait"
    assert view.rows[-1].owners[("foo", 1)] == ("A",)
    assert '<td bgcolor="#ffb347">B wait</td>' in timeline_dot(view)


def test_classic_reports_describe_properties_in_classic_terms() -> None:
    consumer, _ = property_text("Convergence")
    classic, reference = property_text("Convergence", "classic")
    assert "target epoch" in consumer
    assert "target epoch" not in classic
    assert "generation" in classic
    assert "KIP-848" not in reference
    for name in ("MemberEpochMonotone", "OwnedPartitionsAreHeld", "OffsetCommitAtValidEpoch"):
        assert property_text(name, "classic") != property_text(name)


def test_a_classic_trace_gets_the_classic_check_description() -> None:
    from groupcheck.render import describe
    from groupcheck.validate.safety import NO_DOUBLE_OWNERSHIP
    from groupcheck.validate.safety_classic import CLASSIC_NO_DOUBLE_OWNERSHIP

    name = NO_DOUBLE_OWNERSHIP.name
    assert describe(name, "classic")[0] == CLASSIC_NO_DOUBLE_OWNERSHIP.description
    assert describe(name)[0] == NO_DOUBLE_OWNERSHIP.description


def test_the_verdict_and_the_report_read_one_fair_loop() -> None:
    """One definition of a fair loop that never converges (``fair_loop``): the steps the
    explorer's message cites are the loop the report draws; a schedule its bound cut shows
    no loop, and the report says so rather than drawing one."""
    from model import system

    config = preset("LOSSY")
    lasso = fair_loop(Path.decode(config, LOSSY_CONVERGENCE).final(), config)
    assert lasso is not None
    assert lasso.shown
    first, last = len(lasso.stem) + 1, len(lasso.stem) + len(lasso.loop)
    assert f"steps {first}-{last} return to the state after step {first - 1}" in lasso.describe()
    tiny = preset("TINY")
    cut = fair_loop(system.initial(tiny), tiny, 3)
    assert cut is not None
    assert not cut.shown
    assert (cut.loop, cut.steps, cut.bound, len(cut.stem)) == ((), 3, 3, 3)
    assert "shows no fair loop within its bound" in "\n".join(lasso_lines(cut, 1))
