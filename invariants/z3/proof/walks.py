"""The walk loop of ``groupcheck prove --agreement`` for a relation other than the KIP-848
consumer protocol's (``invariants.z3.proof.crosscheck`` has that one): the classic
coordinator's (``classic_agreement.walk_check``) and a mixed group's
(``mixed_agreement.walk_check``) share it, and its result shape.

:func:`walk_loop` checks the steps out of a config's first BFS states, of seeded walks
with the side steps of families not checked yet, and a step of each family they missed
found by a model-only search, against a :class:`Relation` (how a step is named and
checked); with a mutant's rules and a ``reference`` config, it also counts the steps the
mutated rule decided and those the reference relation refuses. The verdict rules are
``crosscheck.cross_check``'s. The randomness (one ``random.Random(seed)``) lives here,
not in ``model/``.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from invariants.z3.proof.agreement import StepCheck
from model import system
from model.actions import Action
from model.config import Config

Verdict = Literal["ok", "violation", "inconclusive"]
Origin = Literal["walk", "side", "bfs", "seek"]

Step = tuple[Any, Action, Any]
Located = tuple[Step, Origin, "int | None", int]


@dataclass(frozen=True)
class Disagreement:
    """A model step the relation does not reproduce (``crosscheck.Disagreement``'s
    counterpart): its family does not allow it, allows another successor, or
    (``Unchanged``) the projection changed."""

    family: str
    pre: Any
    action: Action
    post: Any
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
class WalkFamily:
    """The steps of one family (``crosscheck.FamilyResult``'s fields): checked, allowed,
    deterministic given the step (asked whether the model's successor is the only one),
    the only successor, unknown with Z3's reasons, and the first disagreement."""

    family: str
    steps: int = 0
    allowed: int = 0
    deterministic: int = 0
    unique: int = 0
    unknown: int = 0
    reasons: list[str] = field(default_factory=list)
    disagreement: Disagreement | None = None


@dataclass(frozen=True)
class WalkOutcome:
    """The cross-check of one config over walks (``crosscheck.Outcome``'s fields)."""

    verdict: Verdict
    possible: tuple[str, ...]
    missing: tuple[str, ...]
    families: tuple[WalkFamily, ...]
    steps: int
    side_steps: int
    bfs_steps: int
    seek_steps: int = 0
    unreachable: tuple[str, ...] = ()
    mutated: int | None = None
    distinguished: int | None = None

    def disagreements(self) -> list[Disagreement]:
        return [f.disagreement for f in self.families if f.disagreement is not None]


@dataclass(frozen=True)
class Relation:
    """How :func:`walk_loop` names and checks a step of one relation.

    ``names``: the relation's families (``Unchanged`` among them); ``possible``: those the
    config can take; ``family(pre, action, post)``: a step's family; ``nominal(pre,
    action)``: the family a step is expected to take before it is taken (which side steps
    to take); ``same(pre, post)``: the projections are equal (all ``Unchanged`` says);
    ``check(pre, action, post, reference)``: the step against the relation (its variant;
    with ``reference`` true, against the reference relation)."""

    names: tuple[str, ...]
    possible: tuple[str, ...]
    family: Callable[[Any, Action, Any], str]
    nominal: Callable[[Any, Action], str]
    same: Callable[[Any, Any], bool]
    check: Callable[[Any, Action, Any, bool], StepCheck]


def model_bfs(
    config: Config, max_states: int, exhausted: list[bool] | None = None
) -> Iterator[Step]:
    """Every step out of the first ``max_states`` states of ``config`` in BFS order;
    ``exhausted`` (if given) gets ``True`` appended when the search ran out of states
    before the budget (every reachable state was expanded)."""
    init = system.initial(config)
    seen = {init}
    queue = deque([init])
    expanded = 0
    while queue and expanded < max_states:
        s = queue.popleft()
        expanded += 1
        for a in system.enabled(s, config):
            t = system.step(s, a, config)
            yield s, a, t
            if t not in seen:
                seen.add(t)
                queue.append(t)
    if not queue and exhausted is not None:
        exhausted.append(True)


def _walk_steps(
    config: Config,
    seed: int,
    walks: int,
    length: int,
    wanted: Callable[[str], bool],
    nominal: Callable[[Any, Action], str],
) -> Iterator[Located]:
    """The steps of ``walks`` seeded walks of up to ``length`` steps, each preceded by the
    side steps of families ``wanted`` says are not checked yet."""
    rng = random.Random(seed)
    for w in range(walks):
        s = system.initial(config)
        for i in range(length):
            actions = system.enabled(s, config)
            if not actions:
                break
            for a in actions:
                if wanted(nominal(s, a)):
                    yield (s, a, system.step(s, a, config)), "side", w, i
            a = rng.choice(actions)
            t = system.step(s, a, config)
            yield (s, a, t), "walk", w, i
            s = t


def walk_loop(
    config: Config,
    relation: Relation,
    *,
    walks: int,
    length: int,
    seed: int,
    bfs_states: int = 0,
    seek_states: int = 0,
    progress: Callable[[str], None] | None = None,
    reference: Config | None = None,
) -> WalkOutcome:
    """The steps out of ``config``'s first ``bfs_states`` BFS states, of ``walks`` seeded
    walks of ``length`` steps with the side steps of families not checked yet, and a step
    of each family they missed found within ``seek_states`` states of the model alone,
    each checked with ``relation.check``. Stops at the first disagreement.

    With ``reference`` (``config`` runs a mutant's rules, ``relation.check`` its variant):
    a step whose successor under the reference rules differs was decided by the mutated
    rule (``mutated``); one of them the reference relation refuses, or to which it allows
    another successor, tells the variant apart (``distinguished``), and so does a step the
    mutated rule refused (its successor leaves the projection as it is) whose reference
    successor the variant refuses and the reference relation allows. The search seeks one
    if the walks check none, and the verdict is ``ok`` only if one was checked."""
    results = {name: WalkFamily(name) for name in relation.names}
    possible = relation.possible
    counts = {"walk": 0, "side": 0, "bfs": 0, "seek": 0}
    exhausted: list[bool] = []
    mutated = distinguished = 0

    def wanted(family: str) -> bool:
        return results[family].steps == 0

    def differs(step: Step) -> bool:
        pre, action, post = step
        return reference is not None and system.step(pre, action, reference) != post

    def done() -> bool:
        return not any(wanted(f) for f in possible) and (reference is None or distinguished > 0)

    def sought() -> Iterator[Located]:
        if seek_states <= 0 or done():
            return
        for i, step in enumerate(model_bfs(config, seek_states, exhausted)):
            if wanted(relation.family(*step)) or (distinguished == 0 and differs(step)):
                yield step, "seek", None, i
                if done():
                    return

    def located() -> Iterator[Located]:
        for i, step in enumerate(model_bfs(config, bfs_states) if bfs_states else ()):
            yield step, "bfs", None, i
        yield from _walk_steps(config, seed, walks, length, wanted, relation.nominal)
        yield from sought()

    for (pre, action, post), origin, walk, index in located():
        family = relation.family(pre, action, post)
        r = results[family]
        r.steps += 1
        counts[origin] += 1
        if differs((pre, action, post)):
            mutated += 1
            if family != "Unchanged":
                other = relation.check(pre, action, post, True)
                distinguished += "no" in (other.allowed, other.unique)
            else:
                # A refusal by the mutated rule: the variant must refuse the step the
                # reference rules take, which the reference relation allows.
                taken = system.step(pre, action, reference)  # type: ignore[arg-type]
                if not relation.same(pre, taken):
                    mine = relation.check(pre, action, taken, False)
                    theirs = relation.check(pre, action, taken, True)
                    distinguished += mine.allowed == "no" and theirs.allowed == "yes"
        if progress is not None:
            where = f"walk {walk + 1}/{walks}" if walk is not None else origin
            progress(f"{config.name}: {sum(counts.values())} steps checked ({where})")
        if family == "Unchanged":
            if relation.same(pre, post):
                r.allowed += 1
                continue
            r.disagreement = Disagreement(family, pre, action, post, None, origin, walk, index)
            break
        check = relation.check(pre, action, post, False)
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
    fams = tuple(results.values())
    never = tuple(name for name in possible if results[name].steps == 0)
    # The search expanded every reachable state without meeting these: none enables them.
    unreachable = never if exhausted else ()
    missing = () if exhausted else never
    verdict: Verdict = "ok"
    if any(r.disagreement is not None for r in fams):
        verdict = "violation"
    elif missing or any(r.unknown for r in fams) or (reference is not None and not distinguished):
        verdict = "inconclusive"
    return WalkOutcome(
        verdict=verdict,
        possible=possible,
        missing=missing,
        families=fams,
        steps=sum(counts.values()),
        side_steps=counts["side"],
        bfs_steps=counts["bfs"],
        seek_steps=counts["seek"],
        unreachable=unreachable,
        mutated=mutated if reference is not None else None,
        distinguished=distinguished if reference is not None else None,
    )
