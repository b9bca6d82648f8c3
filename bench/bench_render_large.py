"""Rendering a 500,000-event trace in bounded memory (issue 42: it took 1.27 GB and 24 s).
A seeded progress walk on SMALL is written as a wire-like trace (only the delivered
heartbeat exchanges, as ``groupcheck capture`` records them; ``bench_validate``'s
writer), and ``groupcheck render --format html`` draws it in a separate process, which
reports its peak RSS. The trace is read twice, a line at a time; at most
``groupcheck.render.DRAWN_EVENTS`` events are drawn, and the report must say which.
Goal: peak RSS under 150 MiB and the drawn-events note in the output."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_validate import write_traces

EVENTS = 500_000
GOAL_MIB = 150

_CHILD = """
import contextlib, io, json, sys, time
from groupcheck.cli import main
start = time.perf_counter()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["render", "--format", "html", "--out", sys.argv[2], sys.argv[1]])
seconds = time.perf_counter() - start
with open("/proc/self/status", encoding="ascii") as status:
    hwm_kib = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
print(json.dumps({"code": code, "seconds": seconds, "stdout": out.getvalue(),
                  "peak_rss_mib": round(hwm_kib / 1024, 1)}))
"""


def run(events: int = EVENTS) -> dict[str, object]:
    """Render an ``events``-event wire trace; time, peak RSS and what was drawn."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-render-large-") as tmp:
        directory = Path(tmp)
        model, wire = directory / "model.ndjson", directory / "wire.ndjson"
        write_traces(model, wire, events)
        model.unlink()
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(wire), str(directory / "out")],
            capture_output=True,
            text=True,
            check=False,
            cwd=root,
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            return {
                "name": f"render-{events}-events",
                "error": done.stderr[-500:],
                "meets_goal": False,
            }
        child = json.loads(done.stdout.strip().splitlines()[-1])
    said = child["stdout"]
    noted = f"of {events} (the first ones" in said or f"of {events} (around" in said
    return {
        "name": f"render-{events}-events",
        "events": events,
        "exit": child["code"],
        "seconds": round(child["seconds"], 2),
        "wall_seconds": round(wall, 2),
        "peak_rss_mib": child["peak_rss_mib"],
        "drawn_note": said.strip().splitlines()[-1] if said.strip() else "",
        "measures": "groupcheck render --format html of a wire trace, in its own process",
        "goal": f"peak RSS < {GOAL_MIB} MiB, the drawn stretch named",
        "meets_goal": child["code"] == 0 and child["peak_rss_mib"] < GOAL_MIB and noted,
    }
