"""Bounded model checking over the symbolic coordinator core, with every counterexample
replayed through the Python model's coordinator rules.

:func:`search` unrolls the relation from ``Init`` for 1, 2, … ``depth`` steps and asks for
a path whose last state violates a state property of the core (or whose last step violates
a step property). Only the families whose steps the replay can drive are unrolled — a
client's heartbeat (a bump only for a changed subscription, a valid request, the group
never full), a leave and an offset commit — so a path found is a path of requests.

:func:`replay` plays the path through ``model.coordinator`` — the functions
``system.step`` runs when it delivers a request, with the config's ``Rules`` (a mutant's,
if any) — on a group whose topics are one single-partition topic per partition of the
path, with the path's targets as the assignor's output. After every step the Python
group's projection must equal the path's state (else :class:`ReplayDiverged`), and at the
end the Python reading of the property must fail on the Python states: the counterexample
is the model's, not only the encoding's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.expr import StepSnapshot, compile_expr
from invariants.properties import Property
from invariants.z3.proof.induction import STATE_TARGETS, STEP_TARGETS, params_of
from invariants.z3.proof.reading import read
from invariants.z3.proof.state import (
    PARTITION,
    Concrete,
    Partition,
    SymState,
    decode,
    project_group,
    render,
)
from invariants.z3.proof.transition import Family, Options, families, initial

BMC_FAMILIES = ("DeliverMessage.heartbeat", "DeliverMessage.leave", "DeliverMessage.offset_commit")

_p = z3.Const("p", PARTITION)


class ReplayDiverged(AssertionError):
    """The Python coordinator did not reproduce a step of the symbolic path: the encoding
    and the model disagree."""


@dataclass(frozen=True)
class Path:
    """A symbolic counterexample: the states and, between them, the family and its
    parameters (members named ``m0``…, partitions ``p0``…)."""

    goal: str
    states: tuple[Concrete, ...]
    steps: tuple[tuple[str, dict[str, object]], ...]


@dataclass(frozen=True)
class Outcome:
    status: str  # "violation", "ok" (none within depth), "unknown"
    depth: int
    seconds: float
    path: Path | None = None
    reason: str = ""


def _replayable(fam: Family) -> Any:
    """The family's formula restricted to steps the replay can drive."""
    p = fam.params
    if fam.name != "DeliverMessage.heartbeat":
        return fam.formula
    return z3.And(
        fam.formula,
        z3.Not(p["invalid"]),
        z3.Not(p["group_full"]),
        z3.Not(p["owned_null"]),
        p["bump"] == p["subscription_changed"],
    )


def search(goal: str, depth: int, options: Options, *, timeout_ms: int = 60_000) -> Outcome:
    """The shortest path (in steps, up to ``depth``) to a violation of ``goal``."""
    start = time.monotonic()
    state_goals = {c.name: c for c in STATE_TARGETS}
    step_goals = {s.name: s for s in STEP_TARGETS}
    if goal not in state_goals and goal not in step_goals:
        raise ValueError(f"{goal!r} is not a property of the core")
    for k in range(1, depth + 1):
        states = [SymState.fresh(f"s{i}") for i in range(k + 1)]
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(initial(states[0]))
        chosen: list[list[tuple[Any, Family]]] = []
        for i in range(k):
            fams = [
                f for f in families(states[i], states[i + 1], options) if f.name in BMC_FAMILIES
            ]
            picks = []
            for f in fams:
                flag = z3.Bool(f"step{i}:{f.name}")
                picks.append((flag, f))
                solver.add(z3.Implies(flag, _replayable(f)))
            solver.add(z3.Or(*[flag for flag, _ in picks]))
            chosen.append(picks)
        if goal in state_goals:
            solver.add(z3.Not(read(state_goals[goal].expr, now=states[k])))
        else:
            expr = step_goals[goal].expr
            assert expr is not None
            solver.add(z3.Not(read(expr, pre=states[k - 1], post=states[k])))
        answer = solver.check()
        if answer == z3.unknown:
            return Outcome(
                "unknown", k, time.monotonic() - start, reason=str(solver.reason_unknown())
            )
        if answer == z3.sat:
            model = solver.model()
            decoded = []
            names: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
            for s in states:
                value, members, partitions = decode(model, s)
                decoded.append(value)
                names = (members, partitions)
            steps = []
            for picks in chosen:
                flag, fam = next(
                    (fl, f) for fl, f in picks if z3.is_true(model.eval(fl, model_completion=True))
                )
                steps.append((fam.name, params_of(model, fam, *names)))
            path = Path(goal, tuple(decoded), tuple(steps))
            return Outcome("violation", k, time.monotonic() - start, path=path)
    return Outcome("ok", depth, time.monotonic() - start)


# --------------------------------------------------------------------------- replay


def _tp(name: str | Partition) -> tuple[str, int]:
    """A path partition (``p3`` or ``("p", 3)``) as the replay's topic partition."""
    i = int(name[1:]) if isinstance(name, str) else name[1]
    return (f"p{i}", 0)


def _abstract(value: Concrete) -> Concrete:
    """A path state with partitions named as the replay names them."""

    def ps(parts: frozenset[Partition]) -> frozenset[Partition]:
        return frozenset(_tp(p) for p in parts)

    members = {
        mid: replace(
            mv, assigned=ps(mv.assigned), revoking=ps(mv.revoking), subscribed=ps(mv.subscribed)
        )
        for mid, mv in value.members.items()
    }
    return Concrete(
        members=members,
        target=frozenset((m, _tp(p)) for m, p in value.target),
        committed={_tp(p): c for p, c in value.committed.items()},
        partition_epochs={_tp(p): e for p, e in value.partition_epochs.items()},
        group_epoch=value.group_epoch,
        assignment_epoch=value.assignment_epoch,
        loading=value.loading,
    )


def _comparable(value: Concrete) -> tuple[object, ...]:
    """The fields the relation pins: a non-member's integers are open in the abstraction,
    and a committed offset's epoch of a partition never committed does not exist."""
    return (
        value.members,
        value.target,
        dict(value.committed),
        dict(value.partition_epochs),
        value.group_epoch,
        value.assignment_epoch,
    )


def replay(path: Path, rules: Any, base_config: Any) -> tuple[list[Concrete], bool]:
    """Play ``path`` through the Python coordinator under ``rules``; returns the Python
    states' projections and whether a heartbeat was answered UNKNOWN_SERVER_ERROR. Raises
    :class:`ReplayDiverged` when a Python state differs from the path's."""
    from model import coordinator as co
    from model.ids import FrozenMap
    from model.records import (
        ConsumerGroupHeartbeatRequest,
        Group,
        OffsetCommitRequest,
        TopicMetadata,
    )
    from model.status import ErrorCode

    n_parts = max((len(s.partition_domain()) for s in path.states), default=0)
    topics = FrozenMap((f"p{i}", TopicMetadata(f"p{i}", 1)) for i in range(max(n_parts, 1)))
    first = path.states[0]
    group = Group(
        group_epoch=first.group_epoch,
        assignment_epoch=first.assignment_epoch,
        target_assignment=FrozenMap(),
        members=FrozenMap(),
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
    )

    def projection(g: Group) -> Concrete:
        subs = {
            mid: frozenset(
                (f"p{i}", 0) for i in range(len(topics)) if f"p{i}" in m.subscribed_topic_names
            )
            for mid, m in g.members.items()
        }
        return project_group(g, subs)

    out = [projection(group)]
    server_error = False
    for i, (family, params) in enumerate(path.steps):
        after = path.states[i + 1]
        if family == "DeliverMessage.heartbeat":
            pairs = [str(x).split(":") for x in params["target"]]  # type: ignore[attr-defined]
            target = {m: frozenset(_tp(p) for m2, p in pairs if m2 == m) for m, _ in pairs}

            def install(g: Group, t: Any, default: str, target: Any = target) -> Group:
                return replace(
                    g,
                    assignment_epoch=g.group_epoch,
                    target_assignment=FrozenMap(
                        (mid, target.get(mid, frozenset())) for mid in g.members
                    ),
                )

            config = replace(base_config, rules=replace(rules, compute_target_assignment=install))
            subscribed = frozenset(f"p{int(str(p)[1:])}" for p in params["subscribed"])  # type: ignore[attr-defined]
            req = ConsumerGroupHeartbeatRequest(
                member_id=str(params["member"]),
                member_epoch=int(params["epoch"]),  # type: ignore[call-overload]
                rebalance_timeout_ms=config.rebalance_timeout_ms,
                subscribed_topic_names=subscribed,
                topic_partitions=frozenset(_tp(str(p)) for p in params["owned"]),  # type: ignore[attr-defined]
            )
            group, resp = co.handle_consumer_group_heartbeat(group, topics, req, config)
            server_error = server_error or resp.error_code is ErrorCode.UNKNOWN_SERVER_ERROR
        elif family == "DeliverMessage.leave":
            config = replace(base_config, rules=rules)
            req = ConsumerGroupHeartbeatRequest(member_id=str(params["member"]), member_epoch=-1)
            group, _ = co.handle_consumer_group_heartbeat(group, topics, req, config)
        else:
            config = replace(base_config, rules=rules)
            commit = OffsetCommitRequest(
                str(params["member"]),
                int(params["epoch"]),  # type: ignore[call-overload]
                frozenset(_tp(str(p)) for p in params["partitions"]),  # type: ignore[attr-defined]
            )
            group, _ = co.handle_offset_commit(group, commit, config)
        now = projection(group)
        if _comparable(now) != _comparable(_abstract(after)):
            raise ReplayDiverged(
                f"step {i + 1} ({family}): the Python coordinator reached "
                + "; ".join(render(now))
                + " where the path has "
                + "; ".join(render(_abstract(after)))
            )
        out.append(now)
    return out, server_error


def confirmed(path: Path, states: list[Concrete], server_error: bool) -> bool:
    """Whether the Python reading of the goal fails on the replayed states."""
    goal = path.goal
    state_goals = {c.name: c for c in STATE_TARGETS}
    if goal in state_goals:
        last = replace(states[-1], server_error=server_error)
        return not compile_expr(state_goals[goal].expr)(last.snapshot(), {})
    prop: Property = next(s for s in STEP_TARGETS if s.name == goal)
    a, b = states[-2], states[-1]
    ms = set(a.member_domain()) | set(b.member_domain())
    ps = set(a.partition_domain()) | set(b.partition_domain())
    return not prop.holds(StepSnapshot(a.snapshot(ms, ps), b.snapshot(ms, ps)))
