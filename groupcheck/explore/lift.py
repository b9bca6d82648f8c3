"""Lifting a bounded-model-checking counterexample to a trace of the model.

A path of ``groupcheck explore --engine bmc`` (``invariants.z3.proof.bmc.Path``) is a
sequence of coordinator states of the symbolic core: its requests are any request the
relation allows (an offset commit at any epoch, say), its targets any valid target (not the
config's assignor's), its partitions one single-partition topic each in the coordinator-only
replay. :func:`lift` looks for a run of the model itself (``system.enabled``/``system.step``
under the config's rules, clients, network and assignor) whose coordinator group goes
through the path's states in order and ends, in the path's last state, with a violation of
a property under the checks the BFS engine runs (every state and step property). Client
steps, sends and deliveries that leave the group alone are free.

The path's members ``m<i>`` and partitions ``("p", i)`` are the finite universe's
(``bmc.universe_of``: the config's member ids, sorted, then one ``restart<k>`` per allowed
restart; its topic partitions, sorted): ``m<i>`` is the ``i``-th member id of the universe
and ``("p", i)`` its ``i``-th partition. A model member is named by its client (``B.1``, a
restarted ``B``, is ``B``); a universe ``restart<k>`` matches any client.

States are compared at three levels, strictest first (:data:`LEVELS`), and the first level
at which a trace is found is reported:

``exact``
  every field the abstraction pins (members with epochs, states, assigned and pending
  partitions, subscriptions and targets; the partition epochs; the committed offsets and
  their epochs; the group and assignment epochs; a coordinator loading), and every change
  of the group must be the path's next state;
``shape``
  the members with their states and assigned and pending partitions, the partitions with a
  partition epoch, who committed which partition (no epochs, targets or subscriptions: the
  model's assignor and clients choose them), and every change of these must be the path's
  next state;
``members``
  who is a member and who committed an offset; other changes of the group may come between
  the path's states (a join the path does not need, say, or one the relation skips).

The strict levels prune every other change, so their searches are small; the ``members``
level's is a breadth-first search of the model with a counter of the states matched.

Each level's search is a breadth-first search over (model state, how many of the path's
states were matched), bounded by ``max_states`` distinct nodes — never by time. A model
state that looks like both the path's current state and its next one is followed both
ways (a restarted client's member, named like the client, replacing the client's own). A trace
that violates a property before it has matched the whole path is not followed (its first
violation would be another counterexample).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.minimise import convergence_violation, first_violations
from invariants.check import Checker, Violation
from invariants.expr import Snapshot
from invariants.liveness import CONVERGENCE, DEFAULT_BOUND, FairMemo
from invariants.snapshot import project_key, snapshot_key
from invariants.z3.proof.state import Concrete, Partition, Universe
from invariants.z3.proof.state import project as project_state
from model import system
from model.actions import Action
from model.config import Config
from model.path import Path

DEFAULT_LIFT_STATES = 50_000
"""Distinct nodes (model state, matched prefix) each level's search visits at most."""

Entry = tuple[str | None, Hashable]
Alpha = tuple[Hashable, tuple[Entry, ...], tuple[Entry, ...]]
"""A group at one level: what is compared as a whole, the members (name, features) and the
committed offsets (committer, features); a ``None`` name matches any client."""


@dataclass(frozen=True)
class Level:
    name: str
    strict: bool
    """Whether every change of the group must be the path's next state."""
    meaning: str


LEVELS = (
    Level("exact", True, "the path's states exactly, with no other change of the group"),
    Level(
        "shape",
        True,
        "the path's members, their states and assigned and pending partitions, the "
        "partitions with an epoch and the committers (not epochs, targets or subscriptions), "
        "with no other change of them",
    ),
    Level(
        "members",
        False,
        "the path's members and committers only, other changes of the group in between",
    ),
)


@dataclass
class Lift:
    """The outcome of :func:`lift`: ``status`` is "lifted" (``path`` is a model trace whose
    last step is its first violation, of ``property``) or "not lifted" (no level found one
    within ``max_states`` nodes: the counterexample stays a coordinator-level one)."""

    status: str
    max_states: int
    level: str | None = None
    path: Path | None = None
    property: str | None = None
    message: str | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    replayed_on: str = "the coordinator"
    """What replayed the path before the lift: the Python coordinator, or (a path of the
    client layer, ``invariants.z3.proof.bmc_clients``) its clients and coordinator."""

    def summary(self) -> str:
        if self.path is not None and self.level is not None:
            meaning = next(lv.meaning for lv in LEVELS if lv.name == self.level)
            return (
                f"lifted to a {len(self.path.actions)}-step model trace matching {meaning} "
                f"(level {self.level}); it violates {self.property}"
            )
        cut = any(not a["exhausted"] for a in self.attempts)
        why = (
            f"no model trace within {self.max_states} states per level"
            if cut
            else "no model trace at any level (every search exhausted)"
        )
        return f"replayed on {self.replayed_on} only; {why}"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "level": self.level,
            "max_states": self.max_states,
            "property": self.property,
            "message": self.message,
            "length": len(self.path.actions) if self.path is not None else None,
            "code": self.path.encode() if self.path is not None else None,
            "attempts": self.attempts,
            "summary": self.summary(),
        }


# --------------------------------------------------------------------------- naming


def rename(value: Concrete, universe: Universe) -> Concrete:
    """A path state (members ``m<i>``, partitions ``("p", i)``) in the universe's names."""

    def m(x: str) -> str:
        return universe.members[int(x[1:])]

    def p(x: Partition) -> Partition:
        return universe.partitions[x[1]]

    def ps(xs: frozenset[Partition]) -> frozenset[Partition]:
        return frozenset(p(x) for x in xs)

    return Concrete(
        members={
            m(k): replace(
                v, assigned=ps(v.assigned), revoking=ps(v.revoking), subscribed=ps(v.subscribed)
            )
            for k, v in value.members.items()
        },
        target=frozenset((m(k), p(x)) for k, x in value.target),
        committed={p(x): (m(k), e) for x, (k, e) in value.committed.items()},
        partition_epochs={p(x): e for x, e in value.partition_epochs.items()},
        group_epoch=value.group_epoch,
        assignment_epoch=value.assignment_epoch,
        loading=value.loading,
        server_error=value.server_error,
    )


def path_namer(config: Config) -> Callable[[str], str | None]:
    """A universe member id as a client name (a ``restart<k>`` placeholder: None, any)."""
    names = {c.name for c in config.clients}
    return lambda mid: mid if mid in names else None


def model_namer(config: Config) -> Callable[[str], str | None]:
    """A model member id as its client's name (``B.1`` is ``B``)."""
    names = {c.name for c in config.clients}

    def name(mid: str) -> str | None:
        if mid in names:
            return mid
        base = mid.rsplit(".", 1)[0]
        return base if base in names else mid

    return name


# --------------------------------------------------------------------------- levels


def alpha(value: Concrete, level: str, name: Callable[[str], str | None]) -> Alpha:
    """``value`` at ``level`` (module docstring), members named by ``name``."""
    members: list[Entry]
    commits: list[Entry]
    if level == "exact":
        whole: Hashable = (
            value.group_epoch,
            value.assignment_epoch,
            frozenset(value.partition_epochs.items()),
            value.loading,
        )
        members = [
            (
                name(k),
                (
                    v.epoch,
                    v.prev,
                    v.state,
                    v.assigned,
                    v.revoking,
                    v.subscribed,
                    frozenset(x for t, x in value.target if t == k),
                ),
            )
            for k, v in value.members.items()
        ]
        commits = [(name(k), (x, e)) for x, (k, e) in value.committed.items()]
    elif level == "shape":
        whole = frozenset(value.partition_epochs)
        members = [(name(k), (v.state, v.assigned, v.revoking)) for k, v in value.members.items()]
        commits = [(name(k), x) for x, (k, _) in value.committed.items()]
    elif level == "members":
        whole = ()
        members = [(name(k), ()) for k in value.members]
        commits = sorted({(name(k), ()) for k, _ in value.committed.values()}, key=repr)
    else:
        raise ValueError(f"no lifting level {level!r}")
    return (whole, tuple(sorted(members, key=repr)), tuple(sorted(commits, key=repr)))


def _entries_match(model: Sequence[Entry], path: Sequence[Entry]) -> bool:
    """Multisets equal, a ``None`` name in ``path`` matching any name."""
    if len(model) != len(path):
        return False
    rest = Counter(model)
    for e in path:
        if e[0] is None:
            continue
        if rest[e] == 0:
            return False
        rest[e] -= 1
    wild = Counter(f for n, f in path if n is None)
    return Counter(f for (_, f), k in rest.items() for _ in range(k)) == wild


def matches(model: Alpha, path: Alpha) -> bool:
    """Whether a model group at a level is the path's state at that level."""
    return (
        model[0] == path[0]
        and _entries_match(model[1], path[1])
        and _entries_match(model[2], path[2])
    )


def _collapsed(xs: Sequence[Alpha]) -> list[Alpha]:
    out: list[Alpha] = []
    for x in xs:
        if not out or out[-1] != x:
            out.append(x)
    return out


# --------------------------------------------------------------------------- search


@dataclass
class _Node:
    state: Any
    parent: tuple[Hashable, int] | None
    action: Action | None


def _search(
    config: Config,
    targets: list[Alpha],
    level: str,
    strict: bool,
    max_states: int,
    ends: Callable[[Any], list[Violation]] | None = None,
) -> tuple[list[Action] | None, list[Violation], int, bool]:
    """A breadth-first search for a trace through ``targets`` in order ending in a
    violation; returns the actions (None: none found), the violations of its last step, the
    nodes visited and whether the search was exhausted. With ``ends``, the trace ends
    instead in a state matching the last target, free of violations, on which ``ends``
    returns violations (a liveness check of that state)."""
    checker = Checker()
    normal = channel_normal_form(config)
    name = model_namer(config)
    view_index: dict[Hashable, int] = {}
    snapshots: list[Snapshot] = []
    alphas: list[Alpha] = []
    state_verdicts: dict[int, list[Violation]] = {}
    step_verdicts: dict[tuple[int, int], list[Violation]] = {}

    def view_of(s: Any) -> int:
        key = snapshot_key(s)
        i = view_index.get(key)
        if i is None:
            i = view_index[key] = len(snapshots)
            snapshots.append(project_key(key))
            alphas.append(alpha(project_state(s), level, name))
        return i

    def violations(pre: Any, pv: int, action: Action, post: Any, qv: int) -> list[Violation]:
        step = step_verdicts.get((pv, qv))
        if step is None:
            step = step_verdicts[pv, qv] = checker.check_step(
                pre, action, post, snapshots[pv], snapshots[qv]
            )
        st = state_verdicts.get(qv)
        if st is None:
            st = state_verdicts[qv] = checker.check_state(post, snapshots[qv])
        return step + st

    def trace(key: tuple[Hashable, int]) -> list[Action]:
        actions: list[Action] = []
        node = nodes[key]
        while node.parent is not None:
            assert node.action is not None
            actions.append(node.action)
            node = nodes[node.parent]
        return actions[::-1]

    init = system.initial(config)
    iv = view_of(init)
    last = len(targets) - 1
    if not matches(alphas[iv], targets[0]) or checker.check_state(init, snapshots[iv]):
        return None, [], 1, True
    if ends is not None and last == 0:
        end = ends(init)
        if end:
            return [], end, 1, False
    start = (normal(init), 0)
    nodes: dict[tuple[Hashable, int], _Node] = {start: _Node(init, None, None)}
    best: dict[Hashable, int] = {start[0]: 0}
    queue: deque[tuple[tuple[Hashable, int], int]] = deque([(start, iv)])
    while queue:
        if len(nodes) >= max_states:
            return None, [], len(nodes), False
        key, pv = queue.popleft()
        k = key[1]
        state = nodes[key].state
        here = alphas[pv]
        for action in system.enabled(state, config):
            new = system.step(state, action, config)
            qv = view_of(new)
            now = alphas[qv]
            onward = k < last and matches(now, targets[k + 1])
            if now == here or matches(now, targets[k]):
                js = [k]
                if onward and now == here:
                    # The next path state may look like this one at this level (a
                    # restarted client's member is named like the client it replaces).
                    js.append(k + 1)
            elif onward:
                js = [k + 1]
            elif strict:
                continue
            else:
                js = [k]
            bad = violations(state, pv, action, new, qv)
            if bad:
                if ends is None and js[-1] == last and matches(now, targets[last]):
                    return [*trace(key), action], bad, len(nodes), False
                continue
            if ends is not None and js[-1] == last and matches(now, targets[last]):
                end = ends(new)
                if end:
                    return [*trace(key), action], end, len(nodes), False
            normal_new = normal(new)
            for j in js:
                new_key = (normal_new, j)
                if new_key in nodes:
                    continue
                if not strict:
                    # A state already reached having matched as many of the path's states
                    # or more dominates this node: every way on from it that matches the
                    # rest of the path from here matches it from there too (the rest is a
                    # suffix).
                    if best.get(normal_new, -1) >= j:
                        continue
                    best[normal_new] = j
                nodes[new_key] = _Node(new, key, action)
                queue.append((new_key, qv))
    return None, [], len(nodes), True


def lift(
    path: Any,
    config: Config,
    universe: Universe,
    *,
    max_states: int = DEFAULT_LIFT_STATES,
    levels: Sequence[str] | None = None,
) -> Lift:
    """Lift the BMC ``path`` (``invariants.z3.proof.bmc.Path``, found on ``universe``) to a
    trace of ``config`` (module docstring): level by level, strictest first, each search
    bounded by ``max_states`` nodes. A trace found replays exactly and its first violation
    is its last step (re-checked here as ``groupcheck replay`` checks it)."""
    pname = path_namer(config)
    named = [rename(s, universe) for s in path.states]
    out = Lift(status="not lifted", max_states=max_states)
    if getattr(path, "clients", ()):
        out.replayed_on = "the clients and the coordinator"
    for lv in LEVELS:
        if levels is not None and lv.name not in levels:
            continue
        targets = _collapsed([alpha(s, lv.name, pname) for s in named])
        actions, _, visited, exhausted = _search(config, targets, lv.name, lv.strict, max_states)
        out.attempts.append(
            {"level": lv.name, "states": visited, "exhausted": exhausted, "found": bool(actions)}
        )
        if actions is None:
            continue
        found = first_violations(config, actions, check_convergence=True)
        if found is None or found[1] != len(actions):
            raise AssertionError(
                f"a lifted trace does not replay to its violation at step {len(actions)}"
            )
        chosen = next((v for v in found[0] if v.property == path.goal), found[0][0])
        out.status = "lifted"
        out.level = lv.name
        out.path = Path(config, tuple(actions))
        out.property = chosen.property
        out.message = chosen.message
        return out
    return out


def lift_lasso(
    lasso: Any,
    config: Config,
    universe: Universe,
    *,
    max_states: int = DEFAULT_LIFT_STATES,
    bound: int | None = None,
    levels: Sequence[str] | None = None,
) -> Lift:
    """Lift the prefix of a BMC lasso (``invariants.z3.lasso.Lasso``: the path up
    to the loop's entry) to a trace of ``config`` whose last state matches the loop's entry
    and from which ``invariants.liveness``'s fair schedule (with ``bound``, by default
    ``DEFAULT_BOUND``) is shown not to converge — a fair loop or a stuck state
    (``minimise.convergence_violation``; a schedule the bound only cut shows nothing): the
    Convergence counterexample of the model, as the BFS engine reports one. Level by level
    as :func:`lift`; "not lifted" when no matching state within ``max_states`` nodes per
    level is shown not to converge (then every matching state reached converged or was
    undecided — counted in ``attempts`` — or none was reached)."""
    steps = DEFAULT_BOUND if bound is None else bound
    memo = FairMemo()
    reached = {"matching": 0, "converging": 0, "undecided": 0}

    def ends(state: Any) -> list[Violation]:
        reached["matching"] += 1
        verdict = convergence_violation(state, config, steps, memo=memo)
        if isinstance(verdict, Violation):
            return [verdict]
        reached["converging" if verdict is None else "undecided"] += 1
        return []

    prefix = lasso.prefix
    pname = path_namer(config)
    named = [rename(s, universe) for s in prefix.states]
    out = Lift(status="not lifted", max_states=max_states)
    if getattr(prefix, "clients", ()):
        out.replayed_on = "the clients and the coordinator"
    for lv in LEVELS:
        if levels is not None and lv.name not in levels:
            continue
        reached.update(matching=0, converging=0, undecided=0)
        targets = _collapsed([alpha(s, lv.name, pname) for s in named])
        actions, _, visited, exhausted = _search(
            config, targets, lv.name, lv.strict, max_states, ends=ends
        )
        out.attempts.append(
            {
                "level": lv.name,
                "states": visited,
                "exhausted": exhausted,
                "found": actions is not None,
                "matching": reached["matching"],
                "converging": reached["converging"],
                "undecided": reached["undecided"],
            }
        )
        if actions is None:
            continue
        found = first_violations(config, actions, check_convergence=True, bound=steps)
        if found is None or found[1] != len(actions):
            raise AssertionError(
                f"a lifted trace does not replay to its violation at step {len(actions)}"
            )
        chosen = next((v for v in found[0] if v.property == CONVERGENCE.name), None)
        if chosen is None:
            raise AssertionError("a lifted lasso prefix does not replay to a Convergence failure")
        out.status = "lifted"
        out.level = lv.name
        out.path = Path(config, tuple(actions))
        out.property = chosen.property
        out.message = chosen.message
        return out
    return out
