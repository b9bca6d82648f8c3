"""What compiling the model with mypyc buys (issue 40): a measurement, not an accelerator.

    python bench/mypyc_trial.py --build /tmp/mypyc-trial            # compile, then measure
    python bench/mypyc_trial.py --build /tmp/mypyc-trial --no-compile --engines serial pbfs

Copies ``model/``, ``invariants/``, ``groupcheck/`` and ``reports/`` of this checkout into
``BUILD/src`` (nothing is written next to the sources), compiles the modules of ``--set``
there with ``mypyc`` (the extension modules land beside the copies, where the import
system prefers them to the ``.py`` files), and then, for each engine, runs the same
exhaustive search in a child process on the pure tree (this checkout) and on the compiled
copy, alternately for ``--rounds`` rounds, printing one JSON line a run: distinct states,
steps, depth, verdict, witnesses, CPU seconds of the process and its children
(``resource.getrusage``), wall seconds, states per CPU second. The search is
``replace(MUT2_LOSS4, max_perturbations=3)`` (393,829 states), or ``--max-states`` of it.

The sets: ``functions`` — the model's step functions (``system``, ``client``,
``coordinator``, ``network``, ``reconcile``, ``target``, the assignors and the classic and
migration steps), the records left interpreted; ``engine`` — those and the serial
engine's loop, its views and the snapshot and liveness code; ``records`` — ``functions``
and the record modules (``model.records``, ``model.ids``, ``model.actions``,
``model.status`` and the classic and migration records), which mypyc compiles but which do
not import (``docs/benchmarks.md``, "Compiling the model with mypyc").
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ("model", "invariants", "groupcheck", "reports")

FUNCTIONS = [
    "model/system.py",
    "model/consumer/system.py",
    "model/consumer/client.py",
    "model/consumer/coordinator.py",
    "model/network.py",
    "model/consumer/reconcile.py",
    "model/consumer/target.py",
    "model/assignors/range.py",
    "model/assignors/spec.py",
    "model/assignors/uniform.py",
    "model/classic/assignors.py",
    "model/classic/client.py",
    "model/classic/coordinator.py",
    "model/classic/system.py",
    "model/migration/coordinator.py",
    "model/migration/system.py",
]
"""Not ``model/assignors/__init__.py``: mypyc refuses its ``KeyError`` subclass ("Inheriting
from most builtin types is unimplemented")."""

SETS: dict[str, list[str]] = {
    "functions": FUNCTIONS,
    "engine": [
        *FUNCTIONS,
        "invariants/liveness.py",
        "invariants/snapshot.py",
        "invariants/classic_snapshot.py",
        "groupcheck/explore/bfs.py",
        "groupcheck/explore/views.py",
    ],
    "records": [
        *FUNCTIONS,
        "model/records.py",
        "model/ids.py",
        "model/actions.py",
        "model/status.py",
        "model/classic/records.py",
        "model/migration/records.py",
    ],
}

CHILD = """
import json, resource, sys, time
from dataclasses import replace
import model.system
from model.presets import MUT2_LOSS4
engine, max_states = sys.argv[1], (int(sys.argv[2]) or None)
config = replace(MUT2_LOSS4, max_perturbations=3)
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
t, w = cpu(), time.perf_counter()
if engine == "serial":
    from groupcheck.explore.bfs import bfs
    r = bfs(config, max_states=max_states)
else:
    from groupcheck.explore.pbfs import parallel_bfs
    r = parallel_bfs(config, workers=2, max_states=max_states)
t, w = cpu() - t, time.perf_counter() - w
print(json.dumps({
    "engine": engine, "compiled": not model.system.__file__.endswith(".py"),
    "states": r.distinct_states, "steps": r.steps, "depth": r.depth, "result": r.result,
    "witnesses": r.witnesses, "cpu": round(t, 2), "wall": round(w, 2),
    "states_per_cpu_s": round(r.distinct_states / t),
}))
"""


def compile_set(build: Path, modules: list[str]) -> None:
    """A fresh copy of the sources in ``build/src``, ``modules`` compiled there."""
    src = build / "src"
    if src.exists():
        shutil.rmtree(src)
    for tree in TREES:
        shutil.copytree(
            ROOT / tree, src / tree, ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
    shutil.copy(ROOT / "pyproject.toml", src / "pyproject.toml")  # mypy's settings
    mypyc = Path(sys.executable).with_name("mypyc")
    subprocess.run([str(mypyc), *modules], cwd=src, check=True, stdout=subprocess.DEVNULL)


def measure(tree: Path, engine: str, max_states: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, engine, str(max_states)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    row: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--set", choices=sorted(SETS), default="engine")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--engines", nargs="+", choices=["serial", "pbfs"], default=["serial"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-states", type=int, default=0, help="0: exhaust")
    args = parser.parse_args()
    if not args.no_compile:
        compile_set(args.build, SETS[args.set])
    for _ in range(args.rounds):
        for engine in args.engines:
            for tree in (ROOT, args.build / "src"):
                print(json.dumps(measure(tree, engine, args.max_states)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
