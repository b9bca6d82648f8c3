"""A BMC counterexample lifted to a model trace and published like the other engines'
(groupcheck/explore/lift.py, ``groupcheck explore --engine bmc``).

Every bound is a depth or a number of states, never seconds.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.explore.lift import LEVELS, alpha, lift, matches, model_namer, rename
from groupcheck.mutants import MUTANTS
from groupcheck.symbolic.bmc_lifted import mutant_bound
from invariants.z3.proof.bmc import search, universe_of
from invariants.z3.proof.state import project
from invariants.z3.proof.transition import Options
from model.consumer.system import consumer_initial

NO_CLOCK = ["--budget", "3600"]
"""The command's wall-clock budget (60 s by default) out of the way: these searches are
bounded by depth, and a loaded machine's clock must not cut one short (inconclusive, exit
3, and a Z3 context left cancelled for the next test)."""

# The mutants with a symbolic variant, the property BMC finds and its shortest depth.
# The two marked slow lift at the members level after about 17,000 nodes each (a BFS of
# the model to depth 13 and 15); strict-commit-epoch's after about 25,000.
CASES = [
    ("ignore-partition-epochs", "NoServerError", 2),
    pytest.param(
        "bookkeeping-drops-pending", "NoDoubleMemberAssignment", 4, marks=pytest.mark.slow
    ),
    pytest.param(
        "accept-stale-commit-epoch", "OffsetCommitAtValidEpoch", 2, marks=pytest.mark.slow
    ),
    ("accept-commit-from-unknown-member", "OffsetCommitAtValidEpoch", 1),
    # The client layer with its leaves: the path lifts to the kill matrix's 8 steps.
    ("adopt-negative-epoch", "ClientEpochMonotone", 4),
    # Over the KIP-1251 assignment epochs: B's commit at an epoch it never had is no
    # client's, so the path lifts at the members level only (about 25,000 nodes), to the
    # kill matrix's race of A's own commit (14 steps).
    pytest.param("strict-commit-epoch", "HolderCommitsAccepted", 3, marks=pytest.mark.slow),
]

RUN_FILES = {
    ".groupcheck",
    "config.toml",
    "counterexample.json",
    "explanation.txt",
    "index.html",
    "ownership.dot",
    "ownership.svg",
    "reproduce.py",
    "reproduce.sh",
    "sequence.dot",
    "sequence.svg",
    "trace.itf.json",
    "trace.ndjson",
}
"""What a bfs counterexample's run directory holds (reports/artifacts.py)."""


def _bmc(mutant: str, goal: str, depth: int | None, out: Path, *extra: str) -> list[str]:
    """``explore --engine bmc`` on the mutant's goal; no ``--depth`` for ``depth=None``."""
    bound = [] if depth is None else ["--depth", str(depth)]
    return [
        "explore",
        "--engine",
        "bmc",
        "--mutant",
        mutant,
        "--only",
        goal,
        *bound,
        "--out",
        str(out),
        "--quiet",
        *NO_CLOCK,
        *extra,
    ]


@pytest.mark.parametrize(("mutant", "goal", "depth"), CASES, ids=str)
def test_a_bmc_counterexample_is_lifted_published_and_replays(
    mutant: str, goal: str, depth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without --depth a mutant run searches to its variant's shortest path.
    assert main([*_bmc(mutant, goal, None, tmp_path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["depth"] == depth == MUTANTS[mutant].bmc_depth
    assert doc["bound"] is None
    (row,) = doc["properties"]
    assert (row["status"], row["depth"]) == ("violation", depth)
    assert row["replayed"] is True
    assert row["lift"]["status"] == "lifted"
    # The model trace's first violation is its last step, of the property BMC found.
    assert doc["property"] == goal
    run = Path(doc["run_dir"])
    assert run.parent == tmp_path
    assert run.name.endswith("-bmc")
    assert {p.name for p in run.iterdir()} >= RUN_FILES
    ce = json.loads((run / "counterexample.json").read_text())
    assert ce["engine"] == "bmc"
    assert ce["property"] == goal
    assert ce["length"] == doc["length"] == row["lift"]["length"]
    assert ce["reproduce"] == doc["reproduce"]
    assert "--mutant " + mutant in (run / "reproduce.sh").read_text()
    # groupcheck replay of the path code reproduces the violation at the last step.
    assert main(["replay", "--mutant", mutant, "--path", ce["code"], "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["step"] == ce["length"]
    assert goal in {v["property"] for v in again["violations"]}


def test_a_mutant_run_short_of_its_shortest_path_says_what_the_depth_bounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--depth 1`` on a mutant whose shortest path has 2 steps: ok, true of depth 1, and
    the output says the depth bounds it, the depth that finds it, and that the mutant
    matrix kills it."""
    args = _bmc("ignore-partition-epochs", "NoServerError", 1, tmp_path)
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], doc["depth"], doc["run_dir"]) == ("ok", 1, None)
    assert doc["bound"] == (
        "bounded by depth 1: the shortest known path of ignore-partition-epochs has 2 "
        "steps (the depth without --depth); the mutant matrix (groupcheck mutants) kills it"
    )
    assert main(args) == 0
    assert doc["bound"] in capsys.readouterr().out.splitlines()[-1]
    assert not list(tmp_path.iterdir())


def test_a_mutant_run_without_a_known_path_is_inconclusive_unless_bounded_by_depth() -> None:
    """No path of the mutant known (``classic_bmc.VARIANT_UNREACHED``): nothing found at
    the default depth is no answer (inconclusive); at a ``--depth`` asked for it is ok
    within that depth. A violation, or a run without a mutant, has no bound to state."""
    unknown = {"known": None, "unreached": "none lifts"}
    result, bound = mutant_bound("ok", "m", 3, given=False, **unknown)
    assert result == "inconclusive"
    assert bound is not None
    assert "path of m needs is not known (none lifts)" in bound
    assert mutant_bound("ok", "m", 3, given=True, **unknown) == ("ok", bound)
    assert mutant_bound("inconclusive", "m", 3, given=True, **unknown)[0] == "inconclusive"
    assert mutant_bound("violation", "m", 3, given=False, **unknown) == ("violation", None)
    assert mutant_bound("ok", None, 3, given=False, known=None) == ("ok", None)
    # At or past the shortest known path (another goal asked with --only): ok stays ok.
    result, bound = mutant_bound("ok", "m", 4, given=False, known=4)
    assert result == "ok"
    assert bound is not None
    assert bound.startswith("bounded by depth 4 (the shortest known path of m has 4 steps)")


def test_a_lift_budget_too_small_says_so_and_writes_no_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _bmc("accept-stale-commit-epoch", "OffsetCommitAtValidEpoch", 2, tmp_path)
    assert main([*args, "--max-states", "50"]) == 1
    text = capsys.readouterr().out
    assert "Python replay confirmed" in text
    assert "replayed on the coordinator only; no model trace within 50 states per level" in text
    assert "no run directory written" in text
    assert not list(tmp_path.iterdir())
    assert main([*args, "--max-states", "50", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_dir"] is None
    assert doc["reproduce"] is None
    (row,) = doc["properties"]
    assert row["replayed"] is True
    assert row["lift"]["status"] == "not lifted"
    assert [a["level"] for a in row["lift"]["attempts"]] == [lv.name for lv in LEVELS]
    assert not any(a["found"] for a in row["lift"]["attempts"])


def test_the_lift_maps_the_path_to_the_configs_names() -> None:
    """The universe's members and partitions are the config's: the path's first state after
    a join is the model's group after the same join, at the members level; the path's
    states match themselves at every level, and a model member of a restarted client is
    named by its client."""
    mutant = MUTANTS["accept-stale-commit-epoch"]
    config = replace(mutant.config, rules=mutant.rules)
    universe = universe_of(config)
    out = search(
        "OffsetCommitAtValidEpoch",
        2,
        Options.of(config, mutant.name),
        universe=universe,
        group_epoch=consumer_initial(config).group.group_epoch,
    )
    assert out.path is not None
    named = [rename(s, universe) for s in out.path.states]
    joined = named[1]
    assert set(joined.members) <= set(universe.members)
    assert {p for mv in joined.members.values() for p in mv.assigned} <= set(universe.partitions)
    for lv in LEVELS:
        a = alpha(joined, lv.name, lambda m: m)
        assert matches(a, a)
    # The initial model state is the path's initial state at every level.
    initial = project(consumer_initial(config))
    for lv in LEVELS:
        assert matches(
            alpha(initial, lv.name, model_namer(config)), alpha(named[0], lv.name, lambda m: m)
        )
    assert model_namer(config)("B.1") == "B"
    # A budget of one state cannot lift anything and says so.
    tiny = lift(out.path, config, universe, max_states=1)
    assert tiny.status == "not lifted"
    assert tiny.path is None
    assert "no model trace within 1 states per level" in tiny.summary()


def test_a_path_of_the_models_own_states_lifts_exactly() -> None:
    """The projections of a model counterexample, named as BMC names them, form a path the
    ``exact`` level lifts: to a trace no longer than the model's, violating the same
    property."""
    from invariants.z3.engine import SymPath
    from invariants.z3.proof.state import Concrete
    from model.path import Path as ModelPath

    mutant = MUTANTS["ignore-partition-epochs"]
    config = replace(mutant.config, rules=mutant.rules)
    universe = universe_of(config)
    model_path = ModelPath.decode(config, "003111")  # bfs's counterexample (NoServerError)
    member = {m: f"m{i}" for i, m in enumerate(universe.members)}
    part = {p: ("p", i) for i, p in enumerate(universe.partitions)}

    def symbolic(v: Concrete) -> Concrete:
        def ps(xs: frozenset[tuple[str, int]]) -> frozenset[tuple[str, int]]:
            return frozenset(part[x] for x in xs)

        return Concrete(
            members={
                member[k]: replace(
                    mv,
                    assigned=ps(mv.assigned),
                    revoking=ps(mv.revoking),
                    subscribed=ps(mv.subscribed),
                )
                for k, mv in v.members.items()
            },
            target=frozenset((member[k], part[x]) for k, x in v.target),
            committed={part[x]: (member[k], e) for x, (k, e) in v.committed.items()},
            partition_epochs={part[x]: e for x, e in v.partition_epochs.items()},
            group_epoch=v.group_epoch,
            assignment_epoch=v.assignment_epoch,
            loading=v.loading,
        )

    states: list[Concrete] = []
    for s in model_path.states():
        v = symbolic(project(s))
        if not states or states[-1] != v:
            states.append(v)
    out = lift(SymPath("NoServerError", tuple(states), ()), config, universe, max_states=5000)
    assert out.status == "lifted"
    assert out.level == "exact"
    assert out.property == "NoServerError"
    assert out.path is not None
    assert len(out.path.actions) <= len(model_path.actions)
