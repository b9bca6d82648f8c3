"""A Python API for tests (docs/json.md, "From Python and pytest").

Thin wrappers over what ``groupcheck explore`` and ``groupcheck validate`` run —
``groupcheck.explore.run.explore`` and ``groupcheck.validate.files.validate_path`` — with
typed, frozen results. Nothing is written to disk and no process-wide state is kept, so
tests using it run under ``pytest -n auto``. A verdict never claims more than was
checked: ``ok`` only when the search or validation was complete.

    from groupcheck import api

    verdict = api.check("TINY", rules="my_rules.py:CHANGE", max_depth=6)
    assert verdict.ok, verdict.explain()
    assert api.validate("trace.ndjson", settle=20).ok
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck import exitcodes

__all__ = [
    "TraceFinding",
    "TraceVerdict",
    "Verdict",
    "Violation",
    "check",
    "config",
    "validate",
]


@dataclass(frozen=True)
class Violation:
    """A violated property: its message, and the counterexample's path code
    (``groupcheck replay --path``) and length."""

    property: str
    message: str
    path: str
    length: int
    expected: bool = False
    """Named by ``expect`` (a known finding: it does not fail the check)."""


@dataclass(frozen=True)
class Verdict:
    """What checking a config gave: ``result`` is ``ok``, ``violation`` or
    ``inconclusive`` (``reasons`` say why), ``checked`` says what was checked."""

    result: str
    config: str
    engine: str
    checked: str
    reasons: tuple[str, ...]
    properties: tuple[str, ...]
    violation: Violation | None
    """The violation shown (under a change: one the reference rules do not have)."""
    violations: tuple[Violation, ...]
    """Every property's violation, when the search went on past the first."""
    comparison: str | None
    """Under ``rules``: ``introduces``, ``both``, ``removes`` or ``neither`` against the
    reference rules on the same config, engine, seed and bounds (None: no baseline run)."""
    distinct_states: int | None
    missed_witnesses: tuple[str, ...]
    document: dict[str, Any]
    """The outcome as ``explore --json`` carries it (``baseline``, ``rebalance``)."""

    @property
    def ok(self) -> bool:
        return self.result == "ok"

    @property
    def exit_code(self) -> int:
        """The status ``groupcheck explore`` exits with for this verdict."""
        return exitcodes.exit_code(self.result)

    def explain(self) -> str:
        """The verdict in a few lines, for an assertion's message."""
        lines = [f"{self.result}: {self.config} ({self.engine}: {self.checked})"]
        lines += [f"  - {r}" for r in self.reasons]
        if self.violation is not None:
            v = self.violation
            lines.append(f"  {v.property}: {v.message}")
            lines.append(f"  counterexample: {v.length} steps; groupcheck replay --path {v.path!r}")
        if self.comparison is not None:
            lines.append(f"  against the reference rules: {self.comparison}")
        return "\n".join(lines)


@dataclass(frozen=True)
class TraceFinding:
    """A violation at a line of a trace file."""

    file: str
    line: int
    property: str
    message: str


@dataclass(frozen=True)
class TraceVerdict:
    """What validating a trace gave: ``result`` is ``ok``, ``violation``,
    ``inconclusive`` (``reasons``) or ``malformed`` (``error``: FILE:LINE:COLUMN: why)."""

    file: str
    mode: str
    result: str
    events: int
    violations: tuple[TraceFinding, ...]
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    error: str | None
    document: dict[str, Any]
    """The file's entry as ``validate --json`` carries it."""

    @property
    def ok(self) -> bool:
        return self.result == "ok"

    @property
    def exit_code(self) -> int:
        """The status ``groupcheck validate`` exits with for this file."""
        if self.result == "malformed":
            return exitcodes.BAD_INPUT
        return exitcodes.exit_code(self.result)

    def explain(self) -> str:
        lines = [f"{self.result}: {self.file} ({self.events} events, {self.mode})"]
        if self.error:
            lines.append(f"  {self.error}")
        lines += [f"  {v.file}:{v.line}: {v.property}: {v.message}" for v in self.violations]
        lines += [f"  - {r}" for r in self.reasons]
        return "\n".join(lines)


def config(
    preset: str | None = None, *, file: str | Path | None = None, rules: str | None = None
) -> Any:
    """A config: the preset ``preset`` (``model/presets.py``) or the config file ``file``
    (TOML or JSON, as ``groupcheck config show`` prints), running ``rules``
    (``FILE.py:NAME``, as ``--rules``) when given. Bad input raises
    ``model.status.ConfigError``."""
    from model.presets import preset as named
    from model.status import ConfigError

    if (preset is None) == (file is None):
        raise ConfigError("give a preset name or a config file (one of them)")
    if file is not None:
        from groupcheck.configfile import load_config_file

        chosen = load_config_file(str(file))
    else:
        chosen = named(str(preset))
    if rules is not None:
        from groupcheck.rulesfile import load_rules, with_rules

        loaded, source = load_rules(rules)
        chosen = with_rules(chosen, loaded, source)
    return chosen


def check(
    preset: str | Any = None,
    *,
    file: str | Path | None = None,
    rules: str | None = None,
    engine: str = "bfs",
    max_states: int | None = None,
    max_depth: int | None = None,
    walks: int = 1000,
    max_steps: int = 60,
    seed: int = 0,
    only: list[str] | None = None,
    expect: list[str] | None = None,
    every_property: bool = False,
    baseline: bool = True,
    budget_seconds: float | None = None,
) -> Verdict:
    """Check a config as ``groupcheck explore`` does (on one process): ``preset`` (a
    name, or a config value from :func:`config`) or the config file ``file``, under
    ``rules`` (``FILE.py:NAME``) when given. Under rules other than the reference ones the
    reference rules run on the same config, engine, seed and bounds too (``baseline``),
    and only a violation they do not have is one. The work is bounded by ``max_states``
    and ``max_depth`` (bfs) or ``walks`` and ``max_steps`` (walk); ``budget_seconds``
    only stops it early (the verdict is then inconclusive). A user's rule that fails
    raises ``groupcheck.usercode.UserCodeError``."""
    from groupcheck.explore.run import explore

    if isinstance(preset, str) or preset is None:
        chosen = config(preset, file=file, rules=rules)
    else:
        chosen = preset
        if rules is not None:
            from groupcheck.rulesfile import load_rules, with_rules

            loaded, source = load_rules(rules)
            chosen = with_rules(chosen, loaded, source)
    expected = _expected(expect or [])
    outcome = explore(
        chosen,
        engine=engine,
        seed=seed,
        budget_seconds=budget_seconds,
        max_states=max_states,
        max_depth=max_depth,
        walks=walks,
        max_steps=max_steps,
        only=only,
        expected=expected,
        every_property=every_property,
        baseline=baseline,
        shortest=False,
        workers=1,
    )
    violations = tuple(
        Violation(
            f.property, f.message, f.path.encode(), len(f.path.actions), f.property in expected
        )
        for f in outcome.violations
    )
    shown = None
    if outcome.path is not None and outcome.property is not None:
        shown = Violation(
            outcome.property,
            outcome.message or "",
            outcome.path.encode(),
            len(outcome.path.actions),
        )
    return Verdict(
        result=outcome.result,
        config=chosen.name,
        engine=outcome.engine,
        checked=outcome.checked,
        reasons=tuple(outcome.reasons),
        properties=tuple(outcome.properties),
        violation=shown,
        violations=violations,
        comparison=None if outcome.baseline is None else outcome.baseline["comparison"],
        distinct_states=outcome.distinct_states,
        missed_witnesses=tuple(outcome.missed_witnesses),
        document={
            "result": outcome.result,
            "checked": outcome.checked,
            "baseline": outcome.baseline,
            "rebalance": outcome.rebalance,
            "findings": outcome.findings,
        },
    )


def _expected(names: list[str]) -> list[str]:
    from invariants.check import select_properties

    out: list[str] = []
    for name in names:
        state, step, convergence = select_properties([name])
        out += [p.name for p in (*state, *step)] + (["Convergence"] if convergence else [])
    return sorted(set(out))


def validate(
    path: str | Path,
    mode: str = "safety",
    *,
    settle: int = 100,
    fmt: str = "auto",
    session_timeout_ms: int | None = None,
) -> TraceVerdict:
    """Validate one trace file as ``groupcheck validate`` does (``mode``: ``safety``,
    ``conformance``, ``coordinator`` or ``client``; ``settle``: events after the last
    perturbation that a convergence check needs). A malformed or unreadable file is a
    verdict (``malformed``), not an exception."""
    from groupcheck.validate.files import validate_path
    from groupcheck.validate.timing import TimingOptions

    timing = None
    if session_timeout_ms is not None:
        timing = TimingOptions(session_timeout_ms=session_timeout_ms)
    report = validate_path(str(path), mode, settle, fmt, timing=timing)
    return TraceVerdict(
        file=report.file,
        mode=report.mode,
        result=report.result,
        events=report.events,
        violations=tuple(
            TraceFinding(v.file, v.line, v.property, v.message) for v in report.violations
        ),
        reasons=tuple(report.reasons),
        notes=tuple(report.notes),
        error=report.error,
        document=report.to_json(),
    )
