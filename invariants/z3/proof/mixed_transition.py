"""The symbolic transition relation of a mixed group's coordinator (``model.migration``).

``relation(pre, post, domains, options)`` over two ``mixed_state.MixedSym`` is a
disjunction with one disjunct per *action family*, named after the model's actions:

* ``DeliverMessage.consumer_join``: a ConsumerGroupHeartbeat at member epoch ≥ 0 — to a
  consumer group (``coordinator.handle_consumer_group_heartbeat``), or to a classic group,
  which it turns into a consumer group first (an empty one: ``maybeDeleteEmptyClassicGroup``
  and a new group; a non-empty one: ``GroupMetadataManager.convertToConsumerGroup`` after
  ``validateOnlineUpgrade``, ``ConsumerGroup.fromClassicGroup``);
* ``DeliverMessage.consumer_leave`` (epoch -1) and ``DeliverMessage.static_leave`` (-2);
* ``DeliverMessage.classic_join``: a classic JoinGroup to a non-empty consumer group
  (``GroupMetadataManager.classicGroupJoinToConsumerGroup``);
* ``DeliverMessage.classic_leave`` (``classicGroupLeaveToConsumerGroup``),
  ``SessionTimeout`` and ``RebalanceTimeout`` of a consumer group's member: the member is
  fenced (``consumerGroupFenceMember``);
* ``ClassicGroup``: every step of a classic group (its own requests and timers), and a
  classic JoinGroup that replaces an empty consumer group by a classic one
  (``classicGroupJoinToClassicGroup``): the classic group's rules are not followed here
  (``classic_transition`` has them) — its members and their instance ids change freely,
  member ids once handed out stay handed out;
* ``Unchanged``: every other step (client steps, responses, a refused request, a
  classic SyncGroup, Heartbeat or OffsetCommit to a consumer group).

After a fencing or a classic JoinGroup, a consumer group left with classic members only
is converted to a classic group when the policy allows a downgrade
(``validateOnlineDowngradeWithFencedMembers``, ``convertToClassicGroup``); after every
step the ghost ``breached`` records a consumer group against the migration policy
(``system.policy_breached``).

The holder of an instance id is the member the static-member index maps it to; a join
writes the index as ``coordinator.update_static_members`` does (the variant
``stale-static-mapping`` keeps the entry of an instance id the member held before,
KAFKA-20747), a fencing drops the member's entry, a static replacement maps the holder's
instance id to the joining member.

The group-epoch bump follows ``coordinator.should_bump_group_epoch``: a changed
subscription (a free parameter ``subscription_changed``, forced for a new member, whose
subscription is never empty in the model) or a change of the member's server assignor that
changes the group's preferred one (``ModernGroup.computePreferredServerAssignor``:
:func:`preferred`). A bumped group epoch ahead of the assignment epoch computes a new
target at once by the preferred assignor (``updateTargetAssignment``; the relation is
built for configurations without assignor offload or batching).

Free parameters (Z3 constants named ``<family>.<name>@<tag>``): the request's member
(``member``, an index into the universe's member ids), instance number (``instance``),
server assignor (``assignor``, 0 for none), whether it is the first join at epoch 0
(``join``), the member's subscription after the request (``topics.<topic>``) and
``subscription_changed`` (tied to it), the target a join that computes one leaves
(``target.<member>.<partition>``, :func:`compute_target`); for a classic JoinGroup
whether its member id is empty
(``unknown``), the id handed out (``new_id``) and whether it shares a protocol with the
group (``supported``); the classic generation a conversion starts from (``generation``);
whether a request refused after the group was replaced leaves the new group (``refused``).
A request refused outright is ``Unchanged``.

``MixedOptions.variant`` names a catalogue mutant encoded as a variant of the rule it
breaks (``VARIANTS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.z3.proof.mixed_state import (
    INDEX,
    MASKED,
    NESTED,
    SCALAR,
    UNARY,
    MixedDomains,
    MixedSym,
    MixedTerm,
)
from invariants.z3.proof.transition import Family
from model.actions import Action, DeliverMessage, RebalanceTimeout, SessionTimeout
from model.classic.messages import JoinGroupRequest, LeaveGroupRequest
from model.classic.records import ClassicGroup
from model.config import Config
from model.migration.records import MixedState
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
)

BoolRef = Any
ExprRef = Any

VARIANTS = {
    "mixed-admits-when-disabled": "a classic JoinGroup to a consumer group is admitted under "
    "the migration policy 'disabled' (KAFKA-20640)",
    "no-downgrade-on-replacement": "the last consumer-protocol member replaced by a classic "
    "static member leaves a consumer group of classic members only: no downgrade (KAFKA-17317)",
    "no-bump-on-assignor-change": "only a change of subscribed topic names bumps the group "
    "epoch; a change of the preferred server assignor does not (KAFKA-20434)",
    "downgrade-keeps-old-assignment": "a downgrade by static replacement keeps the classic "
    "group STABLE with the replaced member's assignment, whatever the joining member "
    "subscribes to (KAFKA-19546)",
    "stale-static-mapping": "a member renamed to another instance id keeps its old instance "
    "id's entry in the static-member index (KAFKA-20747)",
    "classic-holder-unreleased": "a consumer-protocol static join replaces the holder of its "
    "instance id only once the holder left with -2, a classic holder too (KAFKA-17228)",
}
"""The mixed-group catalogue mutants (``groupcheck.mutants``) this encoding has a variant of."""

FAMILY_NAMES = (
    "DeliverMessage.consumer_join",
    "DeliverMessage.consumer_leave",
    "DeliverMessage.static_leave",
    "DeliverMessage.classic_join",
    "DeliverMessage.classic_leave",
    "SessionTimeout",
    "RebalanceTimeout",
    "ClassicGroup",
    "Unchanged",
)

B, N = z3.BoolSort(), z3.IntSort()


@dataclass(frozen=True)
class MixedOptions:
    """The ``Config`` switches the migration rules read, and a variant."""

    policy: str = "bidirectional"
    """``Config.migration_policy`` (``ConsumerGroupMigrationPolicy``)."""
    new_group_epoch: int = 0
    """The epochs of a new consumer group (``coordinator.new_group``)."""
    realign_empty_group: bool = False
    """``Config.realign_empty_group`` (KAFKA-20442)."""
    max_group_size: int = 2**31 - 1
    classic_replaces_live_holder: bool = False
    """``Config.classic_replaces_live_holder``: a classic static join replaces a
    consumer-protocol holder that has not left with -2 (Kafka's rule)."""
    replacement_bumps_group_epoch: bool = True
    """``Config.replacement_bumps_group_epoch``: the join that converts a classic group
    and replaces a holder of its instance bumps the group epoch (False: Kafka's rule)."""
    variant: str | None = None

    def __post_init__(self) -> None:
        if self.variant is not None and self.variant not in VARIANTS:
            raise ValueError(
                f"no mixed symbolic variant of {self.variant!r}; known: {', '.join(VARIANTS)}"
            )

    @property
    def upgrade(self) -> bool:
        """``ConsumerGroupMigrationPolicy.isUpgradeEnabled``."""
        return self.policy in ("upgrade", "bidirectional")

    @property
    def downgrade(self) -> bool:
        """``ConsumerGroupMigrationPolicy.isDowngradeEnabled``."""
        return self.policy in ("downgrade", "bidirectional")

    @staticmethod
    def of(config: Config, variant: str | None = None) -> MixedOptions:
        return MixedOptions(
            policy=config.migration_policy,
            new_group_epoch=1 if config.epoch_layout == "kafka-4.3" else 0,
            realign_empty_group=config.realign_empty_group,
            max_group_size=config.max_group_size,
            classic_replaces_live_holder=config.classic_replaces_live_holder,
            replacement_bumps_group_epoch=config.replacement_bumps_group_epoch,
            variant=variant,
        )


def unsupported(config: Config) -> str | None:
    """Why the relation does not cover ``config`` (None: it does)."""
    if config.protocol != "mixed":
        return f"the mixed relation covers mixed configs; this config is {config.protocol}"
    if config.assignor_offload or config.effective_assignment_interval_ms() > 0:
        return "the mixed relation has no KIP-1263 assignor offload or batching"
    if not config.compute_target_in_heartbeat:
        return "the mixed relation computes a target in the heartbeat"
    if any(c.regex is not None for c in config.clients):
        return "the mixed relation has no regular-expression subscriptions"
    perturbations = {
        "Subscribe",
        "TemporaryLeave",
        "Leave",
        "Crash",
        "Restart",
        "LoseMessage",
        "ChangeInstanceId",
    }
    if config.max_perturbations > 0 and not config.perturbations <= perturbations:
        extra = sorted(config.perturbations - perturbations)
        return f"the mixed relation has no {', '.join(extra)}"
    return None


# --------------------------------------------------------------------------- terms


def _ite(c: BoolRef, a: MixedTerm, b: MixedTerm) -> MixedTerm:
    """``a`` where ``c`` holds, else ``b``, field by field."""
    fields: dict[str, Any] = {k: z3.If(c, getattr(a, k), getattr(b, k)) for k in SCALAR}
    for k in UNARY:
        fa, fb = getattr(a, k), getattr(b, k)
        fields[k] = {m: z3.If(c, fa[m], fb[m]) for m in fa}
    for k in NESTED:
        fa, fb = getattr(a, k), getattr(b, k)
        fields[k] = {m: {x: z3.If(c, fa[m][x], fb[m][x]) for x in fa[m]} for m in fa}
    fields[INDEX] = {i: z3.If(c, v, b.index[i]) for i, v in a.index.items()}
    return MixedTerm(**fields)


def view(s: MixedTerm) -> MixedTerm:
    """The group a symbolic state holds (as a plain term)."""
    return MixedTerm(**{k: getattr(s, k) for k in (*SCALAR, *UNARY, *NESTED, INDEX)})


def _row(
    f: Mapping[str, Mapping[str, BoolRef]], x: ExprRef, ids: Mapping[str, int]
) -> dict[str, BoolRef]:
    """The row of ``f`` (``topic`` or ``target``) of the member whose index is ``x``."""
    keys = list(next(iter(f.values()), {}))
    return {k: at({m: f[m][k] for m in f}, x, ids) for k in keys}


def _set_row(
    f: Mapping[str, Mapping[str, BoolRef]],
    x: ExprRef,
    ids: Mapping[str, int],
    row: Mapping[str, BoolRef],
) -> dict[str, dict[str, BoolRef]]:
    """``f`` with the row of the member whose index is ``x`` set to ``row``."""
    return {m: {k: z3.If(x == ids[m], row[k], v) for k, v in f[m].items()} for m in f}


def _same_row(a: Mapping[str, BoolRef], b: Mapping[str, BoolRef]) -> BoolRef:
    return z3.And(*[a[k] == b[k] for k in a])


def indexed(g: MixedTerm, inst: ExprRef) -> ExprRef:
    """``Group.static_member_id``: the index entry of instance ``inst`` (1 + a member's
    position; 0: none, or ``inst`` is 0)."""
    out: ExprRef = z3.IntVal(0)
    for i, v in g.index.items():
        out = z3.If(inst == i, v, out)
    return out


def _set_index(g: MixedTerm, inst: ExprRef, v: ExprRef) -> dict[int, ExprRef]:
    """The index with the entry of ``inst`` set to ``v`` (nothing for ``inst`` 0)."""
    return {i: z3.If(inst == i, v, old) for i, old in g.index.items()}


def index_of_members(g: MixedTerm, ids: Mapping[str, int]) -> dict[int, ExprRef]:
    """``records.static_member_index``: the index the members' instance ids say, in
    member-id order (the last member id of an instance wins)."""
    out: dict[int, ExprRef] = {}
    for i in g.index:
        v: ExprRef = z3.IntVal(0)
        for m in sorted(g.is_member):
            v = z3.If(z3.And(g.is_member[m], g.instance[m] == i), ids[m] + 1, v)
        out[i] = v
    return out


def _set(
    f: Mapping[str, ExprRef], x: ExprRef, ids: Mapping[str, int], v: ExprRef
) -> dict[str, ExprRef]:
    """``f`` with the member whose index is ``x`` set to ``v``."""
    return {m: z3.If(x == ids[m], v, f[m]) for m in f}


def at(f: Mapping[str, ExprRef], x: ExprRef, ids: Mapping[str, int]) -> ExprRef:
    """``f`` of the member whose index is ``x`` (the last id's value out of range)."""
    names = list(f)
    out = f[names[-1]]
    for m in reversed(names[:-1]):
        out = z3.If(x == ids[m], f[m], out)
    return out


def count(g: MixedTerm, pred: Callable[[str], BoolRef]) -> ExprRef:
    return z3.Sum(*[z3.If(z3.And(g.is_member[m], pred(m)), 1, 0) for m in g.is_member])


def _asks(g: MixedTerm, code: int) -> Callable[[str], BoolRef]:
    return lambda m: g.assignor[m] == code


def preferred(g: MixedTerm, d: MixedDomains, default: ExprRef) -> ExprRef:
    """``target.preferred_server_assignor``: the assignor most members ask for, the smaller
    (name, hence number) on a tie; ``default`` when none asks for one."""
    codes = sorted(d.assignors.values())
    counts = {c: count(g, _asks(g, c)) for c in codes}
    out = default
    for c in reversed(codes):
        best = z3.And(
            counts[c] > 0,
            *[counts[c] > counts[o] for o in codes if o < c],
            *[counts[c] >= counts[o] for o in codes if o > c],
        )
        out = z3.If(best, z3.IntVal(c), out)
    return out


def any_member(g: MixedTerm) -> BoolRef:
    return z3.Or(*g.is_member.values())


def policy_breached(g: MixedTerm, o: MixedOptions) -> BoolRef:
    """``system.policy_breached``: a classic member under ``disabled``; only classic
    members under a policy that allows a downgrade."""
    some_classic = z3.Or(*[z3.And(g.is_member[m], g.classic[m]) for m in g.is_member])
    if o.policy == "disabled":
        return some_classic
    if o.downgrade:
        all_classic = z3.And(*[z3.Implies(g.is_member[m], g.classic[m]) for m in g.is_member])
        return z3.And(any_member(g), all_classic)
    return z3.BoolVal(False)


def _masked(g: MixedTerm) -> MixedTerm:
    """``g`` with every field of a non-member 0 (false)."""
    fields: dict[str, Any] = {}
    for k in MASKED:
        zero = z3.BoolVal(False) if k in ("classic", "left") else z3.IntVal(0)
        fields[k] = {m: z3.If(g.is_member[m], v, zero) for m, v in getattr(g, k).items()}
    for k in NESTED:
        fields[k] = {
            m: {x: z3.And(g.is_member[m], v) for x, v in row.items()}
            for m, row in getattr(g, k).items()
        }
    return replace(g, **fields)


def _as_classic(g: MixedTerm, stable: BoolRef) -> MixedTerm:
    """The classic group of ``g``'s members (as the abstraction keeps it): each member's
    subscription its own, its assignment its target (``ClassicGroup.fromConsumerGroup``);
    STABLE if ``stable``, else a rebalance was prepared."""
    false, zero = z3.BoolVal(False), z3.IntVal(0)
    return replace(
        g,
        consumer=false,
        group_epoch=zero,
        assignment_epoch=zero,
        target_assignor=zero,
        breached=false,
        stable=stable,
        index=dict.fromkeys(g.index, zero),
        classic=dict(g.is_member),
        assignor=dict.fromkeys(g.is_member, zero),
        left=dict.fromkeys(g.is_member, false),
    )


def downgrade(before: MixedTerm, after: MixedTerm, o: MixedOptions) -> MixedTerm:
    """``system._downgrade``: a step that removed a member and left a non-empty consumer
    group of classic members only converts it to a classic group of those members, if the
    policy allows a downgrade (``validateOnlineDowngradeWithFencedMembers``,
    ``convertToClassicGroup``). After a fencing the classic group's assignments are the
    targets the step left and a rebalance is prepared (``mco.from_consumer_group``, not
    STABLE). After a static replacement (a member gone whose instance id a member of the
    step's group holds: ``mco.replacement``) the classic group is the group before the
    step with the joining member in place of the one it replaces — its subscription, the
    replaced member's target (``mco.from_consumer_group_replaced``) — and stays STABLE
    unless the joining member subscribes to other topics than the replaced one
    (KAFKA-19546) or the target was behind the group epoch (KAFKA-20273)
    (``mco.downgrade_rebalances``). The variant ``no-downgrade-on-replacement`` converts
    only after a fencing (KAFKA-17317); ``downgrade-keeps-old-assignment`` keeps a
    replacement's classic group STABLE whatever the joining member subscribes to."""
    if not o.downgrade:
        return after
    members = list(after.is_member)
    removed = z3.Or(*[z3.And(before.is_member[m], z3.Not(after.is_member[m])) for m in members])
    only_classic = z3.And(
        any_member(after),
        *[z3.Implies(after.is_member[m], after.classic[m]) for m in members],
    )
    go = z3.And(before.consumer, after.consumer, removed, only_classic)
    # replaces[k][m]: after's index maps the instance id of before's member m, gone, to
    # after's member k.
    replaces = {
        k: {
            m: z3.And(
                before.is_member[m],
                z3.Not(after.is_member[m]),
                before.instance[m] != 0,
                after.is_member[k],
                indexed(after, before.instance[m]) == i + 1,
            )
            for m in members
        }
        for i, k in enumerate(members)
    }
    replaced = z3.Or(*[v for row in replaces.values() for v in row.values()])
    if o.variant == "no-downgrade-on-replacement":
        go = z3.And(go, z3.Not(replaced))
    fenced = _as_classic(after, z3.BoolVal(False))
    # The replacement's classic group: before's targets, the joining member taking the
    # replaced member's.
    target: dict[str, dict[str, BoolRef]] = {}
    changed: list[BoolRef] = []
    for k in members:
        row = dict(before.target[k])
        for m in members:
            row = {x: z3.If(replaces[k][m], before.target[m][x], v) for x, v in row.items()}
            changed.append(
                z3.And(replaces[k][m], z3.Not(_same_row(after.topic[k], before.topic[m])))
            )
        target[k] = {x: z3.And(after.is_member[k], v) for x, v in row.items()}
    rebalances = z3.Or(*changed, before.group_epoch > before.assignment_epoch)
    if o.variant == "downgrade-keeps-old-assignment":
        rebalances = z3.BoolVal(False)
    swapped = _as_classic(replace(after, target=target), z3.Not(rebalances))
    return _ite(go, _ite(replaced, swapped, fenced), after)


def ghost(t: MixedTerm, o: MixedOptions) -> MixedTerm:
    """``system.step``'s mark of a consumer group against the policy."""
    return replace(t, breached=z3.And(t.consumer, z3.Or(t.breached, policy_breached(t, o))))


def compute_target(
    g: MixedTerm, d: MixedDomains, target: Mapping[str, Mapping[str, BoolRef]]
) -> tuple[MixedTerm, BoolRef]:
    """``update_target_assignment`` → ``compute_target_assignment`` when the group epoch is
    ahead of the assignment epoch: the target at the group epoch by the preferred
    assignor. The assignment is not computed here: it is ``target`` (a parameter), of
    which the second value asks, when computed, what every assignor of the model does
    (``model.assignors``): each partition of a topic some member subscribes to goes to
    exactly one member subscribed to it, no other partition to anyone."""
    ahead = g.group_epoch > g.assignment_epoch
    fits = z3.And(
        *[
            z3.Implies(target[m][x], z3.And(g.is_member[m], g.topic[m][t]))
            for m in g.is_member
            for x, t in d.partitions.items()
        ]
    )
    # Each partition of a topic some member subscribes to goes to exactly one member.
    for x, t in d.partitions.items():
        wanted = z3.Or(*[z3.And(g.is_member[m], g.topic[m][t]) for m in g.is_member])
        given = z3.Sum(*[z3.If(target[m][x], 1, 0) for m in g.is_member])
        fits = z3.And(fits, given == z3.If(wanted, 1, 0))
    new = {
        m: {x: z3.If(ahead, v, g.target[m][x]) for x, v in row.items()} for m, row in target.items()
    }
    return replace(
        g,
        assignment_epoch=z3.If(ahead, g.group_epoch, g.assignment_epoch),
        target_assignor=z3.If(
            ahead, preferred(g, d, z3.IntVal(d.default_assignor)), g.target_assignor
        ),
        target=new,
    ), z3.Implies(ahead, fits)


def remove(g: MixedTerm, x: ExprRef, ids: Mapping[str, int], o: MixedOptions) -> MixedTerm:
    """``coordinator.remove_member`` (``consumerGroupFenceMember``): the member is gone, the
    index entry of its instance id with it (``removeStaticMember``), the group epoch
    bumped (an emptied group realigned under ``realign_empty_group``)."""
    false = z3.BoolVal(False)
    gone = replace(
        g,
        is_member=_set(g.is_member, x, ids, false),
        group_epoch=g.group_epoch + 1,
        index=_set_index(g, at(g.instance, x, ids), z3.IntVal(0)),
    )
    if o.realign_empty_group:
        gone = replace(
            gone,
            assignment_epoch=z3.If(any_member(gone), g.assignment_epoch, gone.group_epoch),
        )
    return _masked(gone)


def _holder(g: MixedTerm, inst: ExprRef, ids: Mapping[str, int]) -> dict[str, BoolRef]:
    """Which member holds instance ``inst`` (``ConsumerGroup.staticMemberId``: the member
    the static-member index maps it to)."""
    entry = indexed(g, inst)
    return {m: z3.And(g.is_member[m], inst != 0, entry == ids[m] + 1) for m in g.is_member}


def _copy(g: MixedTerm, holds: Mapping[str, BoolRef], k: str) -> ExprRef:
    """Field ``k`` of the member ``holds`` picks."""
    return _pick(getattr(g, k), holds)


def _pick(f: Mapping[str, ExprRef], holds: Mapping[str, BoolRef]) -> ExprRef:
    """The value in ``f`` of the member ``holds`` picks."""
    names = list(f)
    out = f[names[-1]]
    for m in reversed(names[:-1]):
        out = z3.If(holds[m], f[m], out)
    return out


def replace_static(
    g: MixedTerm, holds: Mapping[str, BoolRef], x: ExprRef, ids: Mapping[str, int]
) -> MixedTerm:
    """``coordinator.replace_static_member``: the holder's copy under the joining member id
    (its protocol, instance id, assignor, subscription and target; epoch 0, so not left);
    the holder is gone, its target entry with it; the holder's instance id maps to the
    joining member id."""
    fields: dict[str, Any] = {}
    for k in ("classic", "instance", "assignor"):
        v = _copy(g, holds, k)
        fields[k] = {m: z3.If(x == ids[m], v, getattr(g, k)[m]) for m in g.is_member}
    for k in NESTED:
        f = getattr(g, k)
        keys = list(next(iter(f.values()), {}))
        row = {key: _pick({m: f[m][key] for m in f}, holds) for key in keys}
        fields[k] = _set_row(f, x, ids, row)
    fields["left"] = _set(g.left, x, ids, z3.BoolVal(False))
    fields[INDEX] = _set_index(g, _copy(g, holds, "instance"), x + 1)
    fields["is_member"] = {
        m: z3.If(x == ids[m], z3.BoolVal(True), z3.And(g.is_member[m], z3.Not(holds[m])))
        for m in g.is_member
    }
    return _masked(replace(g, **fields))


def update_member(
    g: MixedTerm,
    stored: BoolRef,
    x: ExprRef,
    ids: Mapping[str, int],
    d: MixedDomains,
    o: MixedOptions,
    *,
    classic: BoolRef,
    instance: ExprRef,
    assignor: ExprRef,
    subscription_changed: BoolRef,
    topics: Mapping[str, BoolRef],
    target: Mapping[str, Mapping[str, BoolRef]],
) -> tuple[MixedTerm, BoolRef, BoolRef]:
    """Steps 1–3 of a join: the member ``x`` updated (``stored``: it was in ``g``) with the
    request's instance id and assignor when it sends one and its subscription ``topics``
    (the request's, or the member's own when it sends none), the group epoch bumped as
    ``coordinator.should_bump_group_epoch`` says, the target computed when the group epoch
    is ahead (:func:`compute_target`, ``target``). The second value ties
    ``subscription_changed`` to ``topics``, the third is :func:`compute_target`'s question
    (asked only where the target stays: not of a step that downgrades the group, whose
    classic group takes the targets of the group before the step)."""
    old_topics = {t: z3.And(stored, v) for t, v in _row(g.topic, x, ids).items()}
    changed = z3.Not(_same_row(topics, old_topics))
    old_assignor = z3.If(stored, at(g.assignor, x, ids), 0)
    old_instance = z3.If(stored, at(g.instance, x, ids), 0)
    new_assignor = z3.If(assignor != 0, assignor, old_assignor)
    new_instance = z3.If(instance != 0, instance, old_instance)
    # ``coordinator.update_static_members``: the entry of an instance id the member held
    # before is released if it names the member (not under ``stale-static-mapping``,
    # KAFKA-20747); the new instance id maps to it.
    index = dict(g.index)
    if o.variant != "stale-static-mapping":
        release = z3.And(
            old_instance != 0, old_instance != new_instance, indexed(g, old_instance) == x + 1
        )
        index = {i: z3.If(z3.And(release, old_instance == i), 0, v) for i, v in index.items()}
    index = {i: z3.If(new_instance == i, x + 1, v) for i, v in index.items()}
    after = replace(
        g,
        is_member=_set(g.is_member, x, ids, z3.BoolVal(True)),
        classic=_set(g.classic, x, ids, classic),
        instance=_set(g.instance, x, ids, new_instance),
        index=index,
        assignor=_set(g.assignor, x, ids, new_assignor),
        left=_set(g.left, x, ids, z3.BoolVal(False)),
        topic=_set_row(g.topic, x, ids, topics),
    )
    bump = subscription_changed
    if o.variant != "no-bump-on-assignor-change":
        default = z3.IntVal(d.default_assignor)
        switched = z3.And(
            new_assignor != old_assignor, preferred(after, d, default) != preferred(g, d, default)
        )
        bump = z3.Or(bump, switched)
    bumped = replace(after, group_epoch=g.group_epoch + z3.If(bump, 1, 0))
    done, fits = compute_target(bumped, d, target)
    return done, subscription_changed == changed, fits


# --------------------------------------------------------------------------- families


def _params(name: str, tag: str, **sorts: Any) -> dict[str, Any]:
    return {k: z3.Const(f"{name}.{k}@{tag}", s) for k, s in sorts.items()}


def _row_params(
    name: str, tag: str, d: MixedDomains, p: dict[str, Any]
) -> tuple[dict[str, BoolRef], dict[str, dict[str, BoolRef]]]:
    """A join's subscription (``topics.<topic>``) and the target its step may compute
    (``target.<member>.<partition>``), added to ``p``."""
    topics = {t: z3.Bool(f"{name}.topics.{t}@{tag}") for t in d.topics}
    target = {
        m: {x: z3.Bool(f"{name}.target.{m}.{x}@{tag}") for x in d.partitions} for m in d.members
    }
    p.update({f"topics.{t}": v for t, v in topics.items()})
    p.update({f"target.{m}.{x}": v for m, row in target.items() for x, v in row.items()})
    return topics, target


def equals(post: MixedTerm, t: MixedTerm) -> BoolRef:
    """``post`` is the group ``t``."""
    parts = [getattr(post, k) == getattr(t, k) for k in SCALAR]
    for k in UNARY:
        pf, tf = getattr(post, k), getattr(t, k)
        parts += [pf[m] == tf[m] for m in pf]
    for k in NESTED:
        pf, tf = getattr(post, k), getattr(t, k)
        parts += [pf[m][x] == tf[m][x] for m in pf for x in pf[m]]
    parts += [post.index[i] == t.index[i] for i in post.index]
    return z3.And(*parts)


def _index(d: MixedDomains) -> dict[str, int]:
    return {m: i for i, m in enumerate(d.members)}


def _in_range(x: ExprRef, d: MixedDomains) -> BoolRef:
    return z3.And(x >= 0, x < len(d.members))


def _finish(
    name: str,
    pre: MixedTerm,
    post: MixedSym,
    t: MixedTerm,
    o: MixedOptions,
    params: dict[str, Any],
    *guards: BoolRef,
) -> Family:
    done = ghost(downgrade(pre, t, o), o)
    return Family(name, z3.And(*guards, equals(post, done)), params)


def consumer_join(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """``DeliverMessage`` of a ConsumerGroupHeartbeat at epoch ≥ 0 that the coordinator
    accepts (``coordinator.resolve_member``, ``_heartbeat``; a refusal is ``Unchanged``).
    To a classic group, a join (epoch 0) first replaces it by a consumer group: an empty
    one by a new group (``mco.new_consumer_group``; a join refused then leaves the new
    group), a non-empty one — if the policy allows an upgrade and it fits
    ``max_group_size`` — by ``ConsumerGroup.fromClassicGroup`` (epochs = the classic
    generation, members classic without assignor, no target assignor) bumped for a static
    member the join replaces (``mco.bump_for_replacement``; not under
    ``replacement_bumps_group_epoch`` off). A static join at epoch 0
    whose instance another member holds replaces it if it left with -2 or speaks the
    classic protocol (``coordinator.static_holder_released``, KAFKA-17228) — the model
    replaces a classic holder under the joiner's own member id too, a state its member ids
    never make (``model.consumer.client.member_id_for``: no consumer-protocol id ends in ``.mN``);
    the variant
    ``classic-holder-unreleased`` replaces it only if it left with -2."""
    n = "DeliverMessage.consumer_join"
    p = _params(
        n,
        post.tag,
        member=N,
        instance=N,
        assignor=N,
        join=B,
        subscription_changed=B,
        generation=N,
        fresh=B,
        refused=B,
    )
    topics, target = _row_params(n, post.tag, d, p)
    ids = _index(d)
    x, inst = p["member"], p["instance"]
    g = view(pre)
    false, zero = z3.BoolVal(False), z3.IntVal(0)
    # The consumer group a classic group becomes.
    new_group = replace(
        g,
        consumer=z3.BoolVal(True),
        group_epoch=z3.IntVal(o.new_group_epoch),
        assignment_epoch=z3.IntVal(o.new_group_epoch),
        target_assignor=zero,
        breached=false,
        stable=false,
        is_member=dict.fromkeys(g.is_member, false),
        index=dict.fromkeys(g.index, zero),
    )
    gen = p["generation"]
    upgraded = replace(
        g,
        consumer=z3.BoolVal(True),
        group_epoch=gen,
        assignment_epoch=gen,
        target_assignor=zero,
        breached=false,
        stable=false,
        classic=dict(g.is_member),
        assignor=dict.fromkeys(g.is_member, zero),
        left=dict.fromkeys(g.is_member, false),
    )
    upgraded = replace(upgraded, index=index_of_members(upgraded, ids))
    held_before = z3.Or(*_holder(upgraded, inst, ids).values())
    if o.replacement_bumps_group_epoch:
        upgraded = replace(upgraded, group_epoch=gen + z3.If(held_before, 1, 0))
    base = _ite(pre.consumer, g, _ite(p["fresh"], new_group, upgraded))
    base = _masked(base)
    holds = _holder(base, inst, ids)
    held = z3.Or(*holds.values())
    member = at(base.is_member, x, ids)
    holder_is_x = z3.Or(*[z3.And(holds[m], x == ids[m]) for m in holds])
    classic_released = o.variant != "classic-holder-unreleased"
    released = z3.Or(
        *[
            z3.And(holds[m], z3.Or(base.left[m], z3.And(classic_released, base.classic[m])))
            for m in holds
        ]
    )
    replacing = z3.And(inst != 0, p["join"], held, z3.Not(holder_is_x))
    resolved = _ite(replacing, replace_static(base, holds, x, ids), base)
    stored = z3.Or(member, replacing)
    updated, tie, fits = update_member(
        resolved,
        stored,
        x,
        ids,
        d,
        o,
        classic=false,
        instance=inst,
        assignor=p["assignor"],
        subscription_changed=p["subscription_changed"],
        topics=topics,
        target=target,
    )
    # resolve_member's acceptance (the epoch checks are free: a refusal is Unchanged).
    accepted = z3.If(
        inst == 0,
        z3.Or(member, p["join"]),
        z3.If(
            p["join"],
            z3.Or(z3.Not(held), holder_is_x, released),
            holder_is_x,
        ),
    )
    size_ok = z3.Or(stored, held, count(resolved, lambda m: z3.BoolVal(True)) < o.max_group_size)
    classic_members = count(g, lambda m: z3.BoolVal(True))
    conversion = z3.And(
        p["join"],
        z3.If(
            p["fresh"],
            z3.Not(any_member(g)),
            z3.And(z3.BoolVal(o.upgrade), classic_members <= o.max_group_size),
        ),
        z3.Implies(z3.Not(p["fresh"]), gen >= 0),
    )
    ok = z3.And(accepted, size_ok, z3.Not(p["refused"]))
    t = _ite(ok, updated, base)
    guards = [
        _in_range(x, d),
        z3.Implies(pre.consumer, ok),
        z3.Implies(z3.Not(pre.consumer), z3.And(conversion, z3.Or(ok, p["fresh"]))),
        # A new member's subscription is never empty: its join changes it.
        z3.Implies(z3.Not(stored), p["subscription_changed"]),
        z3.Implies(ok, tie),
        z3.Implies(z3.And(ok, post.consumer), fits),
    ]
    return _finish(n, g, post, t, o, p, *guards)


def consumer_leave(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """``DeliverMessage`` of a ConsumerGroupHeartbeat at epoch -1 that finds its member
    (``coordinator.handle_leave``): the member is fenced (:func:`remove`)."""
    return _fence("DeliverMessage.consumer_leave", pre, post, d, o)


def classic_leave(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """``DeliverMessage`` of a LeaveGroup to a consumer group that finds its member
    (``mco.handle_classic_leave``): the member is fenced (:func:`remove`)."""
    return _fence("DeliverMessage.classic_leave", pre, post, d, o)


def _fence(name: str, pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    p = _params(name, post.tag, member=N)
    ids = _index(d)
    g = view(pre)
    x = p["member"]
    t = remove(g, x, ids, o)
    return _finish(name, g, post, t, o, p, _in_range(x, d), pre.consumer, at(g.is_member, x, ids))


def timer(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions, name: str) -> Family:
    """``SessionTimeout`` / ``RebalanceTimeout`` of a consumer group's member
    (``coordinator.session_timeout``, ``rebalance_timeout``; a classic member's session
    timer, ``system._timer``): the member is fenced. The timer may fire for any member (the
    clients are not kept); one that changes nothing is ``Unchanged``."""
    return _fence(name, pre, post, d, o)


def static_leave(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """``DeliverMessage`` of a static member's heartbeat at epoch -2
    (``coordinator.handle_leave``): the member stays with epoch -2; nothing else changes."""
    n = "DeliverMessage.static_leave"
    p = _params(n, post.tag, member=N)
    ids = _index(d)
    g = view(pre)
    x = p["member"]
    t = replace(g, left=_set(g.left, x, ids, z3.BoolVal(True)))
    guards = [
        _in_range(x, d),
        pre.consumer,
        at(g.is_member, x, ids),
        at(g.instance, x, ids) != 0,
    ]
    return _finish(n, g, post, t, o, p, *guards)


def classic_join(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """``DeliverMessage`` of a classic JoinGroup to a non-empty consumer group
    (``mco.handle_classic_join``): refused (``Unchanged``) under the policy ``disabled``
    (``mco.admits_classic_join``, KAFKA-20640) or without a protocol shared with the
    classic members (``supported``); an empty member id gets a new one (``new_id``, never
    handed out before), and a dynamic member is then told MEMBER_ID_REQUIRED; a static
    member sending a member id is refused unless it holds its instance
    (``mco.static_rejoin_error``); a static member whose instance another member holds
    replaces it if the request's member id is empty and the holder is classic or left
    with -2 — any holder under ``classic_replaces_live_holder`` —
    (``coordinator.replace_static_member``);
    the member is then written as a classic member keeping its assignor
    (``_join_as_member``). A request refused after an id was handed out keeps it
    (``refused``); one that would exceed ``max_group_size`` is refused first, before an id
    is handed out (``Unchanged``). The variant ``mixed-admits-when-disabled`` admits it
    under any policy."""
    n = "DeliverMessage.classic_join"
    p = _params(
        n,
        post.tag,
        member=N,
        unknown=B,
        new_id=N,
        instance=N,
        supported=B,
        subscription_changed=B,
        refused=B,
    )
    topics, target = _row_params(n, post.tag, d, p)
    ids = _index(d)
    g = view(pre)
    true = z3.BoolVal(True)
    unknown, inst = p["unknown"], p["instance"]
    x = z3.If(unknown, p["new_id"], p["member"])
    issued = replace(g, issued=_set(g.issued, p["new_id"], ids, true))
    base = _ite(unknown, issued, g)
    holds = _holder(base, inst, ids)
    held = z3.Or(*holds.values())
    holder_is_x = z3.Or(*[z3.And(holds[m], x == ids[m]) for m in holds])
    released = z3.Or(*[z3.And(holds[m], z3.Or(base.left[m], base.classic[m])) for m in holds])
    replacing = z3.And(held, z3.Not(holder_is_x))
    resolved = _ite(replacing, replace_static(base, holds, x, ids), base)
    member = at(base.is_member, x, ids)
    stored = z3.Or(member, replacing)
    updated, tie, fits = update_member(
        resolved,
        stored,
        x,
        ids,
        d,
        o,
        classic=true,
        instance=inst,
        assignor=z3.IntVal(0),
        subscription_changed=p["subscription_changed"],
        topics=topics,
        target=target,
    )
    admits = z3.BoolVal(o.policy != "disabled" or o.variant == "mixed-admits-when-disabled")
    id_required = z3.And(unknown, inst == 0)
    live_ok = z3.BoolVal(o.classic_replaces_live_holder)
    static_ok = z3.And(
        z3.Implies(replacing, z3.And(unknown, z3.Or(released, live_ok))),
        z3.Implies(z3.And(inst != 0, z3.Not(unknown)), held),
    )
    size_ok = z3.Or(stored, held, count(resolved, lambda m: true) < o.max_group_size)
    ok = z3.And(z3.Not(id_required), static_ok, size_ok, z3.Not(p["refused"]))
    t = _ite(ok, updated, base)
    guards = [
        _in_range(p["member"], d),
        _in_range(p["new_id"], d),
        pre.consumer,
        any_member(g),
        admits,
        p["supported"],
        z3.Implies(unknown, z3.Not(at(g.issued, p["new_id"], ids))),
        z3.Implies(z3.Not(stored), p["subscription_changed"]),
        z3.Implies(ok, tie),
        z3.Implies(z3.And(ok, post.consumer), fits),
        # A refusal that hands out no id is Unchanged; a full group refuses before an id
        # is handed out (``throwIfConsumerGroupIsFull`` comes first).
        z3.Implies(z3.Not(ok), z3.And(unknown, size_ok)),
    ]
    return _finish(n, g, post, t, o, p, *guards)


def classic_group(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    """Every step of a classic group, and a classic JoinGroup that replaces an empty
    consumer group by a classic one (``system._to_coordinator``; the issued ids carry
    over): the result is a classic group whose members, classic members with any instance
    ids, were handed out their ids; ids handed out stay so (the classic rules themselves
    are ``classic_transition``'s, not followed here)."""
    n = "ClassicGroup"
    g = view(pre)
    guards = [
        z3.Or(z3.Not(pre.consumer), z3.Not(any_member(g))),
        z3.Not(post.consumer),
        post.group_epoch == 0,
        post.assignment_epoch == 0,
        post.target_assignor == 0,
        z3.Not(post.breached),
        *[v == 0 for v in post.index.values()],
    ]
    for m in d.members:
        guards += [
            z3.Implies(pre.issued[m], post.issued[m]),
            z3.Implies(post.is_member[m], post.issued[m]),
            post.classic[m] == post.is_member[m],
            post.assignor[m] == 0,
            z3.Not(post.left[m]),
            z3.Implies(z3.Not(post.is_member[m]), post.instance[m] == 0),
            *[z3.Implies(v, post.is_member[m]) for v in post.topic[m].values()],
            *[z3.Implies(v, post.is_member[m]) for v in post.target[m].values()],
        ]
    return Family(n, z3.And(*guards), {})


def stutter(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> Family:
    return Family("Unchanged", equals(post, view(pre)), {})


Builder = Callable[[MixedSym, MixedSym, MixedDomains, MixedOptions], Family]

BUILDERS: dict[str, Builder] = {
    "DeliverMessage.consumer_join": consumer_join,
    "DeliverMessage.consumer_leave": consumer_leave,
    "DeliverMessage.static_leave": static_leave,
    "DeliverMessage.classic_join": classic_join,
    "DeliverMessage.classic_leave": classic_leave,
    "SessionTimeout": lambda pre, post, d, o: timer(pre, post, d, o, "SessionTimeout"),
    "RebalanceTimeout": lambda pre, post, d, o: timer(pre, post, d, o, "RebalanceTimeout"),
    "ClassicGroup": classic_group,
    "Unchanged": stutter,
}
"""Each family's builder, in ``FAMILY_NAMES`` order."""


def families(
    pre: MixedSym,
    post: MixedSym,
    d: MixedDomains,
    o: MixedOptions,
    names: Iterable[str] = FAMILY_NAMES,
) -> list[Family]:
    """The disjuncts of the relation named (every one by default), in that order."""
    return [BUILDERS[name](pre, post, d, o) for name in names]


def relation(pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions) -> BoolRef:
    """The transition relation: the disjunction of every family."""
    return z3.Or(*[f.formula for f in families(pre, post, d, o)])


def family_of(state: MixedState, action: Action) -> str:
    """The family a model step from ``state`` belongs to (if it changes the group)."""
    if isinstance(state.group, ClassicGroup):
        if isinstance(action, DeliverMessage) and isinstance(
            action.message.body, ConsumerGroupHeartbeatRequest
        ):
            return "DeliverMessage.consumer_join"
        return "ClassicGroup"
    if isinstance(action, SessionTimeout):
        return "SessionTimeout"
    if isinstance(action, RebalanceTimeout):
        return "RebalanceTimeout"
    if isinstance(action, DeliverMessage) and action.message.to_coordinator:
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            if body.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return "DeliverMessage.consumer_leave"
            if body.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                return "DeliverMessage.static_leave"
            return "DeliverMessage.consumer_join"
        if isinstance(body, JoinGroupRequest):
            return "ClassicGroup" if not state.group.members else "DeliverMessage.classic_join"
        if isinstance(body, LeaveGroupRequest):
            return "DeliverMessage.classic_leave"
    return "Unchanged"
