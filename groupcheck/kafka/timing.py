"""Measured rebalance times on the real broker beside the timed simulation's prediction
(``groupcheck kafka timing``; docs/timed.md, "Against Kafka 4.4").

The ``batching-*`` scenarios mirror ``groupcheck timed rebalance-times``: for N members the
group of N-2 is formed, member N-1 joins and 200 ms later member N, and the wait after
the last join records how long the group took to settle (``settled_ms``, from the clients'
own timestamps). This module reads those waits from run directories (``verdicts.json``:
each labelled wait, the group's ``consumer.assignment.interval.ms`` and heartbeat
interval) and asks the timed simulation the same question with the same settings
(``groupcheck.timed.scenarios.scale_up``: the median over seeds)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

SIZES = {"1 member": 1, "2 members": 2, "10 members": 10, "50 members": 50}
"""A wait's label → the group size it measures."""

TOPIC_PARTITIONS = 100
"""The batching scenarios' topic (``foo``, 100 partitions)."""


def measured(dirs: list[Path]) -> dict[tuple[int, int], list[int]]:
    """(assignment interval ms, group size) → the settled times of every run."""
    out: dict[tuple[int, int], list[int]] = defaultdict(list)
    for d in dirs:
        try:
            meta = json.loads((d / "verdicts.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if meta.get("error"):
            continue
        interval = _interval(meta)
        for step in meta.get("steps", []):
            size = SIZES.get(str(step.get("label")))
            if size is not None and step.get("settled_ms") is not None:
                out[(interval, size)].append(int(step["settled_ms"]))
    return dict(out)


def _interval(meta: dict[str, Any]) -> int:
    group = meta.get("group_config", {})
    broker = meta.get("broker_settings", {})
    value = group.get("consumer.assignment.interval.ms") or broker.get(
        "group.consumer.assignment.interval.ms", 1000
    )
    return int(value)


def _heartbeat(dirs: list[Path]) -> int:
    for d in dirs:
        try:
            meta = json.loads((d / "verdicts.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        group = meta.get("group_config", {})
        broker = meta.get("broker_settings", {})
        return int(
            group.get("consumer.heartbeat.interval.ms")
            or broker.get("group.consumer.heartbeat.interval.ms", 5000)
        )
    return 5000


def predicted(interval: int, size: int, heartbeat_ms: int, seeds: int = 5) -> int | None:
    """The timed simulation's median rebalance time for the same question (no offload:
    Kafka 4.4 runs the assignor on the coordinator thread)."""
    from groupcheck.timed.scenarios import Kip1263, scale_up

    times = [
        scale_up(
            members=size,
            kip1263=Kip1263(interval, False),
            seed=seed,
            heartbeat_interval_ms=heartbeat_ms,
            partitions_per_member=max(1, TOPIC_PARTITIONS // size),
        ).rebalance_ms
        for seed in range(1, seeds + 1)
    ]
    done = [t for t in times if t is not None]
    return round(statistics.median(done)) if len(done) == len(times) else None


def table(dirs: list[Path]) -> str:
    """The markdown table: per interval and size, the runs' min/median/max beside the
    prediction, and whether they differ by more than one heartbeat interval."""
    data = measured(dirs)
    heartbeat = _heartbeat(dirs)
    rows = [
        "| consumer.assignment.interval.ms | members | runs | measured min / median / max ms "
        "| timed prediction ms | within one heartbeat |",
        "|---|---|---|---|---|---|",
    ]
    for (interval, size), runs in sorted(data.items()):
        values = sorted(runs)
        median = round(statistics.median(values))
        guess = predicted(interval, size, heartbeat)
        within = "" if guess is None else ("yes" if abs(median - guess) <= heartbeat else "**no**")
        rows.append(
            f"| {interval:,} | {size} | {len(values)} | {values[0]:,} / {median:,} / "
            f"{values[-1]:,} | {'—' if guess is None else f'{guess:,}'} | {within} |"
        )
    return "\n".join(rows) + "\n"
