"""The grid of a timed sweep (KIP-1263) and the plan made from it.

A timed grid maps rebalance time and coordinator load against the KIP-1263 settings and
the timed simulation's durations (``groupcheck/timed``). It is a grid file (JSON or TOML,
read as ``groupcheck.pipeline.grid`` reads one) with a ``timed`` table and seeds::

    seeds = [1, 2, 3]            # or seed = 1 with --runs N

    [timed]
    scenario = "scale-up"        # "scale-up" and/or "churn" (groupcheck/timed/scenarios.py)
    members = [2, 10, 50]        # group size
    assignment_interval_ms = [0, 1000]   # group.consumer.assignment.interval.ms
    assignor_offload = [false, true]     # assignor.offload.enable
    heartbeat_interval_ms = 5000
    assignor_ms = 20             # one assignor run
    executor_threads = 2         # group.coordinator.background.threads
    # groups = [1, 8]            # churn: groups sharing the coordinator's threads

Every key of ``timed`` but the fixed parameters (:data:`FIXED`) is an axis: a list sweeps
its values, a single value fixes it. Every combination is a *cell*; every cell runs once
per seed (the seed draws each member's heartbeat phase). Run ``i`` of the plan is cell
``i // len(seeds)`` with seed ``seeds[i % len(seeds)]``, as in an exploration sweep.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.grid import MAX_CELLS, MAX_RUNS, _kind, _seeds, _seeds_json, read_grid_doc
from groupcheck.timed.engine import Timing
from groupcheck.timed.scenarios import MAX_MEMBERS, Kip1263, group_config
from model.config import INT32_MAX
from model.status import ConfigError

SCENARIOS = ("scale-up", "churn")
"""``groupcheck.timed.scenarios.scale_up`` and ``churn``."""

MAX_MS = 3_600_000
"""The longest duration (ms) a timed grid takes, as ``groupcheck.timed.engine.Timing``."""

# name → (kind, low, high, default): "int", "float" (ms) or "bool".
AXES: dict[str, tuple[str, float, float, Any]] = {
    "members": ("int", 1, MAX_MEMBERS, None),
    "assignment_interval_ms": ("int", 0, INT32_MAX, 0),
    "assignor_offload": ("bool", 0, 1, False),
    "heartbeat_interval_ms": ("int", 1, MAX_MS, None),
    "assignor_ms": ("float", 0, MAX_MS, None),
    "executor_threads": ("int", 1, 1024, 2),
    "groups": ("int", 1, 100, 1),
}
"""The swept keys of ``timed`` (besides ``scenario``) with their ranges and defaults
(None: ``members`` is required; the others default per scenario, :data:`SCENARIO_DEFAULTS`)."""

FIXED: dict[str, tuple[str, float, float, Any]] = {
    "network_ms": ("float", 0, MAX_MS, 1.0),
    "request_ms": ("float", 0, MAX_MS, 0.05),
    "join_gap_ms": ("float", 0, MAX_MS, 200.0),
    "partitions_per_member": ("int", 1, 1000, 50),
    "window_ms": ("float", 1, MAX_MS, 5000.0),
}
"""Single-valued parameters: the timing of the network and the coordinator thread, the
scale-up's gap between the last two joins and partitions per member, the churn window."""

SCENARIO_DEFAULTS = {
    "scale-up": {"heartbeat_interval_ms": 5000, "assignor_ms": 0.0},
    "churn": {"heartbeat_interval_ms": 250, "assignor_ms": 20.0},
}
"""``heartbeat_interval_ms`` and ``assignor_ms`` when the grid does not give them: those of
``groupcheck timed rebalance-times`` and ``groupcheck timed load``."""

TIMED_KEYS = ("timed", "seed", "seeds")


@dataclass(frozen=True)
class TimedCell:
    """One point of a timed grid: a scenario, a group size, the KIP-1263 settings and the
    durations."""

    index: int
    scenario: str
    members: int
    assignment_interval_ms: int
    assignor_offload: bool
    heartbeat_interval_ms: int
    assignor_ms: float
    executor_threads: int
    groups: int
    network_ms: float
    request_ms: float
    join_gap_ms: float
    partitions_per_member: int
    window_ms: float

    @property
    def label(self) -> str:
        """E.g. ``scale-up members=50 interval=1000 offload=true heartbeat=5000 ...``."""
        return (
            f"{self.scenario} members={self.members} interval={self.assignment_interval_ms} "
            f"offload={str(self.assignor_offload).lower()} "
            f"heartbeat={self.heartbeat_interval_ms} assignor={self.assignor_ms:g} "
            f"threads={self.executor_threads}"
            + (f" groups={self.groups}" if self.groups > 1 else "")
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}

    def check(self) -> None:
        """Build the cell's config and timing as the run will (a ConfigError if invalid)."""
        Timing(self.network_ms, self.request_ms, self.assignor_ms, self.executor_threads)
        if self.groups > 1 and self.scenario != "churn":
            raise ConfigError("groups > 1 (groups sharing the coordinator) is a churn axis")
        partitions = self.partitions_per_member * self.members
        group_config(
            members=self.members,
            partitions=partitions if self.scenario == "scale-up" else self.members,
            heartbeat_interval_ms=self.heartbeat_interval_ms,
            kip1263=Kip1263(self.assignment_interval_ms, self.assignor_offload),
            churn=self.scenario == "churn",
        )


@dataclass(frozen=True)
class TimedPlan:
    """Everything that fixes a timed sweep's results: the cells and the seeds."""

    cells: tuple[TimedCell, ...]
    seeds: Sequence[int]

    @property
    def total(self) -> int:
        return len(self.cells) * len(self.seeds)

    def run(self, i: int) -> tuple[TimedCell, int]:
        """Cell and seed of run ``i``."""
        return self.cells[i // len(self.seeds)], self.seeds[i % len(self.seeds)]

    def to_json(self) -> dict[str, Any]:
        return {"cells": [c.to_json() for c in self.cells], "seeds": _seeds_json(self.seeds)}

    def fingerprint(self) -> str:
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_timed_grid(path: str, runs: int | None) -> TimedPlan:
    """Read and check a timed grid file; ``runs`` is ``--runs`` (runs per cell)."""
    return parse_timed_grid(read_grid_doc(path), runs, str(path))


def _value(at: str, kind: str, low: float, high: float, value: object) -> Any:
    if kind == "bool":
        if not isinstance(value, bool):
            raise PipelineError(f"{at}: expected true or false, got {_kind(value)}")
        return value
    number = int | float if kind == "float" else int
    if isinstance(value, bool) or not isinstance(value, number):
        what = "a number" if kind == "float" else "an integer"
        raise PipelineError(f"{at}: expected {what}, got {_kind(value)}")
    if not (low <= value <= high):  # NaN fails too
        raise PipelineError(f"{at}: expected a value in {low:g}..{high:g}, got {_kind(value)}")
    return float(value) if kind == "float" else value


def parse_timed_grid(doc: object, runs: int | None, where: str = "grid") -> TimedPlan:
    """Check a timed grid document (already parsed JSON/TOML) and make its plan."""
    if not isinstance(doc, dict):
        raise PipelineError(f"{where}: a grid is a table/object of keys, got {_kind(doc)}")
    unknown = sorted(set(doc) - set(TIMED_KEYS))
    if unknown:
        raise PipelineError(
            f"{where}: unknown key {unknown[0]!r} in a timed grid; known keys: "
            f"{', '.join(TIMED_KEYS)}"
        )
    raw = doc.get("timed")
    if not isinstance(raw, dict):
        raise PipelineError(
            f"{where}: timed: expected a table of the sweep's axes, got "
            f"{'nothing' if raw is None else _kind(raw)}"
        )
    known = ("scenario", *AXES, *FIXED)
    for key in raw:
        if key not in known:
            raise PipelineError(f"{where}: timed.{key}: unknown key; known: {', '.join(known)}")
    scenarios_raw = raw.get("scenario", "scale-up")
    scenarios = scenarios_raw if isinstance(scenarios_raw, list) else [scenarios_raw]
    if not scenarios:
        raise PipelineError(f"{where}: timed.scenario: expected a non-empty list of names")
    for s in scenarios:
        if s not in SCENARIOS:
            raise PipelineError(
                f"{where}: timed.scenario: expected {' or '.join(SCENARIOS)}, got {_kind(s)}"
            )
    if len(set(scenarios)) != len(scenarios):
        raise PipelineError(f"{where}: timed.scenario: a scenario is listed twice")
    axes: dict[str, list[Any]] = {}
    for name, (kind, low, high, default) in AXES.items():
        at = f"{where}: timed.{name}"
        if name not in raw:
            if name == "members":
                raise PipelineError(f"{at}: missing (the group sizes to sweep)")
            axes[name] = [default]
            continue
        value = raw[name]
        values = value if isinstance(value, list) else [value]
        if not values:
            raise PipelineError(f"{at}: expected a non-empty list of values")
        checked = [_value(at, kind, low, high, v) for v in values]
        if len(set(checked)) != len(checked):
            raise PipelineError(f"{at}: a value is listed twice")
        axes[name] = checked
    fixed: dict[str, Any] = {}
    for name, (kind, low, high, default) in FIXED.items():
        at = f"{where}: timed.{name}"
        if name in raw and isinstance(raw[name], list):
            raise PipelineError(f"{at}: a single value, not a list (it is not an axis)")
        fixed[name] = _value(at, kind, low, high, raw[name]) if name in raw else default
    seeds = _seeds(doc, runs, where)
    count = len(scenarios) * math.prod(len(v) for v in axes.values())
    if count > MAX_CELLS:
        raise PipelineError(
            f"{where}: the timed grid has {count:,} cells; at most {MAX_CELLS:,}: split it"
        )
    if count * len(seeds) > MAX_RUNS:
        raise PipelineError(
            f"{where}: {count:,} cells × {len(seeds):,} seeds are {count * len(seeds):,} "
            f"runs; a plan has at most {MAX_RUNS:,}"
        )
    cells: list[TimedCell] = []
    names = list(AXES)
    for scenario in scenarios:
        for point_values in itertools.product(*(axes[n] for n in names)):
            point = dict(zip(names, point_values, strict=True))
            for name, default in SCENARIO_DEFAULTS[scenario].items():
                if point[name] is None:
                    point[name] = default
            cell = TimedCell(index=len(cells), scenario=scenario, **point, **fixed)
            try:
                cell.check()
            except ConfigError as e:
                raise PipelineError(f"{where}: cell {cell.label!r} is not valid: {e}") from None
            cells.append(cell)
    return TimedPlan(cells=tuple(cells), seeds=seeds)
