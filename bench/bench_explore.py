"""Exploration throughput and the mutant kill matrix.

BFS distinct states per second (with all properties checked) on a small config and on the
classic protocol's ``CLASSIC_COOPERATIVE``, random-walk
steps per second on SMALL, and per mutant: seconds to the first counterexample and the
minimised against the BFS-shortest length. Goals (issue: mutants): every mutant killed
within 60 s, median ≤ 10 s, minimised length ≤ shortest + 2.
"""

from __future__ import annotations

import statistics

from groupcheck.explore.bfs import bfs
from groupcheck.explore.walk import walk
from groupcheck.mutants.matrix import kill_matrix
from model.config import ClientSpec, Config
from model.presets import preset

BFS_CONFIG = Config(
    kafka_version="4.2",
    name="BENCH_BFS",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=1,
    perturbations=frozenset({"Leave"}),
)
"""Two interchangeable clients join; one may leave: symmetry reduction applies."""


def run() -> dict[str, object]:
    plain = bfs(BFS_CONFIG)
    sym = bfs(BFS_CONFIG, symmetry=True)
    classic = bfs(preset("CLASSIC_COOPERATIVE"))
    walked = walk(preset("SMALL"), seed=1, walks=300, max_steps=60)
    rows = kill_matrix(budget_seconds=60)
    seconds = [r["seconds"] for r in rows]
    within = all(r["killed"] and r["seconds"] <= 60 for r in rows)
    lengths_ok = all(
        r["shortest"] is None or (r["length"] is not None and r["length"] <= r["shortest"] + 2)
        for r in rows
    )
    return {
        "bfs": {
            "config": BFS_CONFIG.name,
            "distinct_states": plain.distinct_states,
            "seconds": round(plain.seconds, 3),
            "states_per_second": round((plain.distinct_states or 0) / plain.seconds),
            "exhausted": plain.exhausted,
            "with_symmetry": {
                "distinct_states": sym.distinct_states,
                "seconds": round(sym.seconds, 3),
            },
        },
        "bfs_classic": {
            "preset": "CLASSIC_COOPERATIVE",
            "distinct_states": classic.distinct_states,
            "seconds": round(classic.seconds, 3),
            "states_per_second": round((classic.distinct_states or 0) / classic.seconds),
            "exhausted": classic.exhausted,
        },
        "walk": {
            "preset": "SMALL",
            "steps": walked.steps,
            "seconds": round(walked.seconds, 3),
            "steps_per_second": round(walked.steps / walked.seconds),
        },
        "mutants": {
            "rows": rows,
            "killed": sum(1 for r in rows if r["killed"]),
            "total": len(rows),
            "median_seconds": round(statistics.median(seconds), 3),
            "max_seconds": round(max(seconds), 3),
            "meets_goal": within and statistics.median(seconds) <= 10 and lengths_ok,
        },
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
