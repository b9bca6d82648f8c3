"""Memory of the parallel BFS on a configuration of over ten million states.

Issue 18's goal: a 10-million-state configuration fits in 4 GB. ``MUT3_LOSS2``
(``model.presets.BENCHMARK_PRESETS``: three clients, two of them in the group, two
perturbations over Subscribe, Leave, Crash and LoseMessage) is searched by
``parallel_bfs`` on 2 workers, state and step properties as in ``bench_pbfs`` (no
convergence), in a process of its own. The parent samples, every 0.2 s, the resident set
of that process and of every process it forked (the workers) from ``/proc`` and reports
the largest sum: the memory the whole search held at once, which no single process's
``ru_maxrss`` shows. Goal: at least 10,000,000 distinct states, exhausted, with a peak
below 4 GiB.

``GROUPCHECK_BENCH_PBFS_MEMORY_CONFIG`` names another preset (a quick run on a smaller
one, e.g. ``MUT2_LOSS4``; the state goal then fails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
GOAL_STATES = 10_000_000
GOAL_BYTES = 4 * 1024**3
SAMPLE_SECONDS = 0.2

CHILD = r"""
import json, resource, sys, time
from model.presets import preset
from groupcheck.explore.pbfs import parallel_bfs
start = time.perf_counter()
r = parallel_bfs(preset(sys.argv[1]), workers=int(sys.argv[2]), check_convergence=False)
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "distinct_states": r.distinct_states, "result": r.result, "exhausted": r.exhausted,
    "depth": r.depth, "seconds": round(time.perf_counter() - start, 1),
    "cpu_seconds": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 1),
    "bytes_per_state": round(r.bytes_per_state or 0.0, 1),
    "collision_probability": r.collision_probability,
}))
"""


def _tree_rss(root: int) -> int:
    """Resident bytes of process ``root`` and of its children (the forked workers)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            if int(entry) != root and parent != root:
                continue
            with open(f"/proc/{entry}/statm") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue  # the process ended while it was read
    return total


def run() -> dict[str, Any]:
    name = os.environ.get("GROUPCHECK_BENCH_PBFS_MEMORY_CONFIG", "MUT3_LOSS2")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, name, str(WORKERS)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    peak = 0
    last_report = time.monotonic()
    while child.poll() is None:
        peak = max(peak, _tree_rss(child.pid))
        if time.monotonic() - last_report >= 30:
            last_report = time.monotonic()
            print(f"bench_pbfs_memory: peak so far {peak / 2**20:.0f} MiB", file=sys.stderr)
        time.sleep(SAMPLE_SECONDS)
    out, _ = child.communicate()
    if child.returncode:
        raise RuntimeError(f"the search of {name} failed (exit {child.returncode})")
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    states = row["distinct_states"]
    return {
        "config": name,
        "workers": WORKERS,
        **row,
        "peak_tree_rss_mib": round(peak / 2**20, 1),
        "peak_bytes_per_state": round(peak / states, 1) if states else None,
        "goal": "an exhausted search of >= 10,000,000 states on 2 workers within 4 GiB",
        "meets_goal": row["exhausted"] and states >= GOAL_STATES and 0 < peak < GOAL_BYTES,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
