"""Per-level cost of ``groupcheck pipeline bfs`` on Spark, level by level (docs/pipeline.md,
"Per-level overhead"): for each level computed on Spark, its wall time, the Spark jobs it
ran, their wall time, and their stages' task time (executor run time, task
deserialisation) from Spark's status store. Not part of ``bench/run.py``: it prints a table.

    PYTHONPATH=. python bench/spark_bfs_levels.py PRESET DEPTH DRIVER_STATES OUT [PARTITIONS]

e.g. ``MUT2 12 0 /tmp/levels 2`` (every level on Spark, ``local[2]``, safety only).
"""

from __future__ import annotations

import collections
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from groupcheck.pipeline.bfs import spark_bfs
from groupcheck.pipeline.spark import session
from model.presets import preset


def _seq(x: Any) -> list[Any]:
    return [x.apply(i) for i in range(x.size())]


def main() -> None:
    name, depth, driver_states, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    partitions = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    target = Path(out)
    if target.exists():
        shutil.rmtree(target)
    with session("local[2]") as spark:
        sc = spark.sparkContext
        marks: list[int] = []

        def progress(msg: str) -> None:
            # Called before each level is computed: tag that level's jobs.
            if msg.startswith("bfs on Spark: level"):
                d = int(msg.split()[4].rstrip(","))
                sc.setJobGroup(f"L{d}", f"L{d}")
                marks.append(d)

        began = time.perf_counter()
        res = spark_bfs(
            spark,
            preset(name),
            target,
            check_convergence=False,
            max_depth=depth,
            partitions=partitions,
            driver_states=driver_states,
            progress=progress,
        )
        wall = time.perf_counter() - began
        tracker = sc.statusTracker()
        store = sc._jsc.sc().statusStore()
        stage_level: dict[int, int] = {}
        jobs: dict[int, tuple[int, float]] = {}
        for d in marks:
            ids = list(tracker.getJobIdsForGroup(f"L{d}"))
            seconds = 0.0
            for j in ids:
                info = store.job(j)
                end, begin = info.completionTime().get(), info.submissionTime().get()
                seconds += (end.getTime() - begin.getTime()) / 1000
                for sid in _seq(info.stageIds()):
                    stage_level[int(sid)] = d
            jobs[d] = (len(ids), round(seconds, 3))
        per: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
        defaults = [getattr(store, f"stageList$default${i}")() for i in range(2, 6)]
        for stage in _seq(store.stageList(None, *defaults)):
            level = stage_level.get(int(stage.stageId()))
            if level is None or str(stage.status()) == "SKIPPED":
                continue
            row = per[level]
            row[0] += 1
            row[1] += stage.numCompleteTasks()
            row[2] += stage.executorRunTime()
            row[3] += stage.executorDeserializeTime()
    summary = {"result": res.result, "states": res.distinct_states, "depth": res.depth}
    print(json.dumps({**summary, "wall": round(wall, 2)}))
    print("level new_states level_s jobs jobs_s stages tasks task_run_ms task_deser_ms")
    levels = res.level_seconds or []
    for d in sorted(per):
        new = json.loads((target / "levels" / f"{d + 1:05d}" / "level.json").read_text())["states"]
        took = str(round(levels[d + 1], 3)) if d + 1 < len(levels) else "-"
        print(d + 1, new, took, *jobs[d], *per[d])


if __name__ == "__main__":
    main()
