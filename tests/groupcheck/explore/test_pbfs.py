"""The parallel BFS (``groupcheck.explore.pbfs``) searches what the serial engine searches:
the same distinct states and steps, the same counterexample (so the same run artifacts),
the same cut under ``max_states`` and ``depth``. Bounded by states: every config here is
small or stops at its first counterexample."""

from __future__ import annotations

import itertools
import json
import pickle
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from groupcheck.cli import main
from groupcheck.explore import pbfs
from groupcheck.explore.bfs import bfs
from groupcheck.explore.pbfs import (
    _apart_after,
    _assign,
    _balance,
    _member,
    _merge,
    _mix,
    _Share,
    _unique,
    _Worker,
    collision_probability,
    fingerprint,
    parallel_bfs,
)
from groupcheck.explore.result import ExploreResult
from groupcheck.mutants import get_mutant
from groupcheck.tla.configs import CONFIGS, TLA_DIR
from invariants.check import Checker
from model import system
from model.config import ClientSpec, Config
from model.consumer import system as consumer_system
from model.presets import preset

PIN0 = Config(
    kafka_version="4.2",
    name="PIN0",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
)
"""Two interchangeable clients join a topic of two partitions
(tests/groupcheck/explore/test_explore.py pins 1,968 states, 985 with symmetry)."""


@cache
def serial_bfs(config: Config, *, symmetry: bool = False) -> ExploreResult:
    """The serial engine's complete search of ``config``, run once per module: several
    tests hold the parallel engine to the same serial search (they only read it)."""
    return bfs(config, symmetry=symmetry)


def same_search(serial: ExploreResult, parallel: ExploreResult) -> None:
    assert parallel.result == serial.result
    assert parallel.property == serial.property
    assert parallel.message == serial.message
    assert parallel.distinct_states == serial.distinct_states
    assert parallel.steps == serial.steps
    assert parallel.depth == serial.depth
    assert parallel.exhausted == serial.exhausted
    assert parallel.reasons == serial.reasons
    if serial.path is None:
        assert parallel.path is None
        assert parallel.witnesses == serial.witnesses
    else:
        assert parallel.path is not None
        assert parallel.path.actions == serial.path.actions


def test_tiny_same_states_steps_and_witnesses_as_serial() -> None:
    config = preset("TINY")
    serial = bfs(config)
    parallel = parallel_bfs(config, workers=2)
    assert serial.result == "ok"
    assert parallel.distinct_states == 26424  # tla/manifest.json, TINY
    same_search(serial, parallel)
    assert parallel.checked == "26424 distinct states, exhausted on 2 workers"
    # Fingerprints: 8 bytes visited + 8 parent + 2 action index, and the convergence memo.
    assert parallel.bytes_per_state is not None
    assert 18 <= parallel.bytes_per_state < 64
    assert parallel.collision_probability == collision_probability(26424, serial.steps)
    assert 0 < parallel.collision_probability < 1e-9


@pytest.mark.parametrize("workers", [2, 3])
def test_mutant_same_shortest_counterexample_as_serial(workers: int) -> None:
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    serial = serial_bfs(config)
    assert serial.result == "violation"
    assert serial.path is not None
    assert len(serial.path.actions) == 9  # tla/manifest.json: trace_length 9
    same_search(serial, parallel_bfs(config, workers=workers))


@pytest.mark.parametrize("name", ["sticky-without-generation", "no-pending-sync-timer"])
def test_classic_mutants_same_counterexample_as_serial(name: str) -> None:
    mutant = get_mutant(name)
    config = replace(mutant.config, rules=mutant.rules)
    serial = bfs(config)
    assert serial.result == "violation"
    same_search(serial, parallel_bfs(config, workers=2))


def test_classic_preset_pinned_count_on_workers() -> None:
    result = parallel_bfs(preset("CLASSIC_EAGER"), workers=2)
    assert result.result == "ok"
    assert result.exhausted is True
    assert result.distinct_states == 7354  # tests/model/test_classic_protocol.py, PINNED


@pytest.mark.parametrize("bound", [1, 2, 777, 1500])
def test_state_bound_cuts_where_the_serial_engine_does(bound: int) -> None:
    serial = bfs(PIN0, max_states=bound)
    parallel = parallel_bfs(PIN0, workers=2, max_states=bound)
    assert serial.result == "inconclusive"
    # Not always ``bound``: the last state expanded may discover several.
    assert bound <= parallel.distinct_states <= bound + 10
    same_search(serial, parallel)


def test_depth_bound_and_symmetry_as_serial() -> None:
    same_search(bfs(PIN0, max_depth=6), parallel_bfs(PIN0, workers=2, max_depth=6))
    serial = serial_bfs(PIN0, symmetry=True)
    parallel = parallel_bfs(PIN0, workers=2, symmetry=True)
    assert parallel.distinct_states == 985
    same_search(serial, parallel)


def test_unchecked_convergence_and_a_missed_witness_stay_honest() -> None:
    lone = Config(
        name="LONE", kafka_version="4.2", topics=(("foo", 1),), clients=(ClientSpec("A", ("foo",)),)
    )
    serial = bfs(lone)
    parallel = parallel_bfs(lone, workers=2)
    assert parallel.result == "inconclusive"
    assert any("witnesses missed" in r for r in parallel.reasons)
    same_search(serial, parallel)


def test_workers_take_over_a_search_begun_in_one_process() -> None:
    """``serial_until``: the first levels in the calling process, the rest on forked
    workers that adopt its frontier (PIN0's level 11 holds 126 states, the mutant's level
    7 142) — the same search, with and without symmetry, and the same counterexample."""
    handed = parallel_bfs(PIN0, workers=2, serial_until=100)
    assert handed.workers == 2
    assert handed.distinct_states == 1968
    same_search(serial_bfs(PIN0), handed)
    # Symmetry (two workers find a state alike when the states as found are equal, not
    # only their canonical keys), within 14 steps: canonicalising is slow.
    symmetric = parallel_bfs(PIN0, workers=2, symmetry=True, serial_until=50, max_depth=14)
    assert symmetric.workers == 2
    same_search(bfs(PIN0, symmetry=True, max_depth=14), symmetric)
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    found = parallel_bfs(config, workers=2, serial_until=100)
    assert found.workers == 2
    same_search(serial_bfs(config), found)


def test_convergence_counterexample_as_serial_after_the_hand_over() -> None:
    """A liveness counterexample (tests/model/test_live_timers.py: a hung member blocks the
    group without the rebalance timer) found by workers that took over early in the search."""
    from tests.model.test_live_timers import STALL

    config = replace(STALL, live_timers=False)
    serial = bfs(config)
    assert serial.property == "Convergence"
    handed = parallel_bfs(config, workers=2, serial_until=5)
    assert handed.workers == 2
    same_search(serial, handed)


def test_a_search_whose_levels_stay_small_stays_in_one_process() -> None:
    serial = serial_bfs(PIN0)
    alone = parallel_bfs(PIN0, workers=2, serial_until=10_000)
    assert alone.workers == 1
    assert (
        alone.checked
        == "1968 distinct states, exhausted in one process (no level reached 10000 states)"
    )
    same_search(serial, alone)


def test_fingerprint_equal_for_equal_states() -> None:
    config = preset("TINY")
    a = system.initial(config)
    b = system.initial(config)
    assert a is not b
    assert fingerprint(a) == fingerprint(b)
    step = system.step(a, system.enabled(a, config)[0], config)
    assert fingerprint(step) != fingerprint(a)
    # The workers fingerprint their successors in numpy, from the Python hashes.
    keys = [a, step, -7, *(f"key {i}" for i in range(8))]  # negative hashes among them
    hashes = np.array([hash(k) for k in keys], dtype=np.int64)
    assert (hashes < 0).any()
    assert _mix(hashes.view(np.uint64)).tolist() == [fingerprint(k) for k in keys]


def test_least_key_wins_and_states_found_alike_even_the_workers_out() -> None:
    """``_assign``: of a state's discoveries the least key wins (its finder stores the
    parent pointer); a state two workers found as the same value may be held by either,
    and goes to the one holding fewer; one found as different values stays with the
    winner (its enabled actions are the found state's)."""

    def arrays(
        fps: list[int], keys: list[int], exact: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.array(fps, dtype=np.uint64),
            np.array(keys, dtype=np.int64),
            np.array(exact, dtype=np.int64),
        )

    # Worker 0 found states 10, 11, 12, 13 first; worker 1 found 12 and 13 again (12 as
    # the same value, 13 as another) and 14 alone.
    zero = arrays([10, 11, 12, 13], [0, 1, 2, 3], [100, 101, 102, 103])
    one = arrays([12, 13, 14], [5, 6, 7], [102, 999, 104])
    merged, level, shares = _assign([zero, one], 2, split=False)
    assert merged.tolist() == [0, 1, 2, 3, 7]
    assert level.tolist() == [10, 11, 12, 13, 14]
    assert shares[0].record.tolist() == [0, 1, 2, 3]
    assert shares[1].record.tolist() == [2]  # state 14
    # Worker 0 would hold 4 states and worker 1 one: state 12 moves to worker 1, with
    # worker 0's rank and key; state 13 cannot.
    assert shares[0].hold.tolist() == [0, 1, 3]
    assert shares[0].ranks.tolist() == [0, 1, 3]
    assert shares[1].hold.tolist() == [0, 2]
    assert shares[1].ranks.tolist() == [2, 4]
    assert shares[1].keys.tolist() == [2, 7]
    # Forked copies of one worker share its candidates by rank, in turn.
    _, _, split = _assign([zero], 2, split=True)
    assert [s.hold.tolist() for s in split] == [[0, 2], [1, 3]]
    assert [s.record.tolist() for s in split] == [[0, 2], [1, 3]]


def test_balance_hands_states_from_the_heaviest_to_the_lightest() -> None:
    """``_balance``: the workers holding most hand states to those holding least, spread
    over the giver's states, until no two differ by ``2 * least`` or more."""
    held = np.array([0] * 10 + [1] * 2)
    to = _balance(held, 2, least=1)
    assert np.bincount(to).tolist() == [6, 6]
    assert (to[10:] == 1).all()  # the taker's own states stay
    moved = np.flatnonzero(to != held).tolist()
    assert len(moved) == 4
    assert moved[0] == 0
    assert moved[-1] == 9
    assert (_balance(held, 2, least=5) == held).all()  # a difference of 8 < 2 * 5
    three = _balance(np.array([0] * 9 + [2] * 3), 3, least=1)
    assert np.bincount(three, minlength=3).tolist() == [4, 4, 4]
    assert (_balance(np.array([0, 0, 0]), 1, least=1) == 0).all()  # one worker


def test_assign_hands_over_what_even_out_cannot_move() -> None:
    """States found by one worker only cannot move without crossing processes: with
    ``least`` reached the heavy worker gives some, with their ranks and keys, and keeps
    recording the parent pointers of all it found first."""
    zero = (
        np.array([10, 11, 12, 13, 14, 15], dtype=np.uint64),
        np.arange(6, dtype=np.int64),
        np.arange(100, 106, dtype=np.int64),
    )
    one = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    _, _, kept = _assign([zero, one], 2, split=False, least=4)
    assert kept[0].hold.tolist() == [0, 1, 2, 3, 4, 5]
    assert len(kept[0].give) == 0
    _, _, shares = _assign([zero, one], 2, split=False, least=1)
    assert shares[0].record.tolist() == [0, 1, 2, 3, 4, 5]
    assert shares[1].record.tolist() == []
    given = shares[0].give.tolist()
    assert len(given) == 3
    assert shares[0].give_to.tolist() == [1, 1, 1]
    assert shares[0].give_ranks.tolist() == given == shares[0].give_keys.tolist()
    assert sorted(shares[0].hold.tolist() + given) == [0, 1, 2, 3, 4, 5]
    assert len(shares[1].hold) == 0
    assert len(shares[1].give) == 0


def test_states_handed_over_give_the_serial_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every difference handed over (``HAND_OVER_LEAST`` 1), states cross processes
    on many levels; the search and its counterexamples stay the serial engine's."""
    moved: list[int] = []
    balance = pbfs._balance

    def counted(held_by: np.ndarray, workers: int, least: int) -> np.ndarray:
        to = balance(held_by, workers, least)
        moved.append(int((to != held_by).sum()))
        return to

    monkeypatch.setattr(pbfs, "HAND_OVER_LEAST", 1)
    monkeypatch.setattr(pbfs, "_balance", counted)
    same_search(serial_bfs(PIN0), parallel_bfs(PIN0, workers=3))
    assert sum(moved) > 0
    moved.clear()
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    same_search(serial_bfs(config), parallel_bfs(config, workers=3))
    assert sum(moved) > 0


def test_a_state_handed_over_is_checked_in_rank_order() -> None:
    """``_Worker.keep``: a state taken from another worker is checked with the worker's
    own, in rank order, and a violation there is reported at its key's place."""
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    serial = serial_bfs(config)
    assert serial.path is not None
    bad = serial.path.final()
    worker = _Worker(
        index=1,
        config=config,
        checker=Checker(),
        canonical=lambda s: s,
        check_convergence=False,
        convergence_bound=0,
        z3=False,
        max_depth=None,
    )
    empty = np.zeros(0, dtype=np.int64)
    share = _Share(empty, empty, empty, empty)
    key = (7 << pbfs.ACTION_BITS) | 3
    event = worker.keep(share, [(4, key, bad, 99)])
    assert event is not None
    assert event.order == (7, 3, 1)
    assert event.fp == 99
    assert event.violation.property == serial.property
    fine = system.initial(config)
    assert worker.keep(share, [(5, 0, fine, 1), (2, 0, fine, 2)]) is None
    assert [(fp, rank) for fp, _, _, rank in worker.frontier] == [(2, 2), (1, 5)]


def test_young_collections_grow_apart_while_they_free_nothing() -> None:
    """``_serve``: each collection that frees nothing doubles the commands before the next,
    up to ``YOUNG_COLLECTIONS_APART``; one that frees something brings them back to 1."""
    most = pbfs.YOUNG_COLLECTIONS_APART
    apart, seen = 1, []
    while len(seen) < 8:
        apart = _apart_after(apart, freed=0)
        seen.append(apart)
    assert seen[0] == 2
    assert all(b == min(2 * a, most) for a, b in itertools.pairwise(seen))
    assert seen[-1] == most
    assert _apart_after(most, freed=5) == 1
    assert _apart_after(1, freed=1) == 1


def test_a_state_taken_from_another_worker_shares_the_takers_group_record() -> None:
    """``_shared``: a handed-over KIP-848 state, unpickled, gets the group record this
    process's steps built for its value; a classic state is kept as it is."""
    state = consumer_system.with_shared_group(system.initial(PIN0))
    copy = pickle.loads(pickle.dumps(state))
    assert copy.group is not state.group
    taken = pbfs._shared(copy)
    assert taken == state
    assert taken.group is state.group
    classic = system.initial(preset("CLASSIC_COOPERATIVE"))
    assert pbfs._shared(classic) is classic


def test_fingerprint_sets_agree_with_numpys_own() -> None:
    """The sorted-set helpers against numpy's reference functions, on arrays with
    duplicates, empty ones and single values: ``_unique`` is ``np.unique``, ``_member``
    (binary searches in increasing order, answers in the values' order) is ``np.isin``,
    and ``_merge`` is ``np.union1d``."""
    rng = np.random.default_rng(7)
    for size in (0, 1, 2, 3, 50, 4096):
        values = rng.integers(0, 40 + size, size).astype(np.uint64)
        known = np.unique(rng.integers(0, 40 + size, size // 2 + 1).astype(np.uint64))
        assert _unique(values).tolist() == np.unique(values).tolist()
        assert _member(values, known).tolist() == np.isin(values, known).tolist()
        assert _member(values, known[:0]).tolist() == [False] * size
        assert _merge(known, values).tolist() == np.union1d(known, values).tolist()


def test_cli_artifacts_byte_identical_serial_and_parallel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--workers 1`` (the serial engine), ``--workers 2`` and the default (every core,
    this small search staying in one process) write the same files."""
    monkeypatch.delenv("GROUPCHECK_WORKERS", raising=False)
    docs = []
    runs = {"1": ["--workers", "1"], "2": ["--workers", "2"], "default": []}
    for name, workers in runs.items():
        out = tmp_path / name
        argv = ["explore", "--mutant", "revoke-without-waiting", "--no-baseline", "--out", str(out)]
        code = main([*argv, *workers, "--json", "--quiet"])
        assert code == 1
        docs.append(json.loads(capsys.readouterr().out))
    assert docs[0]["workers"] == 1
    assert docs[0]["collision_probability"] is None
    assert docs[1]["workers"] == 2
    assert docs[1]["collision_probability"] > 0
    assert docs[2]["workers"] == 1  # 631 states: no level reaches SERIAL_UNTIL
    assert docs[2]["collision_probability"] > 0
    for doc in docs[1:]:
        for key in ("property", "length", "original_length", "shortest", "distinct_states"):
            assert doc[key] == docs[0][key]
    files = {
        p.relative_to(tmp_path / "1"): p.read_bytes()
        for p in sorted((tmp_path / "1").rglob("*"))
        if p.is_file()
    }
    assert any(p.name == "trace.ndjson" for p in files)
    for other in ("2", "default"):
        for rel, data in files.items():
            assert (tmp_path / other / rel).read_bytes() == data, rel
        assert sorted(
            p.relative_to(tmp_path / other) for p in (tmp_path / other).rglob("*")
        ) == sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*"))


def test_bench_config_sibling_pinned_in_the_manifest() -> None:
    """``MUT2_LOSS4`` (bench/bench_pbfs.py, over a million states) is too large for a test;
    its sibling with two perturbations is pinned instead, as TLC counts it."""
    manifest = json.loads((TLA_DIR / "manifest.json").read_text(encoding="utf-8"))
    sibling = CONFIGS["MUT2_LOSS2"]
    assert sibling == replace(CONFIGS["MUT2_LOSS4"], name="MUT2_LOSS2", max_perturbations=2)
    result = parallel_bfs(sibling, workers=2, check_convergence=False)
    assert result.result == "ok"
    assert result.distinct_states == manifest["configs"]["MUT2_LOSS2"]["distinct_states"]
    assert manifest["configs"]["MUT2_LOSS4"]["distinct_states"] >= 1_000_000


def test_workers_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``GROUPCHECK_WORKERS`` stands for ``--workers`` when it is not given; ``--workers``
    wins; a bad value is one line and exit 2."""
    argv = [
        "explore",
        "--mutant",
        "revoke-without-waiting",
        "--no-baseline",
        "--json",
        "--quiet",
        "--out",
    ]
    monkeypatch.setenv("GROUPCHECK_WORKERS", "2")
    assert main([*argv, str(tmp_path / "a")]) == 1
    assert json.loads(capsys.readouterr().out)["workers"] == 2
    assert main([*argv, str(tmp_path / "b"), "--workers", "1"]) == 1
    assert json.loads(capsys.readouterr().out)["workers"] == 1
    monkeypatch.setenv("GROUPCHECK_WORKERS", "lots")
    assert main([*argv, str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c").exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "GROUPCHECK_WORKERS: expected an integer, got 'lots'" in err
