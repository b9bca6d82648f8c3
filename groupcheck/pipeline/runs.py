"""One seeded run of a sweep and its metrics.

A run is one swarm random walk (``groupcheck.explore.walk``) or one Hypothesis run
(``groupcheck.explore.hypothesis_engine``) of a cell's config with one seed. The engines
are used as they are; the metrics come through the ``Checker`` they already call on every
step (``MetricsChecker`` sees each ``(pre, action, post)``):

- ``steps``: actions the engine took; ``examples``: Hypothesis examples (walk: 1).
- ``converged`` / ``convergence_steps``: once the run's perturbations are over, a fair
  schedule of progress actions (``invariants.liveness``) reaches a converged group in
  that many steps (Hypothesis: the longest over its examples). Not measured (None) when a
  safety property failed first, or when the schedule's bound cut it without showing a
  fair loop or a stuck state (a Convergence violation is claimed only when shown).
- ``revocations``: how often a member left UNREVOKED_PARTITIONS (a revocation completed).
- ``longest_unreleased_wait``: the most consecutive steps one member spent in
  UNRELEASED_PARTITIONS (waiting for partitions another member had not released).
- ``witnesses``: the ``SOMETIMES`` witnesses the run hit.
- ``actions``: how often each action kind was taken (the coverage of the vocabulary).
- ``violation`` / ``message`` / ``path_code``: the first property violated, and the
  delta-debugged counterexample as a compact action-index code (``groupcheck replay``);
  ``found_length`` is the length before minimisation.
- ``error``: an exception the run raised (a model crash), with its type.

Everything is a function of (cell, seed): no clocks, no time budgets (minimisation runs
to its fixpoint), so a rerun anywhere gives the same row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groupcheck.explore.minimise import convergence_violation, minimise_path
from groupcheck.explore.walk import walk
from groupcheck.families import STATISTICS
from invariants.check import Checker, Violation
from invariants.expr import Snapshot
from invariants.liveness import CONVERGENCE, DEFAULT_BOUND, run_fair
from model import system
from model.actions import Action
from model.config import Config
from model.family import family_of_state
from model.path import Path
from model.records import State
from model.status import MemberState
from model.system import AnyState

if TYPE_CHECKING:
    import pyarrow as pa

    from groupcheck.pipeline.grid import Cell, ExplorePlan


@dataclass
class Trajectory:
    """What one walk or one Hypothesis example did, step by step."""

    actions: list[Action] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    revocations: int = 0
    longest_wait: int = 0
    waiting: dict[str, int] = field(default_factory=dict)
    last: AnyState | None = None
    tally: Callable[[Trajectory, Any, Any], None] | None = None
    """The measures of the family's steps (``groupcheck.families.STATISTICS``; None: the
    family has none), resolved at the first step."""
    resolved: bool = False

    def observe(self, pre: AnyState, action: Action, post: AnyState) -> None:
        self.actions.append(action)
        self.kinds[action.kind] += 1
        self.last = post
        if not self.resolved:
            self.tally, self.resolved = STATISTICS.get(family_of_state(pre).name), True
        if self.tally is not None:
            self.tally(self, pre, post)


def consumer_tally(trajectory: Trajectory, pre: State, post: State) -> None:
    """A KIP-848 step's measures: a revocation completed (a member left
    UNREVOKED_PARTITIONS), and how long each member has waited in UNRELEASED_PARTITIONS
    (KIP-848 Reconciliation, phases 2 and 3)."""
    before = pre.group.members
    waiting = trajectory.waiting
    for mid, member in post.group.members.items():
        old = before.get(mid)
        if (
            old is not None
            and old.state is MemberState.UNREVOKED_PARTITIONS
            and member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            trajectory.revocations += 1
        if member.state is MemberState.UNRELEASED_PARTITIONS:
            wait = waiting.get(mid, 0) + 1
            waiting[mid] = wait
            trajectory.longest_wait = max(trajectory.longest_wait, wait)
        elif mid in waiting:
            del waiting[mid]
    for mid in [m for m in waiting if m not in post.group.members]:
        del waiting[mid]


STATISTICS.register("consumer", consumer_tally)


@dataclass
class MetricsChecker(Checker):
    """A ``Checker`` that also records the trajectory it is shown."""

    trajectory: Trajectory = field(default_factory=Trajectory)

    def check_step(
        self,
        pre: AnyState,
        action: Action,
        post: AnyState,
        pre_snap: Snapshot | None = None,
        post_snap: Snapshot | None = None,
    ) -> list[Violation]:
        self.trajectory.observe(pre, action, post)
        return super().check_step(pre, action, post, pre_snap, post_snap)


@dataclass
class RunRow:
    """The result row of one run (see the module docstring for the columns)."""

    run: int
    cell: int
    config: str
    preset: str
    mutant: str | None
    engine: str
    options: str
    seed: int
    steps: int = 0
    examples: int = 0
    converged: bool | None = None
    convergence_steps: int | None = None
    revocations: int = 0
    longest_unreleased_wait: int = 0
    witnesses: list[str] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    violation: str | None = None
    message: str | None = None
    path_code: str | None = None
    path_length: int | None = None
    found_length: int | None = None
    error: str | None = None


def run_schema() -> pa.Schema:
    """The Arrow schema of run rows (one Parquet part holds many)."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    return pa.schema(
        [
            ("run", pa.int64()),
            ("cell", pa.int32()),
            ("config", pa.string()),
            ("preset", pa.string()),
            ("mutant", pa.string()),
            ("engine", pa.string()),
            ("options", pa.string()),
            ("seed", pa.int64()),
            ("steps", pa.int64()),
            ("examples", pa.int32()),
            ("converged", pa.bool_()),
            ("convergence_steps", pa.int32()),
            ("revocations", pa.int32()),
            ("longest_unreleased_wait", pa.int32()),
            ("witnesses", pa.list_(pa.string())),
            (
                "actions",
                pa.list_(pa.struct([("kind", pa.string()), ("count", pa.int64())])),
            ),
            ("violation", pa.string()),
            ("message", pa.string()),
            ("path_code", pa.string()),
            ("path_length", pa.int32()),
            ("found_length", pa.int32()),
            ("error", pa.string()),
        ]
    )


def run_one(plan: ExplorePlan, index: int) -> RunRow:
    """Run ``index`` of ``plan``; a crash of the model is recorded in ``error``."""
    cell, seed = plan.run(index)
    row = RunRow(
        run=index,
        cell=cell.index,
        config=cell.label,
        preset=cell.preset,
        mutant=cell.change,
        engine=cell.engine,
        options=cell.options_json,
        seed=seed,
    )
    try:
        _run(plan, cell, seed, row)
    except Exception as e:  # a model crash is a finding about that run, not a job failure
        row.error = f"{type(e).__name__}: {e}"
    return row


def _run(plan: ExplorePlan, cell: Cell, seed: int, row: RunRow) -> None:
    config = cell.config()
    trajectories: list[Trajectory] = []

    def factory() -> Checker:
        checker = MetricsChecker()
        trajectories.append(checker.trajectory)
        return checker

    found: tuple[str, str, Path] | None = None
    if cell.engine == "walk":
        res = walk(
            config, seed=seed, walks=1, max_steps=plan.walk_max_steps, checker_factory=factory
        )
        row.steps, row.examples = res.steps, 1
        row.witnesses = list(res.witnesses)
        if res.path is not None and res.property is not None:
            found = (res.property, res.message or "", res.path)
            if res.property == "Convergence":
                row.converged = False
        elif not res.convergence_undecided:
            row.converged, row.convergence_steps = True, res.convergence_steps
        # else: the fair schedule's bound cut it without a fair loop: not measured (None)
    else:
        from groupcheck.explore.hypothesis_engine import Profile, run_hypothesis  # noqa: PLC0415  hypothesis only for its engine

        profile = Profile(
            examples=plan.hypothesis_examples,
            steps=plan.hypothesis_steps,
            batch=plan.hypothesis_examples,
        )
        with _without_local_constants():
            out = run_hypothesis(config, seed=seed, profile=profile, checker_factory=factory)
        row.steps, row.examples = out.steps, out.examples
        row.witnesses = sorted(out.seen)
        if out.path is not None and out.property is not None:
            found = (out.property, out.message or "", out.path)
        else:
            found = _hypothesis_convergence(config, trajectories, row)
    _aggregate(trajectories, row)
    if found is not None:
        prop, message, path = found

        small = minimise_path(path, prop)
        row.violation, row.message = prop, message
        row.found_length = len(path.actions)
        row.path_length = len(small.actions)
        row.path_code = small.encode()


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Make a seeded Hypothesis run depend on its seed only.

    Hypothesis sometimes draws an integer from the literals of the *local* modules that
    happen to be imported (``hypothesis.internal.conjecture.providers._get_local_constants``),
    e.g. the ``100`` of a CLI default becomes a candidate for the stateful machine's
    ``draw_integer(0, 254)``. Which modules are imported differs between a CLI process, a
    test process and a Spark worker, so the same seed gave different runs. The pool is
    pinned to empty for the run (pinned hypothesis version; see pyproject.toml)."""
    from hypothesis.internal.conjecture import providers  # noqa: PLC0415  hypothesis only for its engine
    from hypothesis.internal.constants_ast import Constants  # noqa: PLC0415  hypothesis only for its engine

    saved = providers._get_local_constants
    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


def _hypothesis_convergence(
    config: Config, trajectories: Iterable[Trajectory], row: RunRow, bound: int | None = None
) -> tuple[str, str, Path] | None:
    """Convergence after each example, claimed only when shown (a fair loop or a stuck
    state, ``minimise.convergence_violation``): the first shown is the run's violation;
    when the bound cut some example's schedule without showing either, ``converged`` is
    left unmeasured (None) rather than true. ``bound``: the fair schedule's (by default
    ``DEFAULT_BOUND``, grown with the group)."""
    bound = DEFAULT_BOUND if bound is None else bound
    longest = 0
    undecided = False
    for t in trajectories:
        start = t.last if t.last is not None else system.initial(config)
        _, steps, ok = run_fair(start, config, bound)
        if ok:
            longest = max(longest, steps)
            continue
        verdict = convergence_violation(start, config, bound)
        if isinstance(verdict, Violation):
            row.converged = False
            return CONVERGENCE.name, verdict.message, Path(config, tuple(t.actions))
        undecided = True
    if not undecided:
        row.converged, row.convergence_steps = True, longest
    return None


def _aggregate(trajectories: Iterable[Trajectory], row: RunRow) -> None:
    kinds: Counter[str] = Counter()
    for t in trajectories:
        kinds.update(t.kinds)
        row.revocations += t.revocations
        row.longest_unreleased_wait = max(row.longest_unreleased_wait, t.longest_wait)
    row.actions = [{"kind": k, "count": kinds[k]} for k in sorted(kinds)]


def rows_table(rows: list[RunRow]) -> pa.Table:
    """Run rows as an Arrow table in ``run_schema()``."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    schema = run_schema()
    columns = {name: [getattr(r, name) for r in rows] for name in schema.names}
    return pa.table(columns, schema=schema)
