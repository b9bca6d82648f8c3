"""The relation against the Python model over a config's seeded walks (and, optionally,
the steps out of its first BFS states): every model step is checked with
:func:`invariants.z3.proof.agreement.check_step` and the results are gathered per action
family (``transition.family_of``).

A step agrees when its family allows it and, where the family is deterministic given the
step (``agreement.parameters``), the model's successor is the family's only one; an
``Unchanged`` step agrees when the projections before and after are equal (that is all the
family says). Besides the walks' own steps, the first enabled step of a family not checked
yet is checked once from the state it is enabled in (a side step: the walk does not follow
it), so that a family the walks pass by is not missed. A family the config can take that
neither reached is then sought: a breadth-first search of the model alone (no Z3, at most
``seek_states`` states) for a state in which it is enabled, whose step is checked like the
others (a seek step). Walks rarely reach a rebalance timeout, which needs a member gone
while it still revokes; the search finds the shortest such state.

:func:`possible_families` is what a config can take, read from its switches (an
over-approximation: a family it names may need a longer walk than the budget). The
verdict is ``ok`` only if every step checked agreed, no query was unknown and every
possible family was checked at least once.

The randomness (one ``random.Random(seed)`` for all walks, in walk order) lives here, not
in ``model/``; no I/O: progress goes to the caller's callback.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import Literal

from invariants.z3.proof.agreement import (
    DEFAULT_TIMEOUT_MS,
    StepCheck,
    check_step,
    refused_write,
)
from invariants.z3.proof.state import Concrete, project
from invariants.z3.proof.transition import FAMILY_NAMES, Options, family_of
from model import system
from model.actions import Action, DeliverMessage
from model.config import Config
from model.records import State

Verdict = Literal["ok", "violation", "inconclusive"]
Origin = Literal["walk", "side", "bfs", "seek"]

METADATA_PERTURBATIONS = (
    "AddPartitions",
    "RecreateTopic",
    "CreateTopic",
    "DeleteTopic",
    "ChangePartitionRacks",
)
"""The perturbations whose actions are ``MetadataChange`` steps (``METADATA_ACTIONS``)."""

LEAVE_PERTURBATIONS = ("Leave", "TemporaryLeave", "PollTimerExpires", "ChangeInstanceId")
"""The perturbations after which a client sends a leave heartbeat (``model.consumer.client.leave``,
``poll_timer_expires``, ``change_instance_id``)."""


def possible_families(config: Config) -> tuple[str, ...]:
    """The families ``config`` can take, read from its switches (``model.system.enabled``):
    an over-approximation, in ``FAMILY_NAMES`` order.

    * a heartbeat and ``Unchanged`` (a client's send) whenever a client is or may become
      subscribed;
    * ``ComputeTargetAssignment`` without ``compute_target_in_heartbeat``;
    * ``CompleteAssignorRun`` with KIP-1263 ``assignor_offload``;
    * ``AssignmentIntervalElapses`` with KIP-1263 assignment batching (a positive
      ``effective_assignment_interval_ms``);
    * a leave (-1) after ``Leave``, ``PollTimerExpires`` or ``ChangeInstanceId``; a static
      member's temporary leave (-2) after ``TemporaryLeave`` or ``PollTimerExpires`` in a
      config with instance ids;
    * a session timeout once a member's client process can be gone (``Crash``, a leave in
      flight, ``slow_clients``) or, with ``live_timers``, a heartbeat lost; a rebalance
      timeout the same way while the member revokes (two clients, a subscription or
      metadata change), or with ``live_timers`` a stalled revocation;
    * an offset commit with ``auto_commit``, on a leave (``release_assignment``) or, with
      ``commit_on_revoke``, on a revocation;
    * a metadata change after a topic perturbation or with a regular-expression
      subscription;
    * a failover and the load after it with ``CoordinatorFailover``;
    * an expiry of offsets with ``ExpireOffsets``, a DeleteGroups request with
      ``DeleteGroup``.
    """

    def perturb(name: str) -> bool:
        return config.max_perturbations > 0 and config.allows(name)

    joins = any(c.subscribed for c in config.clients) or perturb("Subscribe")
    if not joins:
        return ("Unchanged",) if config.clients else ()
    metadata = any(perturb(p) for p in METADATA_PERTURBATIONS) or any(
        c.regex is not None for c in config.clients
    )
    leaves = any(perturb(p) for p in LEAVE_PERTURBATIONS)
    static = any(c.instance_id is not None for c in config.clients)
    revokes = len(config.clients) >= 2 or metadata or perturb("ChangeSubscription")
    gone = (
        config.slow_clients
        or perturb("Crash")
        or leaves
        or (config.live_timers and perturb("LoseMessage"))
    )
    stalls = config.live_timers and perturb("StallRevocation")
    can = {
        "DeliverMessage.heartbeat": True,
        "ComputeTargetAssignment": not config.compute_target_in_heartbeat,
        "CompleteAssignorRun": config.assignor_offload,
        "AssignmentIntervalElapses": config.effective_assignment_interval_ms() > 0,
        "DeliverMessage.leave": any(
            perturb(p) for p in ("Leave", "PollTimerExpires", "ChangeInstanceId")
        ),
        "DeliverMessage.static_leave": static
        and (perturb("TemporaryLeave") or perturb("PollTimerExpires")),
        "DeliverMessage.offset_commit": config.auto_commit
        or leaves
        or (config.commit_on_revoke and revokes),
        "SessionTimeout": gone,
        "RebalanceTimeout": revokes and (gone or stalls),
        "MetadataChange": metadata,
        "CoordinatorFailover": perturb("CoordinatorFailover"),
        "CoordinatorLoaded": perturb("CoordinatorFailover"),
        "ExpireOffsets": perturb("ExpireOffsets"),
        "DeleteGroup": perturb("DeleteGroup"),
        "Unchanged": True,
    }
    return tuple(name for name in FAMILY_NAMES if can[name])


@dataclass(frozen=True)
class Disagreement:
    """A model step the relation does not reproduce: the family does not allow it
    (``allowed`` is "no"), or allows another successor where it is deterministic
    (``unique`` is "no"), or (``Unchanged``) the projection changed."""

    family: str
    pre: State
    action: Action
    post: State
    check: StepCheck | None
    origin: Origin
    walk: int | None
    index: int

    def what(self) -> str:
        """One line: how the relation disagrees."""
        if self.check is None:
            return "the projection changed on a step of the Unchanged family"
        if self.check.allowed == "no":
            return f"{self.family} does not allow the model's step"
        return f"{self.family} allows another successor than the model's"


@dataclass
class FamilyResult:
    """The steps of one family: how many were checked, allowed, the relation's only
    successor (``unique``: of those where the family is deterministic given the step,
    ``deterministic``), unknown (with Z3's reasons), and the first disagreement."""

    family: str
    steps: int = 0
    allowed: int = 0
    deterministic: int = 0
    unique: int = 0
    unknown: int = 0
    reasons: list[str] = field(default_factory=list)
    disagreement: Disagreement | None = None


@dataclass(frozen=True)
class Outcome:
    """The cross-check of one config: its verdict, the families it could take and did not
    reach, and a result per family (``FAMILY_NAMES`` order)."""

    verdict: Verdict
    possible: tuple[str, ...]
    missing: tuple[str, ...]
    families: tuple[FamilyResult, ...]
    steps: int
    side_steps: int
    bfs_steps: int
    seek_steps: int = 0
    unreachable: tuple[str, ...] = ()
    """Families the config's switches allow (``possible_families``) that no reachable state
    enables: the search for them expanded every reachable state. Not counted as missed."""
    repeated: int = 0
    """Steps not checked again: their coordinator side (the group, topics and request
    before, the group and topics after, whether the write was refused) is that of a step
    already checked, so ``check_step`` would answer the same (``coordinator_side``)."""
    bfs_exhausted: bool = False
    """The BFS phase expanded every reachable state within its ``bfs_states``: every step
    out of every reachable state was checked."""
    mutated: int | None = None
    """With a ``reference``: the steps checked whose successor the mutated rules decided
    (the reference rules give another)."""
    distinguished: int | None = None
    """With a ``reference``: of the ``mutated`` steps, those the reference relation refuses
    (or gives another successor), so that only the variant explains them."""

    def disagreements(self) -> list[Disagreement]:
        return [f.disagreement for f in self.families if f.disagreement is not None]


Step = tuple[State, Action, State]
Located = tuple[Step, Origin, int | None, int]


def _projected(state: State, offload: bool = False, batching: bool = False) -> Concrete:
    """The projection without its domain hints (the member ids of the clients); with
    ``offload``, the KIP-1263 assignor runs in flight too; with ``batching``, the KIP-1263
    assignment interval."""
    value = project(state, offload=offload, batching=batching)
    return dc_replace(value, extra_members=(), extra_partitions=())


def _state(value: object) -> State:
    if not isinstance(value, State):
        raise ValueError("the cross-check covers the KIP-848 consumer protocol's states")
    return value


def bfs_steps(
    config: Config, max_states: int, exhausted: list[bool] | None = None
) -> Iterator[Step]:
    """Every step out of the first ``max_states`` states in BFS order; ``exhausted`` (if
    given) gets ``True`` appended when the search ran out of states before the budget, so
    that every reachable state was expanded."""
    init = _state(system.initial(config))
    seen = {init}
    queue = deque([init])
    expanded = 0
    while queue and expanded < max_states:
        s = queue.popleft()
        expanded += 1
        for a in system.enabled(s, config):
            t = _state(system.step(s, a, config))
            yield s, a, t
            if t not in seen:
                seen.add(t)
                queue.append(t)
    if not queue and exhausted is not None:
        exhausted.append(True)


def coordinator_side(step: Step) -> tuple[object, ...]:
    """What ``agreement.check_step`` reads of a step: the group, topics and clients'
    regular-expression use before, the request (or timer, or other action), the group and
    topics after and whether the write was refused. Two steps with the same side get the
    same answer."""
    pre, action, post = step
    what: object = action
    if isinstance(action, DeliverMessage):
        what = (action.message.to_coordinator, action.message.body)
    return (
        pre.group,
        pre.topics,
        tuple(c.regex is not None for c in pre.clients),
        what,
        post.group,
        post.topics,
        refused_write(pre, post),
    )


def _walk_steps(
    config: Config, seed: int, walks: int, length: int, wanted: Callable[[str], bool]
) -> Iterator[Located]:
    """The steps of ``walks`` seeded walks of up to ``length`` steps, each preceded by the
    side steps of families ``wanted`` says are not checked yet."""
    rng = random.Random(seed)
    for w in range(walks):
        s = _state(system.initial(config))
        for i in range(length):
            actions = system.enabled(s, config)
            if not actions:
                break
            for a in actions:
                if wanted(family_of(a)):
                    yield (s, a, _state(system.step(s, a, config))), "side", w, i
            a = rng.choice(actions)
            t = _state(system.step(s, a, config))
            yield (s, a, t), "walk", w, i
            s = t


def _seek_steps(
    config: Config,
    max_states: int,
    wanted: Callable[[Step], bool],
    done: Callable[[], bool],
    exhausted: list[bool],
) -> Iterator[Located]:
    """The steps ``wanted`` names, in BFS order within ``max_states`` states (the search
    stops once ``done``; when it expanded every reachable state, ``exhausted`` gets
    ``True``)."""
    if max_states <= 0 or done():
        return
    for i, step in enumerate(bfs_steps(config, max_states, exhausted)):
        if wanted(step):
            yield step, "seek", None, i
            if done():
                return


def cross_check(
    config: Config,
    *,
    walks: int,
    length: int,
    seed: int,
    bfs_states: int = 0,
    seek_states: int = 0,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    options: Options | None = None,
    progress: Callable[[str], None] | None = None,
    checker: Callable[..., StepCheck] | None = None,
    reference: Config | None = None,
) -> Outcome:
    """Check the steps out of the first ``bfs_states`` BFS states of ``config``, of
    ``walks`` seeded walks of ``length`` steps, and a step of each family they missed found
    within ``seek_states`` states (module docstring), each step with ``checker`` (default
    ``check_step``). Stops at the first disagreement.

    ``reference`` is given when ``config`` runs a mutant's rules (and ``options`` names its
    variant): ``config`` with the reference rules. A step whose successor under them
    differs is one the mutated rule decided (``Outcome.mutated`` counts them); such a step
    the reference relation (``options`` without the variant, with ``reference``'s kernel)
    refuses, or to which it allows another successor, is one that tells the variant from
    the reference (``Outcome.distinguished``). If the walks check none, the search also
    seeks one, and the verdict is ``ok`` only if one was checked: otherwise the variant's
    own rule was never compared with the model's."""
    check_one = checker if checker is not None else check_step
    opts = options if options is not None else Options.of(config)
    results = {name: FamilyResult(name) for name in FAMILY_NAMES}
    possible = possible_families(config)
    counts = {"walk": 0, "side": 0, "bfs": 0, "seek": 0}
    exhausted: list[bool] = []

    mutated = distinguished = 0
    # The reference relation: no variant, and the reference rules' kernels (a variant of
    # the reconciliation is its mutant's kernel, transition.KERNEL_VARIANTS; one of the
    # offset-commit check too, COMMIT_KERNEL_VARIANTS).
    ref = Options.of(reference) if reference is not None else opts
    plain = dc_replace(opts, variant=None, kernel=ref.kernel, commit_kernel=ref.commit_kernel)

    def wanted(family: str) -> bool:
        return results[family].steps == 0

    def differs(step: Step) -> bool:
        pre, action, post = step
        return reference is not None and system.step(pre, action, reference) != post

    def wanted_step(step: Step) -> bool:
        return wanted(family_of(step[1])) or (distinguished == 0 and differs(step))

    def done() -> bool:
        return not any(wanted(f) for f in possible) and (reference is None or distinguished > 0)

    bfs_done: list[bool] = []
    checked: set[tuple[object, ...]] = set()
    repeated = 0

    def located() -> Iterator[Located]:
        steps = bfs_steps(config, bfs_states, bfs_done) if bfs_states else iter(())
        for i, step in enumerate(steps):
            yield step, "bfs", None, i
        yield from _walk_steps(config, seed, walks, length, wanted)
        yield from _seek_steps(config, seek_states, wanted_step, done, exhausted)

    for (pre, action, post), origin, walk, index in located():
        family = family_of(action)
        r = results[family]
        r.steps += 1
        counts[origin] += 1
        if differs((pre, action, post)):
            mutated += 1
            if family != "Unchanged":
                other = check_one(pre, action, post, config, options=plain, timeout_ms=timeout_ms)
                distinguished += "no" in (other.allowed, other.unique)
        if progress is not None:
            where = f"walk {walk + 1}/{walks}" if walk is not None else origin
            progress(f"{config.name}: {sum(counts.values())} steps checked ({where})")
        if family == "Unchanged":
            kept = (opts.assignor_offload, opts.batching)
            if _projected(pre, *kept) == _projected(post, *kept):
                r.allowed += 1
                continue
            r.disagreement = Disagreement(family, pre, action, post, None, origin, walk, index)
            break
        side = coordinator_side((pre, action, post))
        if side in checked:
            r.steps -= 1
            counts[origin] -= 1
            repeated += 1
            continue
        checked.add(side)
        check = check_one(pre, action, post, config, options=opts, timeout_ms=timeout_ms)
        r.allowed += check.allowed == "yes"
        r.deterministic += check.unique is not None
        r.unique += check.unique == "yes"
        if "unknown" in (check.allowed, check.unique):
            r.unknown += 1
            reason = check.reason or "unknown"
            if reason not in r.reasons:
                r.reasons.append(reason)
        if "no" in (check.allowed, check.unique):
            r.disagreement = Disagreement(family, pre, action, post, check, origin, walk, index)
            break
    families = tuple(results.values())
    never = tuple(name for name in possible if results[name].steps == 0)
    # The search expanded every reachable state without meeting these: none enables them.
    unreachable = never if exhausted else ()
    missing = () if exhausted else never
    verdict: Verdict = "ok"
    if any(r.disagreement is not None for r in families):
        verdict = "violation"
    elif (
        missing or any(r.unknown for r in families) or (reference is not None and not distinguished)
    ):
        verdict = "inconclusive"
    return Outcome(
        verdict=verdict,
        possible=possible,
        missing=missing,
        families=families,
        steps=sum(counts.values()),
        side_steps=counts["side"],
        bfs_steps=counts["bfs"],
        seek_steps=counts["seek"],
        unreachable=unreachable,
        repeated=repeated,
        bfs_exhausted=bool(bfs_done),
        mutated=mutated if reference is not None else None,
        distinguished=distinguished if reference is not None else None,
    )
