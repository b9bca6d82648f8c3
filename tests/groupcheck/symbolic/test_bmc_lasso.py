"""Convergence by bounded model checking: the lasso search over the client layer
(invariants/z3/proof/bmc_lasso.py) finds the two liveness-only mutants at their shortest
lasso, the Python clients and coordinator walk each lasso and close its loop, and the
model's fair schedule does not converge from the lifted loop entry; the reference rules
have no lasso at the same depth on the same scenario; a lasso the model's fair schedule
converges on is not reported as a violation.

Every bound here is a depth or a number of states, never seconds. The client layer's
unrolling costs about half a CPU second a step, so each search here takes several.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from groupcheck.cli import main
from groupcheck.mutants import MUTANTS, lasso_depths, variant_kernel
from groupcheck.prove import _initial_group_epoch, lasso_row
from invariants.z3.proof.bmc import universe_of
from invariants.z3.proof.bmc_clients import Layer
from invariants.z3.proof.bmc_lasso import (
    CONVERGENCE,
    LASSO_VARIANTS,
    LassoOutcome,
    replay_lasso,
    search_lasso,
)
from invariants.z3.proof.state import UNREVOKED
from invariants.z3.proof.transition import VARIANTS, Options

NO_CLOCK = ["--budget", "3600"]
"""The command's wall-clock budget (60 s by default) out of the way: these searches are
bounded by depth, and a loaded machine's clock must not cut one short (inconclusive, exit
3, and a Z3 context left cancelled for the next test)."""

LASSOS = {"ack-ignored": 9, "reject-epoch-zero-rejoin": 9}
"""Per liveness-only variant: the length of its shortest lasso on the mutant's scenario
(the loop's entry is the solver's choice among the shortest: 7 and 6 at the time of
writing)."""


def _search(name: str, *, variant: str | None) -> LassoOutcome:
    config = MUTANTS[name].config
    universe = universe_of(config)
    return search_lasso(
        LASSOS[name],
        Options.of(config, variant, kernel=variant_kernel(variant)),
        universe=universe,
        layer=Layer.of(config, universe, variant, lossy=True),
        group_epoch=_initial_group_epoch(config),
    )


@pytest.fixture(scope="module")
def ack_ignored() -> LassoOutcome:
    return _search("ack-ignored", variant="ack-ignored")


def test_the_lasso_variants_are_symbolic_variants() -> None:
    assert set(LASSO_VARIANTS) == set(LASSOS)
    # explore --engine bmc --mutant M's default depth: the entries' Mutant.lasso_depth
    assert lasso_depths(LASSO_VARIANTS) == LASSOS
    assert set(LASSO_VARIANTS) <= set(VARIANTS)


@pytest.mark.slow
def test_ack_ignored_is_a_lasso_the_model_does_not_converge_on(ack_ignored: LassoOutcome) -> None:
    """The coordinator never takes the acknowledgement: the shortest lasso has nine steps,
    and its loop is the two clients' heartbeats, answered with nothing new."""
    out = ack_ignored
    assert (out.status, out.depth) == ("violation", LASSOS["ack-ignored"])
    assert out.lasso is not None
    entry = out.lasso.loop
    path = out.lasso.path
    assert path.states[-1] == path.states[entry]
    assert path.clients[-1] == path.clients[entry]
    # The loop: both clients' heartbeats, the revoking member never moving on.
    loop = path.steps[entry:]
    assert {str(params["member"]) for _, params in loop} == {"m0", "m1"}
    assert all(
        fam in ("ClientHeartbeat", "SendHeartbeat", "DeliverHeartbeat", "HeartbeatResponse")
        for fam, _ in loop
    )
    assert any(m.state == UNREVOKED for m in path.states[entry].members.values())
    mutant = MUTANTS["ack-ignored"]
    config = mutant.mutated_config()
    assert replay_lasso(out.lasso, config.rules, config)
    row, lifted = lasso_row(out.lasso, config, universe_of(config), lift_states=2_000)
    assert row["status"] == "violation"
    assert row["replayed"] is True
    assert lifted is not None
    assert lifted.path is not None
    assert lifted.property == CONVERGENCE


def test_a_lasso_the_model_converges_on_is_not_a_violation(
    ack_ignored: LassoOutcome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lasso, with the model's fair schedule made to converge everywhere: the
    verdict is inconclusive (not fair in the model's sense), with no trace."""
    from invariants import liveness

    real = liveness.fair_schedule
    calls: list[object] = []

    def converging(state: object, *args: object, **kwargs: object) -> object:
        calls.append(state)
        taken, _last, _ok = real(state, *args, **kwargs)  # type: ignore[arg-type]
        return taken, _last, True

    monkeypatch.setattr(liveness, "fair_schedule", converging)
    assert ack_ignored.lasso is not None
    config = MUTANTS["ack-ignored"].mutated_config()
    row, lifted = lasso_row(ack_ignored.lasso, config, universe_of(config), lift_states=300)
    assert calls, "the model's fair schedule was never asked"
    assert row["status"] == "inconclusive"
    assert "not fair in the model's sense" in row["reason"]
    assert lifted is not None
    assert lifted.path is None


@pytest.mark.slow
def test_reject_epoch_zero_rejoin_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """``explore --engine bmc --mutant reject-epoch-zero-rejoin``: a joining client's
    response lost, its retry at epoch 0 fenced, and the loop of fenced heartbeat and
    rejoin; the model's fair schedule does not converge from the lifted entry, and the run
    directory is written."""
    depth = LASSOS["reject-epoch-zero-rejoin"]
    args = ["explore", "--engine", "bmc", "--mutant", "reject-epoch-zero-rejoin", *NO_CLOCK]
    args += ["--depth", str(depth), "--json", "--quiet", "--out", str(tmp_path)]
    assert main(args) == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["property"], row["status"], row["depth"]) == (CONVERGENCE, "violation", depth)
    assert 0 <= row["loop"]["entry"] < depth
    assert {"FencedHeartbeat", "Rejoin"} <= {s.split("(")[0] for s in row["loop"]["steps"]}
    assert row["replayed"] is True
    assert row["lift"]["status"] == "lifted"
    assert doc["run_dir"] is not None
    assert pathlib.Path(doc["trace"]).is_file()
    written = json.loads((pathlib.Path(doc["run_dir"]) / "counterexample.json").read_text())
    assert written["property"] == CONVERGENCE
    assert "loops from its state" in written["message"]


@pytest.mark.slow
def test_the_reference_rules_have_no_lasso_on_mut2_lossy(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """``--only Convergence`` on the reference rules of MUT2_LOSSY: no fair non-converging
    lasso of at most nine steps (the length of both mutants' lassos), exit 0, nothing
    written. This covers MUT2 too: the layer reads neither's other perturbations (Leave is
    the leave variants', Crash no variant's), so MUT2's layer is MUT2_LOSSY's without the
    lossy steps, and a lasso of the one is a lasso of the other (the lossy steps add the
    rejoin's fairness only for FENCED clients, which MUT2's layer never has)."""
    depth = LASSOS["reject-epoch-zero-rejoin"]
    args = ["explore", "--engine", "bmc", "--preset", "MUT2_LOSSY", "--only", CONVERGENCE]
    args += NO_CLOCK
    args += ["--depth", str(depth), "--json", "--quiet", "--out", str(tmp_path)]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["status"], row["depth"]) == ("ok", depth)
    assert "no fair non-converging lasso of at most 9 steps" in row["checked"]
    assert doc["run_dir"] is None
