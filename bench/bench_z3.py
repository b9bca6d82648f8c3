"""Z3 as a prover: every inductiveness obligation, and BMC to depth 12 on MUT2.

* ``z3-prove``: every obligation ``groupcheck prove`` discharges with the default options
  (initiation, consecution and step obligations of the core's invariant, and the
  convergence ranking's), one Z3 query each; goal: all proved in ≤ 60 s in total.
* ``z3-bmc-MUT2``: ``groupcheck explore --engine bmc --depth 12 --preset MUT2`` — every
  core property to depth 12 on MUT2's members and partitions; goal: no violation, no
  unknown, ≤ 60 s.
* ``z3-bmc-mutants``: the same engine on each mutant with a symbolic variant of a
  coordinator rule, at depth 12, with the goals the engine reads for its configuration
  (KIP-1251, offset expiry, deletion): the depth of the first violation and whether the
  Python coordinator replays it (no goal: the kill matrix's engines set the expected
  kills). The client layer's variants and the Convergence lassos are left out, listed
  with the reason: ``explore --engine bmc --mutant M`` times them (docs/benchmarks.md).

Wall and CPU seconds of this process are both reported: the machine is shared.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from groupcheck.mutants import MUTANTS
from invariants.z3.proof import ranking
from invariants.z3.proof.bmc import (
    DELETION_GOALS,
    EPOCH_GOALS,
    EXPIRY_GOALS,
    GOALS,
    Outcome,
    confirmed,
    replay,
    search_all,
    universe_of,
)
from invariants.z3.proof.bmc_clients import CLIENT_VARIANTS
from invariants.z3.proof.bmc_lasso import LASSO_VARIANTS
from invariants.z3.proof.induction import Prover
from invariants.z3.proof.obligations import Policy
from invariants.z3.proof.obligations import run as run_obligations
from invariants.z3.proof.transition import VARIANTS, Options
from model.config import Config
from model.consumer.system import consumer_initial
from model.presets import MUT2

DEPTH = 12


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def _bmc(config: Config, variant: str | None) -> dict[str, Outcome]:
    options = Options.of(config, variant)
    goals = list(GOALS)
    if config.assignment_epochs:
        goals += [c.name for c in EPOCH_GOALS]
    if options.offset_expiry:
        goals += [s.name for s in EXPIRY_GOALS]
    if options.group_deletion:
        goals += [s.name for s in DELETION_GOALS]
    return search_all(
        goals,
        DEPTH,
        options,
        universe=universe_of(config),
        group_epoch=consumer_initial(config).group.group_epoch,
    )


def run() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    timeout = 60_000
    prover = Prover(Options(), timeout_ms=timeout)
    (core, ranked), wall, cpu = _timed(
        lambda: (
            run_obligations(prover.obligations(), prover.query, prover.policy()),
            run_obligations(
                ranking.obligations(Options()),
                lambda ob: ranking.query(ob, Options()),
                Policy(timeout),
            ),
        )
    )
    results = core + ranked
    proved = sum(r.status == "proved" for r in results)
    rows.append(
        {
            "name": "z3-prove",
            "command": "groupcheck prove",
            "obligations": len(results),
            "proved": proved,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "goal": "all proved, <= 60 s",
            "meets_goal": proved == len(results) and wall <= 60,
        }
    )
    outcomes, wall, cpu = _timed(lambda: _bmc(MUT2, None))
    statuses = {g: o.status for g, o in outcomes.items()}
    rows.append(
        {
            "name": "z3-bmc-MUT2",
            "command": f"groupcheck explore --engine bmc --depth {DEPTH} --preset MUT2",
            "statuses": statuses,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "goal": "all ok at depth 12, <= 60 s",
            "meets_goal": set(statuses.values()) == {"ok"} and wall <= 60,
        }
    )
    found: dict[str, object] = {}
    for name in VARIANTS:
        if name in LASSO_VARIANTS:
            found[name] = {"skipped": "a Convergence lasso of the client layer (bmc_lasso)"}
            continue
        if name in CLIENT_VARIANTS:
            found[name] = {"skipped": "a rule of the client layer (bmc_clients)"}
            continue
        mutant = MUTANTS[name]
        outcomes, wall, cpu = _timed(functools.partial(_bmc, mutant.config, mutant.name))
        hits = {}
        for goal, o in outcomes.items():
            if o.path is not None:
                states, err = replay(o.path, mutant.rules, mutant.config)
                hits[goal] = {"depth": o.depth, "replayed": confirmed(o.path, states, err)}
        found[name] = {"config": mutant.config.name, "violations": hits, "wall_seconds": wall}
    rows.append({"name": "z3-bmc-mutants", "depth": DEPTH, "mutants": found})
    return rows
