"""The result record every exploration engine returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.path import Path


@dataclass
class ExploreResult:
    """``result`` is "ok", "violation" or "inconclusive" (``invariants.verdict``); a
    violation carries the property, a message naming the elements involved and a
    replayable path from the initial state; an inconclusive result says why in
    ``reasons``. ``exhausted`` says whether a bounded search saw every reachable state
    (BFS); ``checked`` says in words what was checked (e.g. "27000 distinct states,
    exhausted", "1000 walks of up to 60 steps")."""

    engine: str
    result: str = "ok"
    property: str | None = None
    message: str | None = None
    path: Path | None = None
    distinct_states: int | None = None
    depth: int | None = None
    steps: int = 0
    witnesses: list[str] = field(default_factory=list)
    missed_witnesses: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exhausted: bool | None = None
    convergence_steps: int | None = None
    """Walk engine: the longest fair tail any walk needed to converge (None: none checked)."""
    reasons: list[str] = field(default_factory=list)
    checked: str = ""
    collision_probability: float | None = None
    """BFS on fingerprints (``groupcheck.explore.pbfs``): TLC's estimate of the probability
    that two visited states shared a fingerprint (None: states were stored whole)."""
    bytes_per_state: float | None = None
    """BFS on fingerprints: bytes of fingerprints, parent pointers and convergence memo per
    distinct state."""
    workers: int | None = None
    """BFS on fingerprints: the processes that searched (1: the search never left the
    calling process, ``groupcheck.explore.pbfs.parallel_bfs``'s ``serial_until``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "result": self.result,
            "property": self.property,
            "message": self.message,
            "length": len(self.path.actions) if self.path is not None else None,
            "distinct_states": self.distinct_states,
            "depth": self.depth,
            "steps": self.steps,
            "witnesses": self.witnesses,
            "missed_witnesses": self.missed_witnesses,
            "seconds": round(self.seconds, 3),
            "exhausted": self.exhausted,
            "reasons": self.reasons,
            "checked": self.checked,
            "collision_probability": self.collision_probability,
            "bytes_per_state": self.bytes_per_state,
        }
