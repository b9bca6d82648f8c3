"""Validator throughput and memory: a 1,000,000-event model trace (seeded walk on SMALL,
progress actions preferred) is written to a temporary file and validated in safety mode by
a separate process, which reports its events/s and peak RSS (streaming: the memory must
not grow with the trace). Conformance mode is measured on the first 20,000 events.
Goal (issue: traces): ≥ 100,000 events/s in safety mode on one core."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path as FsPath

from model import system
from model.actions import Action
from model.presets import preset
from model.trace import encode_action

GOAL_EVENTS_PER_SECOND = 100_000
EVENTS = 1_000_000

_CHILD = """
import json, resource, sys, time
from groupcheck.validate import validate_conformance, validate_safety
path, mode, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
def lines():
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit and i > limit:
                break
            yield line.rstrip("\\n")
start = time.perf_counter()
report = (validate_safety if mode == "safety" else validate_conformance)(path, lines())
seconds = time.perf_counter() - start
rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"events": report.events, "seconds": seconds, "result": report.result,
                  "peak_rss_mib": round(rss_kib / 1024, 1)}))
"""


def write_trace(path: FsPath, events: int, seed: int = 1) -> None:
    config = preset("SMALL")
    rng = random.Random(seed)
    state = system.initial(config)
    header = {
        "format": "groupcheck-trace",
        "version": 1,
        "protocol": "consumer",
        "topics": dict(config.topics),
        "config": config.name,
    }
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        for seq in range(1, events + 1):
            enabled: list[Action] = [a for a in system.enabled(state, config) if not a.PERTURBATION]
            action = enabled[rng.randrange(len(enabled))]
            state = system.step(state, action, config)
            source, payload = encode_action(action)
            event = {
                "seq": seq,
                "ts": None,
                "source": source,
                "kind": action.kind,
                "payload": payload,
            }
            f.write(json.dumps(event) + "\n")


def _validate(path: FsPath, mode: str, limit: int = 0) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode, str(limit)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def run(events: int = EVENTS) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = FsPath(tmp) / "trace.ndjson"
        start = time.perf_counter()
        write_trace(path, events)
        written = time.perf_counter() - start
        safety = _validate(path, "safety")
        small = _validate(path, "safety", 20_000)
        conformance = _validate(path, "conformance", 20_000)
        size_mib = path.stat().st_size / 2**20
    rate = safety["events"] / safety["seconds"]  # type: ignore[operator]
    return {
        "benchmark": "validator",
        "events": events,
        "trace_mib": round(size_mib, 1),
        "write_seconds": round(written, 1),
        "safety": {
            "events_per_second": round(rate),
            "seconds": round(safety["seconds"], 2),  # type: ignore[call-overload]
            "peak_rss_mib": safety["peak_rss_mib"],
            "peak_rss_mib_at_20000_events": small["peak_rss_mib"],
            "result": safety["result"],
        },
        "conformance_first_20000": {
            "events_per_second": round(conformance["events"] / conformance["seconds"]),  # type: ignore[operator]
            "result": conformance["result"],
        },
        "goal_events_per_second": GOAL_EVENTS_PER_SECOND,
        "meets_goal": rate >= GOAL_EVENTS_PER_SECOND,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
