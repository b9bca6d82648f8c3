"""A Python API for tests (docs/json.md, "From Python and pytest").

Thin wrappers over what ``groupcheck explore``, ``validate``, ``mutants`` and ``prove``
run — ``groupcheck.explore.run.explore``, ``groupcheck.validate.files.validate_path``,
``groupcheck.mutants.matrix.kill_matrix`` and
``groupcheck.symbolic.prove_cmd.prove_document`` — with typed, frozen results. Nothing is
written to disk and no process-wide state is kept, so tests using it run under
``pytest -n auto``. A verdict never claims more than was checked: ``ok`` only when the
search or validation was complete.

    from groupcheck import api

    verdict = api.check("TINY", rules="my_rules.py:CHANGE", max_depth=6)
    assert verdict.ok, verdict.explain()
    assert api.validate("trace.ndjson", settle=20).ok
    assert api.mutants(["revoke-without-waiting"]).ok  # every mutant killed as expected
    assert api.prove(only=["NoServerError"]).summary["failed"] == 0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck import exitcodes

__all__ = [
    "MutantRow",
    "MutantsVerdict",
    "ProofGoal",
    "ProofObligation",
    "ProofVerdict",
    "TraceFinding",
    "TraceVerdict",
    "Verdict",
    "Violation",
    "check",
    "config",
    "mutants",
    "prove",
    "validate",
]


class _Judged:
    """What a verdict's ``result`` says: ``ok`` only for a complete check that found
    nothing, and the status the command exits with."""

    result: str

    @property
    def ok(self) -> bool:
        return self.result == "ok"

    @property
    def exit_code(self) -> int:
        """The status the command exits with for this verdict."""
        return exitcodes.exit_code(self.result)


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
class Verdict(_Judged):
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
class TraceVerdict(_Judged):
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


@dataclass(frozen=True)
class MutantRow:
    """One row of the kill matrix (docs/json/mutants.schema.json, ``row``): ``result`` is
    ``killed``, ``survived``, ``inconclusive`` or ``user code error``; ``kill`` how it was
    killed (``violation``, ``witness lost``, None); ``as_expected`` whether the property
    that killed it is its ``expected`` one; ``code`` the counterexample's path code."""

    mutant: str
    scenario: str
    result: str
    killed: bool
    kill: str | None
    property: str | None
    expected: str | None
    as_expected: bool
    witnesses_lost: tuple[str, ...]
    reasons: tuple[str, ...]
    checked: str
    engine: str | None
    length: int | None
    shortest: int | None
    code: str | None
    source: str | None
    seconds: float


@dataclass(frozen=True)
class MutantsVerdict(_Judged):
    """What ``groupcheck mutants`` gave: ``result`` is ``ok`` (every mutant killed, by its
    expected property where it names one), ``violation`` (one survived or was killed by
    another property), ``inconclusive`` (a bound or the budget left one undecided) or
    ``user code error``; ``rows`` one per mutant, in order."""

    result: str
    checked: str
    killed: int
    rows: tuple[MutantRow, ...]
    document: dict[str, Any]
    """The matrix as ``mutants --json`` carries it (without ``schema``, ``version``)."""

    @property
    def exit_code(self) -> int:
        """The status ``groupcheck mutants`` exits with for this matrix."""
        from groupcheck.mutants.matrix import matrix_status

        return matrix_status(self.document["mutants"])

    def row(self, mutant: str) -> MutantRow:
        """The row of ``mutant`` (``KeyError`` when it was not run)."""
        for r in self.rows:
            if r.mutant == mutant:
                return r
        raise KeyError(mutant)

    def explain(self) -> str:
        lines = [f"{self.result}: {self.checked}"]
        for r in self.rows:
            what = r.property or (", ".join(r.witnesses_lost) if r.witnesses_lost else "")
            lines.append(f"  {r.mutant} ({r.scenario}): {r.result} {what}".rstrip())
            if r.killed and not r.as_expected:
                lines.append(f"    expected {r.expected}, but {r.property} failed first")
            lines += [f"    - {reason}" for reason in r.reasons]
        return "\n".join(lines)


def mutants(
    names: Sequence[str] | None = None,
    *,
    from_files: Sequence[str | Path] = (),
    budget_seconds: float | None = 60.0,
) -> MutantsVerdict:
    """Run the kill matrix as ``groupcheck mutants`` does: the mutants ``names`` (every
    mutant of the catalogue and of ``from_files`` when None), each explored on its scenario
    (``groupcheck.mutants.matrix``: BFS within its state bound, then seeded walks; a
    user's mutant against the reference rules on the same scenario). ``from_files`` are
    mutants files (``--from``), imported relative to their own directory;
    ``budget_seconds`` bounds each mutant's run (it can only make a row inconclusive).
    Unknown names raise ``model.status.ConfigError``; a mutants file that fails to load
    raises ``groupcheck.usercode.UserCodeError``, and a mutant whose rule fails is a row
    of result ``user code error``."""
    from groupcheck.budget import watchdog
    from groupcheck.mutants import MUTANTS
    from groupcheck.mutants.matrix import kill_matrix, matrix_document
    from groupcheck.rulesfile import load_mutants

    known: dict[str, Any] = dict(MUTANTS)
    extra: list[Any] = []
    for path in from_files:
        with watchdog(budget_seconds):  # a file that never loads is stopped
            loaded = load_mutants(str(path), known)
        known.update((m.name, m) for m in loaded)
        extra.extend(loaded)
    rows = kill_matrix(list(names) if names is not None else None, budget_seconds, extra=extra)
    doc = matrix_document(rows)
    return MutantsVerdict(
        result=doc["result"],
        checked=doc["checked"],
        killed=doc["killed"],
        rows=tuple(
            MutantRow(
                mutant=r["mutant"],
                scenario=r["scenario"],
                result=r["result"],
                killed=r["killed"],
                kill=r["kill"],
                property=r["property"],
                expected=r["expected"],
                as_expected=r["as_expected"],
                witnesses_lost=tuple(r["witnesses_lost"]),
                reasons=tuple(r["reasons"]),
                checked=r["checked"],
                engine=r["engine"],
                length=r["length"],
                shortest=r["shortest"],
                code=r["code"],
                source=r["source"],
                seconds=r["seconds"],
            )
            for r in rows
        ),
        document=doc,
    )


@dataclass(frozen=True)
class ProofGoal:
    """A goal of the proof (an invariant conjunct, a lemma, a step property or a ranking
    obligation) and how its obligations ended: ``status`` ``proved``, ``failed`` or
    ``unknown``; ``layer`` ``core``, ``client layer`` or ``ranking``."""

    goal: str
    layer: str
    status: str
    obligations: int
    seconds: float
    lemma: bool


@dataclass(frozen=True)
class ProofObligation:
    """An obligation of the core that was not proved: ``status`` ``failed`` (``cti``: the
    counterexample to induction, in lines) or ``unknown`` (``reason``: Z3's)."""

    obligation: str
    goal: str
    family: str | None
    status: str
    reason: str | None
    cti: tuple[str, ...]


@dataclass(frozen=True)
class ProofVerdict(_Judged):
    """What ``groupcheck prove`` gave: ``result`` is ``ok`` (every obligation proved and
    every premise satisfiable), ``violation`` (an obligation failed, or a premise is
    unsatisfiable: the proof would be vacuous) or ``inconclusive`` (Z3 answered unknown,
    or ``only`` left conjuncts assumed but unchecked: ``reasons``)."""

    result: str
    checked: str
    variant: str | None
    summary: dict[str, int]
    """``proved``, ``failed`` and ``unknown`` obligations."""
    non_vacuity: str
    """The premises' verdict: ``satisfiable``, ``vacuous`` or ``unknown``."""
    reasons: tuple[str, ...]
    goals: tuple[ProofGoal, ...]
    unproved: tuple[ProofObligation, ...]
    document: dict[str, Any]
    """The report as ``prove --json`` carries it (without ``schema``, ``version``)."""

    def explain(self) -> str:
        c = self.summary
        lines = [
            f"{self.result}: {self.checked} ({c['proved']} proved, {c['failed']} failed, "
            f"{c['unknown']} unknown; premises {self.non_vacuity})"
        ]
        lines += [f"  - {r}" for r in self.reasons]
        for o in self.unproved:
            lines.append(f"  {o.status}: {o.obligation}" + (f" ({o.reason})" if o.reason else ""))
            lines += [f"    {line}" for line in o.cti]
        return "\n".join(lines)


def prove(
    preset: str | None = None,
    *,
    file: str | Path | None = None,
    variant: str | None = None,
    clients: bool = False,
    natural_lemmas: bool = False,
    only: Sequence[str] | None = None,
    timeout_seconds: float = 30.0,
    reach: int | None = None,
) -> ProofVerdict:
    """Prove as ``groupcheck prove`` does (not ``--agreement``): the coordinator core's
    invariant, step properties and convergence ranking for groups of any size, with the
    protocol switches of ``preset`` or the config file ``file`` (the defaults of Config
    without either); against the symbolic ``variant`` of a catalogue mutant; with the
    client layer (``clients``, ``natural_lemmas``); only the goals ``only`` (the rest is
    then assumed, unchecked: inconclusive at best). ``timeout_seconds`` bounds each Z3
    query (a query that needs longer is unknown); ``reach`` bounds the BMC search for a
    path to each counterexample to induction (default 4; 0: none). Non-vacuity is
    checked every run. Bad input raises ``model.status.ConfigError``."""
    from groupcheck.cli import build_parser
    from groupcheck.symbolic.prove_cmd import prove_document
    from model.status import ConfigError

    if preset is not None and file is not None:
        raise ConfigError("give a preset name or a config file, not both")
    if not timeout_seconds > 0:
        raise ConfigError(f"timeout_seconds must be positive, not {timeout_seconds}")
    if reach is not None and reach < 0:
        raise ConfigError(f"reach must be 0 or more, not {reach}")
    argv = ["prove", "--quiet", "--timeout", repr(float(timeout_seconds))]
    if preset is not None:
        argv += ["--preset", str(preset)]
    if file is not None:
        argv += ["--config", str(file)]
    if variant is not None:
        argv += ["--variant", str(variant)]
    if clients:
        argv.append("--clients")
    if natural_lemmas:
        argv.append("--natural-lemmas")
    for goal in only or ():
        argv += ["--only", str(goal)]
    if reach is not None:
        argv += ["--reach", str(reach)]
    doc = prove_document(build_parser().parse_args(argv))
    return ProofVerdict(
        result=doc["result"],
        checked=doc["checked"],
        variant=doc["variant"],
        summary=dict(doc["summary"]),
        non_vacuity=doc["non_vacuity"]["result"],
        reasons=tuple(doc["reasons"]),
        goals=tuple(
            ProofGoal(
                g["goal"], g["layer"], g["status"], g["obligations"], g["seconds"], g["lemma"]
            )
            for g in doc["goals"]
        ),
        unproved=tuple(
            ProofObligation(
                obligation=o["obligation"],
                goal=o["goal"],
                family=o.get("family"),
                status=o["status"],
                reason=o.get("reason"),
                cti=tuple(o.get("cti", ())),
            )
            for o in doc["obligations"]
            if o["status"] != "proved"
        ),
        document=doc,
    )
