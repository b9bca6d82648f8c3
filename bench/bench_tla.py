"""Python BFS against TLC on the same configurations, measured in one run.

For each configuration the Python BFS engine (``groupcheck.explore.bfs``, every state and
step property checked, convergence not — TLC's safety run does not check it either) and TLC
(``groupcheck tla check``: the same invariants and step properties, 2 workers, JVM start-up
included) explore the whole state space. The ratio is Python wall time / TLC wall time; the
goal is a ratio ≤ 1 (the Python engine no slower than TLC).
"""

from __future__ import annotations

import time

from groupcheck.explore.bfs import bfs
from groupcheck.tla.configs import CONFIGS, cfg_text
from groupcheck.tla.tlc import run_tlc

BENCH_CONFIGS = ("TINY1", "TINY", "MUT2")


def run() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name in BENCH_CONFIGS:
        config = CONFIGS[name]
        start = time.perf_counter()
        py = bfs(config, check_convergence=False)
        py_seconds = time.perf_counter() - start
        start = time.perf_counter()
        tlc = run_tlc(cfg_text(config), workers=2)
        tlc_seconds = time.perf_counter() - start
        ratio = py_seconds / tlc_seconds
        rows.append(
            {
                "name": f"python-bfs-vs-tlc-{name}",
                "config": name,
                "python_seconds": round(py_seconds, 2),
                "python_states": py.distinct_states,
                "tlc_seconds": round(tlc_seconds, 2),
                "tlc_distinct_states": tlc.distinct_states,
                "ratio_python_over_tlc": round(ratio, 2),
                "goal": "ratio <= 1.0",
                "meets_goal": ratio <= 1.0,
            }
        )
    return rows
