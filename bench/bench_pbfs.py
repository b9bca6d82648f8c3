"""Parallel BFS against the serial engine and against TLC, side by side on one config.

On ``MUT2_LOSS4`` (``groupcheck.tla.configs``: over a million distinct states, pinned in
``tla/manifest.json``) three searches run one after the other, each in a process of its
own so that its wall time, CPU time and peak memory are its own: the parallel BFS on 2
workers, TLC with 2 workers (JVM start-up included), and the serial Python BFS. They run
in rounds (``GROUPCHECK_BENCH_PBFS_ROUNDS``, default 2), the three in turn each round, and
the ratios compare each engine's fastest run: the speed of the project's machine drifts by
10–20 % within minutes, in CPU time too, and a single run of each measured the drift as
much as the engines (docs/benchmarks.md). Every run is in the result. All three
check the state and step properties and not convergence (TLC's safety run does not
check it). Goals (issue 18): parallel ≥ 1.7 × faster than serial, ≥ 1.5 × faster than TLC,
and the same distinct-state count as both and as the manifest. Each result is also
printed to stderr as it comes, with its CPU seconds (the process and its children).

``GROUPCHECK_BENCH_PBFS_CONFIG`` names another configuration of ``CONFIGS`` (a quick run
on a smaller one, e.g. ``MUT2``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2

CHILD = r"""
import json, resource, sys, time
from groupcheck.tla.configs import CONFIGS, cfg_text
name, engine = sys.argv[1], sys.argv[2]
config = CONFIGS[name]
start = time.perf_counter()
extra = {}
if engine == "serial":
    from groupcheck.explore.bfs import bfs
    r = bfs(config, check_convergence=False)
    states, result = r.distinct_states, r.result
elif engine == "parallel":
    from groupcheck.explore.pbfs import parallel_bfs
    r = parallel_bfs(config, workers=int(sys.argv[3]), check_convergence=False)
    states, result = r.distinct_states, r.result
    extra = {"bytes_per_state": round(r.bytes_per_state, 1),
             "collision_probability": r.collision_probability}
else:
    from groupcheck.tla.tlc import run_tlc
    r = run_tlc(cfg_text(config), workers=int(sys.argv[3]))
    states, result = r.distinct_states, r.result
seconds = time.perf_counter() - start
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "engine": engine, "distinct_states": states, "result": str(result),
    "seconds": round(seconds, 2),
    "cpu_seconds": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 2),
    "peak_rss_mib": round(max(me.ru_maxrss, kids.ru_maxrss) / 1024, 1),
    **extra,
}))
"""


def _measure(name: str, engine: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, engine, str(WORKERS)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    ).stdout
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    print(f"bench_pbfs: {name}: {json.dumps(row)}", file=sys.stderr, flush=True)
    return row


def _load() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run() -> dict[str, Any]:
    name = os.environ.get("GROUPCHECK_BENCH_PBFS_CONFIG", "MUT2_LOSS4")
    raw = os.environ.get("GROUPCHECK_BENCH_PBFS_ROUNDS", "2")
    if not raw.isdigit() or int(raw) < 1:
        print(f"GROUPCHECK_BENCH_PBFS_ROUNDS={raw!r}: want a number, 1 or more", file=sys.stderr)
        raise SystemExit(2)
    rounds = int(raw)
    manifest = json.loads((ROOT / "tla" / "manifest.json").read_text())
    pinned = manifest["configs"].get(name, {}).get("distinct_states")
    load_before = _load()
    samples: dict[str, list[dict[str, Any]]] = {"parallel": [], "tlc": [], "serial": []}
    for _ in range(rounds):  # the engines in turn, each round: drifts of speed hit all
        for engine, runs in samples.items():
            runs.append(_measure(name, engine))
    load_after = _load()
    # Each engine's fastest run: the one least slowed by whatever else the machine did.
    best = {engine: min(runs, key=lambda r: r["seconds"]) for engine, runs in samples.items()}
    parallel, tlc, serial = best["parallel"], best["tlc"], best["serial"]
    vs_serial = serial["seconds"] / parallel["seconds"]
    vs_tlc = tlc["seconds"] / parallel["seconds"]
    states = {r["distinct_states"] for runs in samples.values() for r in runs}
    same = len(states) == 1
    per_round = [
        {
            "speedup_over_serial": round(samples["serial"][k]["seconds"] / p["seconds"], 2),
            "speedup_over_tlc": round(samples["tlc"][k]["seconds"] / p["seconds"], 2),
        }
        for k, p in enumerate(samples["parallel"])
    ]
    return {
        "config": name,
        "workers": WORKERS,
        "rounds": rounds,
        "pinned_distinct_states": pinned,
        "serial": serial,
        "parallel": parallel,
        "tlc": tlc,
        "speedup_over_serial": round(vs_serial, 2),
        "speedup_over_tlc": round(vs_tlc, 2),
        "per_round": per_round,
        "all_runs": samples,
        "load_average_before_after": [load_before, load_after],
        "goal": "parallel >= 1.7 x serial and >= 1.5 x TLC (2 workers), each engine's "
        "fastest of its rounds; same distinct states",
        "meets_goal": vs_serial >= 1.7
        and vs_tlc >= 1.5
        and same
        and (pinned is None or pinned == parallel["distinct_states"]),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
