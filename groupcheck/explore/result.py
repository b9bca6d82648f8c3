"""The result record every exploration engine returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.path import Path


@dataclass
class ExploreResult:
    """``result`` is "ok" or "violation"; a violation carries the property, a message naming
    the elements involved and a replayable path from the initial state. ``exhausted`` says
    whether a bounded search saw everything (BFS) or stopped at its budget."""

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
        }
