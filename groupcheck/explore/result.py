"""The result record every exploration engine returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.path import Path


@dataclass(frozen=True)
class Found:
    """One property's violation as an engine found it: the property, the message naming the
    elements involved, and a replayable path (BFS: a shortest one; walk and Hypothesis: the
    shortest of those met)."""

    property: str
    message: str
    path: Path


class Violations:
    """The first (BFS) or shortest (walk, Hypothesis) violation of each property, for an
    engine that does not stop at its first violation: ``expected`` properties (known
    findings a run declares, ``--expect``) never stop it, and with ``every_property`` no
    violation does — the search goes on (past violating states too) until every property in
    ``properties`` was violated or its bounds end it."""

    def __init__(
        self,
        *,
        expected: frozenset[str] = frozenset(),
        every_property: bool = False,
        properties: frozenset[str] = frozenset(),
    ) -> None:
        self.expected = expected
        self.every_property = every_property
        self.properties = properties
        self.found: dict[str, Found] = {}

    @property
    def active(self) -> bool:
        """Whether the engine should go on past violations (else: the classic first stop)."""
        return self.every_property or bool(self.expected)

    def note(self, property: str, message: str, path: Path) -> bool:
        """Record a violation (kept when it is the property's first, or shorter than the one
        kept); whether the search must stop here."""
        kept = self.found.get(property)
        if kept is None or len(path.actions) < len(kept.path.actions):
            self.found[property] = Found(property, message, path)
        return self.must_stop(property)

    def must_stop(self, property: str) -> bool:
        if property in self.expected:
            return self.done()
        if not self.every_property:
            return True
        return self.done()

    def done(self) -> bool:
        """Every property the search checks has a violation: nothing more to find."""
        return bool(self.properties) and self.properties <= self.found.keys()

    def unexpected(self) -> list[Found]:
        return [f for f in self.found.values() if f.property not in self.expected]


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
    convergence_undecided: int = 0
    """Walk engine: the walks whose final fair schedule its bound cut without showing a
    fair loop or a stuck state (Convergence undecided there; the result is inconclusive)."""
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
    violations: list[Found] = field(default_factory=list)
    """With ``Violations`` active: every property's first (BFS) or shortest violation, in
    the order found; the result is "violation" when one of them was not expected."""
    search_result: str | None = None
    search_reasons: list[str] = field(default_factory=list)
    """With ``Violations`` active: the verdict of the search as if nothing had been
    violated (complete and every witness hit: "ok"; else "inconclusive" and why)."""

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


def settle(out: ExploreResult, collect: Violations) -> None:
    """Fill ``out`` (the search's own verdict) with what ``collect`` recorded: a violation
    when one was not expected (the first found is the one shown), else the search's."""
    out.violations = list(collect.found.values())
    out.search_result, out.search_reasons = out.result, list(out.reasons)
    unexpected = collect.unexpected()
    if unexpected:
        first = unexpected[0]
        out.result, out.reasons = "violation", []
        out.property, out.message, out.path = first.property, first.message, first.path
