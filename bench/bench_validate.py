"""Validator throughput and memory, through ``validate_file`` as ``groupcheck validate``
reads a file. A seeded progress walk on SMALL is written twice to temporary files: as a
1,000,000-event model trace (every action), and as a 1,000,000-event wire-like trace (only
the delivered heartbeat exchanges, what ``groupcheck capture`` records). Each is validated
in safety mode by a separate process per size — its first 100,000, 300,000 and 1,000,000
events (:data:`SAFETY_SIZES`) — which reports its events per CPU-second (``process_time``:
the machine may be shared) and peak RSS (streaming: the memory must not grow with the
trace). Conformance mode (it replays the model and checks every property) is measured on
the first 50,000 model events, with its peak RSS against the first 10,000; coordinator mode
on the first 100,000 and 300,000 wire events and on all 1,000,000 (goals: peak RSS at
1,000,000 within 1.25 × that at 100,000 — flat — and ≥ 100,000 events per CPU second at
1,000,000).
Goals: ≥ 200,000 events per CPU-second in safety mode at every size, on both traces, with
peak RSS at 1,000,000 events within 1.25 × that at 100,000; ≥ 20,000 events per CPU-second
in conformance mode."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path as FsPath
from typing import Any

from model import system
from model.actions import Action, DeliverMessage
from model.presets import preset
from model.trace import encode_action

EVENTS = 1_000_000
SAFETY_SIZES = (100_000, 300_000, 1_000_000)
"""Safety mode validates the first this many events of each trace (those not above
``events``), each in a process of its own."""
GOAL_SAFETY_PER_CPU_SECOND = 200_000
SAFETY_FLAT = 1.25
"""Peak RSS at the largest size within this factor of that at the smallest: flat."""
CONFORMANCE_EVENTS = 50_000
GOAL_CONFORMANCE_PER_CPU_SECOND = 20_000
COORDINATOR_EVENTS = (100_000, 300_000, 1_000_000)
"""Coordinator mode (``--mode coordinator``) replays the first this many events of the
wire-like trace (at most ``EVENTS``): its peak RSS must not grow with the trace."""
COORDINATOR_FLAT = 1.25
GOAL_COORDINATOR_EVENTS_PER_CPU_SECOND = 100_000

_CHILD = """
import json, sys, time
from groupcheck.validate import validate_file
path, mode = sys.argv[1], sys.argv[2]
start, cpu = time.perf_counter(), time.process_time()
report = validate_file(path, mode)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
# VmHWM is this process's own peak RSS; getrusage's ru_maxrss would carry over the peak of
# the process that forked it, whatever ran there before.
with open("/proc/self/status", encoding="ascii") as status:
    hwm_kib = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
print(json.dumps({"events": report.events, "seconds": seconds, "cpu_seconds": cpu,
                  "result": report.result,
                  "peak_rss_mib": round(hwm_kib / 1024, 1)}))
"""


def write_traces(model_path: FsPath, wire_path: FsPath, events: int, seed: int = 1) -> None:
    """Write ``events`` events of one seeded progress walk to ``model_path``, and the walk's
    delivered heartbeat exchanges to ``wire_path`` until it has ``events`` of them too."""
    config = preset("SMALL")
    rng = random.Random(seed)
    state = system.initial(config)
    header = {
        "format": "groupcheck-trace",
        "version": 1,
        "protocol": "consumer",
        "topics": dict(config.topics),
        "config": config.name,
        "heartbeat_interval_ms": config.heartbeat_interval_ms,
    }
    with (
        model_path.open("w", encoding="utf-8") as full,
        wire_path.open("w", encoding="utf-8") as wire,
    ):
        full.write(json.dumps(header) + "\n")
        wire.write(json.dumps(header) + "\n")
        seq = wired = 0
        while seq < events or wired < events:
            enabled: list[Action] = [a for a in system.enabled(state, config) if not a.PERTURBATION]
            action = enabled[rng.randrange(len(enabled))]
            state = system.step(state, action, config)
            seq += 1
            source, payload = encode_action(action)
            line = json.dumps(
                {"seq": seq, "ts": None, "source": source, "kind": action.kind, "payload": payload}
            )
            if seq <= events:
                full.write(line + "\n")
            heartbeat = (
                isinstance(action, DeliverMessage) and payload["api"] == "ConsumerGroupHeartbeat"
            )
            if heartbeat and wired < events:
                wire.write(line + "\n")
                wired += 1


def _cpu_row(path: FsPath, mode: str, limit: int = 0) -> dict[str, Any]:
    """``_validate`` timed in CPU seconds (safety and conformance rows): events, events per
    CPU-second, CPU seconds, peak RSS, result."""
    r = _validate(path, mode, limit)
    return {
        "events": r["events"],
        "events_per_cpu_second": round(r["events"] / r["cpu_seconds"]),
        "cpu_seconds": round(r["cpu_seconds"], 2),
        "peak_rss_mib": r["peak_rss_mib"],
        "result": r["result"],
    }


def _safety_rows(path: FsPath, events: int) -> dict[str, Any]:
    """Safety mode on the first :data:`SAFETY_SIZES` events of ``path``, against the goal."""
    sizes = [n for n in SAFETY_SIZES if n < events] + [events]
    rows = {f"first_{n}": _cpu_row(path, "safety", n if n < events else 0) for n in sizes}
    first, last = rows[f"first_{sizes[0]}"], rows[f"first_{sizes[-1]}"]
    return {
        **rows,
        "goal": f">= {GOAL_SAFETY_PER_CPU_SECOND} events per CPU-second at every size; peak "
        f"RSS at {sizes[-1]} events within {SAFETY_FLAT:g}x that at {sizes[0]} (flat)",
        "meets_goal": all(
            r["events_per_cpu_second"] >= GOAL_SAFETY_PER_CPU_SECOND for r in rows.values()
        )
        and float(last["peak_rss_mib"]) <= SAFETY_FLAT * float(first["peak_rss_mib"]),
    }


def _conformance_row(path: FsPath, events: int) -> dict[str, Any]:
    """Conformance mode on the first :data:`CONFORMANCE_EVENTS` model events (peak RSS
    against a fifth of them), against the goal."""
    n = min(CONFORMANCE_EVENTS, events)
    row = _cpu_row(path, "conformance", n)
    small = _cpu_row(path, "conformance", n // 5)
    return {
        **row,
        f"peak_rss_mib_at_{n // 5}_events": small["peak_rss_mib"],
        "goal": f">= {GOAL_CONFORMANCE_PER_CPU_SECOND} events per CPU-second",
        "meets_goal": row["events_per_cpu_second"] >= GOAL_CONFORMANCE_PER_CPU_SECOND,
    }


def _validate(path: FsPath, mode: str, limit: int = 0) -> dict[str, Any]:
    """Validate ``path`` (only its header and first ``limit`` events when ``limit``) in a
    process of its own; its events, seconds, result and peak RSS."""
    if limit:
        head = path.with_name(f"{path.stem}-{limit}.ndjson")
        with path.open("rb") as src, head.open("wb") as dst:
            for _, line in zip(range(limit + 1), src, strict=False):
                dst.write(line)
        path = head
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _coordinator(runs: dict[int, dict[str, Any]]) -> dict[str, object]:
    """Coordinator mode's row: per trace length its events per CPU second, seconds and
    peak RSS; flat when the peak at the longest is within ``COORDINATOR_FLAT`` × that at
    the shortest, fast when the longest goes at ``GOAL_COORDINATOR_EVENTS_PER_CPU_SECOND``."""
    smallest, largest = runs[min(runs)], runs[max(runs)]
    rate = float(largest["events"]) / float(largest["cpu_seconds"])
    flat = float(largest["peak_rss_mib"]) <= COORDINATOR_FLAT * float(smallest["peak_rss_mib"])
    return {
        "runs": [
            {
                "events": r["events"],
                "events_per_cpu_second": round(float(r["events"]) / float(r["cpu_seconds"])),
                "cpu_seconds": round(float(r["cpu_seconds"]), 2),
                "seconds": round(float(r["seconds"]), 2),
                "peak_rss_mib": r["peak_rss_mib"],
                "result": r["result"],
            }
            for _, r in sorted(runs.items())
        ],
        "goal": f"peak RSS at {largest['events']} events within {COORDINATOR_FLAT:g}x that "
        f"at {smallest['events']} (flat); >= {GOAL_COORDINATOR_EVENTS_PER_CPU_SECOND} "
        f"events per CPU second at {largest['events']}",
        "flat": flat,
        "meets_goal": flat and rate >= GOAL_COORDINATOR_EVENTS_PER_CPU_SECOND,
    }


def run(events: int = EVENTS) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        model_trace, wire_trace = FsPath(tmp) / "model.ndjson", FsPath(tmp) / "wire.ndjson"
        start = time.perf_counter()
        write_traces(model_trace, wire_trace, events)
        written = time.perf_counter() - start
        safety = _safety_rows(model_trace, events)
        wire = _safety_rows(wire_trace, events)
        conformance = _conformance_row(model_trace, events)
        coordinator = {
            n: _validate(wire_trace, "coordinator", n if n < events else 0)
            for n in sorted({min(n, events) for n in COORDINATOR_EVENTS})
        }
        sizes = {p.name: round(p.stat().st_size / 2**20, 1) for p in (model_trace, wire_trace)}
    return {
        "benchmark": "validator",
        "events": events,
        "trace_mib": sizes,
        "write_seconds": round(written, 1),
        "safety_model_trace": safety,
        "safety_wire_trace": wire,
        f"conformance_first_{min(CONFORMANCE_EVENTS, events)}": conformance,
        "coordinator_wire_trace": _coordinator(coordinator),
    }


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else EVENTS), indent=2))
