"""Run every benchmark and write the results as JSON.

    python bench/run.py --out bench/results            # all
    python bench/run.py --out bench/results step       # only some

Writes ``<out>/results.json`` (all results of this run, with the machine and the time)
atomically, and prints a one-line summary per benchmark. Exit status 1 when a benchmark
misses its goal, so ``make bench`` says so.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

BENCHMARKS: dict[str, str] = {
    "step": "bench_step",
    "assignor": "bench_assignor",
    "explore": "bench_explore",
    "pbfs": "bench_pbfs",
    "pbfs-memory": "bench_pbfs_memory",
    "validate": "bench_validate",
    "tla": "bench_tla",
    "render": "bench_render",
    "render-large": "bench_render_large",
    "pipeline": "bench_pipeline",
    "z3": "bench_z3",
    "kafka": "bench_kafka",
}
"""Benchmark name → module in bench/ exposing ``run() -> dict | list[dict]``."""


def _load(module: str) -> Callable[[], object]:
    mod = importlib.import_module(module)
    runner: Callable[[], object] = mod.run
    return runner


def _meets(result: object) -> bool:
    items = result if isinstance(result, list) else [result]
    ok = True
    for item in items:
        if isinstance(item, dict):
            if item.get("meets_goal") is False:
                ok = False
            for value in item.values():
                if isinstance(value, dict | list) and not _meets(value):
                    ok = False
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results", help="directory for results.json")
    parser.add_argument(
        "only", nargs="*", help=f"benchmarks to run (default all: {', '.join(BENCHMARKS)})"
    )
    args = parser.parse_args(argv)
    unknown = [n for n in args.only if n not in BENCHMARKS]
    if unknown:
        print(
            f"bench: unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return 2
    names = args.only or list(BENCHMARKS)
    results: dict[str, object] = {}
    all_ok = True
    for name in names:
        print(f"bench: running {name} …", file=sys.stderr, flush=True)
        result = _load(BENCHMARKS[name])()
        results[name] = result
        ok = _meets(result)
        all_ok &= ok
        print(f"bench: {name}: {'meets goal' if ok else 'MISSES GOAL'}: {json.dumps(result)}")
    document = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".results.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
    os.replace(tmp, out / "results.json")
    print(f"bench: wrote {out / 'results.json'}", file=sys.stderr)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
