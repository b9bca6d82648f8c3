"""The classic protocol's client-side assignors, run by the group leader inside the consumer.

``range`` (``RangeAssignor``), ``roundrobin`` (``RoundRobinAssignor``), ``sticky``
(``StickyAssignor``, eager) and ``cooperative-sticky`` (``CooperativeStickyAssignor``, KIP-429),
the last two sharing ``AbstractStickyAssignor``. Each is a pure function of the partition
counts and the members' JoinGroup subscriptions; every iteration over a mapping or a set is
sorted, so equal inputs give equal outputs whatever the mappings' insertion order.

The previously owned partitions the sticky assignors start from are the members' claims
(``Subscription.owned_partitions``: the KIP-429 ``ownedPartitions`` or, for the eager sticky
assignor, the previous assignment in its user data) after per-partition arbitration by the
KIP-341 generation marker (``arbitrate_claims``; ``AbstractStickyAssignor.allSubscriptionsEqual``
since KAFKA-14639). The arbitration rule is injected (``assign(claims=...)``) so that a mutant
can replace it.

Where this model simplifies or deliberately departs from Kafka:

* Kafka iterates ``HashMap``s where the order can matter (which members of the constrained
  algorithm may keep ``maxQuota`` partitions, the order of arbitration); the model uses
  member-id order. Strings compare by code point (Java: UTF-16 code unit).
* Arbitration is order-independent: per partition, the unique claimant with the highest
  generation keeps it, and a tie at the highest generation drops it from every claimant. In
  Kafka a partition that two lower-generation members claimed and a higher-generation member
  then won is still dropped when the lower ones happen to be read first
  (``partitionsWithMultiplePreviousOwners`` is never cleared). A claim on a topic the claimant
  does not subscribe to, or on a partition that does not exist, takes no part in arbitration;
  Kafka arbitrates claims on any subscribed topic of the group and drops the unsubscribed
  ones afterwards (``GeneralAssignmentBuilder.assignOwnedPartitions``).
* No rack awareness (KIP-881): members and partitions carry no racks in this model.
* When subscriptions differ, Kafka's ``GeneralAssignmentBuilder`` (partition-movement
  bookkeeping, the ``prevAssignment`` of the second-highest generation, fixed partitions and
  members, reverting a rebalance that does not improve the balance score) is replaced by a
  simpler balancing with the same end condition (``general_assign``): keep the owned
  partitions, give each unassigned partition to its subscriber with the fewest partitions,
  then move one partition at a time from a member to a subscriber of its topic with at least
  two fewer partitions until no such move exists (Kafka's ``isBalanced``), a member's
  partitions tried in ``sortedAllPartitions`` order (topics with the fewest potential
  consumers first, as ``performReassignments`` walks them: the partitions only some members
  can take go to them first, so the end is fully balanced where Kafka's is,
  ``StickyAssignorTest.testAssignmentWithMultipleGenerations2``). Every move lowers the sum
  of squared assignment sizes, so the loop terminates.
* ``withhold_moved_partitions`` withholds a partition from its new owner when some *other*
  member still claims it and the new owner is not its arbitrated previous owner. For equal
  subscriptions this is exactly Kafka's ``partitionsTransferringOwnership`` (revoked owned
  partitions and ``partitionsWithMultiplePreviousOwners``); for differing subscriptions it is
  ``CooperativeStickyAssignor.computePartitionsTransferringOwnership`` except that a partition
  given to one of several claimants that lost arbitration is withheld too, so the result
  always passes ``ConsumerCoordinator.validateCooperativeAssignment``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.status import ConfigError

__all__ = [
    "CLIENT_ASSIGNORS",
    "COOPERATIVE_ASSIGNORS",
    "DEFAULT_GENERATION",
    "ClaimsRule",
    "Subscription",
    "all_subscriptions_equal",
    "arbitrate_claims",
    "assign",
    "constrained_assign",
    "general_assign",
    "member_order",
    "range_assign",
    "round_robin_assign",
    "sticky_assign",
    "supported_protocols",
    "validate_cooperative_assignment",
    "withhold_moved_partitions",
]


@dataclass(frozen=True, slots=True)
class Subscription:
    """ConsumerPartitionAssignor.Subscription as the leader reads it from JoinGroup metadata."""

    member_id: str
    instance_id: str | None
    topics: frozenset[str]
    owned_partitions: Assignment = EMPTY
    """KIP-429 ``ownedPartitions`` (cooperative) or, for the eager sticky assignor, the previous
    assignment from its user data (``StickyAssignor.memberData``)."""
    generation: int = -1
    """KIP-341 / KIP-792 generation marker; -1 (``AbstractStickyAssignor.DEFAULT_GENERATION``)
    when absent."""


CLIENT_ASSIGNORS: tuple[str, ...] = ("range", "roundrobin", "sticky", "cooperative-sticky")
"""The ``ConsumerPartitionAssignor.name()`` of each assignor this module models."""

COOPERATIVE_ASSIGNORS: frozenset[str] = frozenset({"cooperative-sticky"})
"""Assignors whose ``supportedProtocols`` include ``RebalanceProtocol.COOPERATIVE`` (KIP-429)."""

DEFAULT_GENERATION = -1
"""``AbstractStickyAssignor.DEFAULT_GENERATION``: the generation of a claim without a marker."""

ClaimsRule = Callable[
    [Mapping[str, Subscription], frozenset[TopicPartition]], dict[str, Assignment]
]
"""How the sticky assignors turn the members' claims into previously owned partitions
(``AbstractStickyAssignor.allSubscriptionsEqual``); ``arbitrate_claims`` is Kafka's rule."""


# --------------------------------------------------------------------------- helpers


def member_order(subscription: Subscription) -> tuple[int, str, str]:
    """Sort key of ``AbstractPartitionAssignor.MemberInfo.compareTo``: static members first,
    by ``group.instance.id``, then dynamic members by member id (member id breaks ties)."""
    if subscription.instance_id is not None:
        return (0, subscription.instance_id, subscription.member_id)
    return (1, subscription.member_id, "")


def _ordered_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Member ids in ``MemberInfo`` order, as ``Utils.sorted(memberInfoList)`` in
    ``RangeAssignor.assign`` and ``RoundRobinAssignor.assign``."""
    return sorted(subscriptions, key=lambda m: member_order(subscriptions[m]))


def _subscribed_partition_counts(
    *, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> dict[str, int]:
    """The partition count of every existing topic some member subscribes to, as
    ``AbstractPartitionAssignor.assign`` builds ``partitionsPerTopic`` from the metadata."""
    subscribed = set().union(*(s.topics for s in subscriptions.values()))
    return {t: partitions_per_topic[t] for t in sorted(subscribed) if t in partitions_per_topic}


def _partitions(partition_counts: Mapping[str, int]) -> list[TopicPartition]:
    """Every partition, by topic then index (``AbstractStickyAssignor.getAllTopicPartitions``
    over sorted topics; ``RoundRobinAssignor.allPartitionsSorted``)."""
    return [(t, p) for t in sorted(partition_counts) for p in range(partition_counts[t])]


def _frozen(assignment: Mapping[str, Iterable[TopicPartition]]) -> FrozenMap[str, Assignment]:
    """An assignor's result as a value: ``ConsumerPartitionAssignor.GroupAssignment``."""
    return FrozenMap({m: frozenset(parts) for m, parts in assignment.items()})


# --------------------------------------------------------------------------- range, roundrobin


def range_assign(
    *, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> FrozenMap[str, Assignment]:
    """``RangeAssignor.assign``: per topic, its subscribers in ``MemberInfo`` order get
    contiguous ranges, the first ``partitions mod subscribers`` one partition more."""
    counts = _subscribed_partition_counts(
        partitions_per_topic=partitions_per_topic, subscriptions=subscriptions
    )
    ordered = _ordered_members(subscriptions)
    result: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subscriptions)}
    for topic, count in counts.items():
        consumers = [m for m in ordered if topic in subscriptions[m].topics]
        quota, extra = divmod(count, len(consumers))
        for i, member in enumerate(consumers):
            start = quota * i + min(i, extra)
            length = quota + (1 if i < extra else 0)
            result[member].extend((topic, p) for p in range(start, start + length))
    return _frozen(result)


def round_robin_assign(
    *, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> FrozenMap[str, Assignment]:
    """``RoundRobinAssignor.assign``: all partitions by (topic, index) dealt to the members
    in ``MemberInfo`` order by one circular iterator that skips a member not subscribed to
    the partition's topic."""
    counts = _subscribed_partition_counts(
        partitions_per_topic=partitions_per_topic, subscriptions=subscriptions
    )
    ordered = _ordered_members(subscriptions)
    result: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subscriptions)}
    cursor = 0
    for partition in _partitions(counts):
        while partition[0] not in subscriptions[ordered[cursor % len(ordered)]].topics:
            cursor += 1
        result[ordered[cursor % len(ordered)]].append(partition)
        cursor += 1
    return _frozen(result)


# --------------------------------------------------------------------------- sticky


def arbitrate_claims(
    subscriptions: Mapping[str, Subscription], partitions: frozenset[TopicPartition]
) -> dict[str, Assignment]:
    """KIP-341 / KAFKA-14639 per-partition arbitration of ownership claims
    (``AbstractStickyAssignor.allSubscriptionsEqual``): a claim on a partition that does not
    exist or on a topic the claimant does not subscribe to is ignored; a partition claimed by
    one member stays with it; claimed by several, the claimant with the highest generation
    keeps it; several claimants sharing the highest generation, it is dropped from all of
    them (``partitionsWithMultiplePreviousOwners``: treated as unowned).

    Returns member id → the partitions it keeps as previously owned (every member id present,
    maybe empty)."""
    claimants: dict[TopicPartition, list[str]] = {}
    for member in sorted(subscriptions):
        sub = subscriptions[member]
        for tp in sorted(sub.owned_partitions):
            if tp in partitions and tp[0] in sub.topics:
                claimants.setdefault(tp, []).append(member)
    kept: dict[str, set[TopicPartition]] = {m: set() for m in subscriptions}
    for tp, members in sorted(claimants.items()):
        top = max(subscriptions[m].generation for m in members)
        winners = [m for m in members if subscriptions[m].generation == top]
        if len(winners) == 1:
            kept[winners[0]].add(tp)
    return {m: frozenset(kept[m]) for m in sorted(kept)}


def all_subscriptions_equal(subscriptions: Mapping[str, Subscription]) -> bool:
    """``AbstractStickyAssignor.allSubscriptionsEqual`` (its return value): whether every
    member subscribes to the same topics, which selects the constrained algorithm."""
    return len({s.topics for s in subscriptions.values()}) <= 1


def _sticky_order(tp: TopicPartition) -> tuple[int, str]:
    """The order in which ``ConstrainedAssignmentBuilder.assignOwnedPartitions`` keeps owned
    partitions up to the quota: by partition index, then topic."""
    return (tp[1], tp[0])


def constrained_assign(
    *, partitions: list[TopicPartition], owned: Mapping[str, Assignment]
) -> dict[str, Assignment]:
    """``AbstractStickyAssignor.ConstrainedAssignmentBuilder`` (equal subscriptions, no racks).

    With ``P`` partitions and ``N`` members every member gets ``floor(P/N)`` (minQuota) or
    ``ceil(P/N)`` (maxQuota) partitions, exactly ``P mod N`` of them the larger number.
    ``assignOwnedPartitions``: in member-id order, a member keeps all of its owned partitions
    if they are fewer than minQuota, maxQuota of them if it owns that many and a maxQuota slot
    is left, minQuota otherwise (the first by ``_sticky_order``). ``assignRoundRobin``: the
    unassigned partitions, in (topic, index) order, go round-robin to the members under
    minQuota (member-id order; one reaching minQuota joins the end of the exactly-minQuota
    list), then one each to the members at exactly minQuota while maxQuota slots are left."""
    members = sorted(owned)
    if not members:
        return {}
    min_quota, extra = divmod(len(partitions), len(members))
    max_quota = min_quota + (1 if extra else 0)
    result: dict[str, list[TopicPartition]] = {m: [] for m in members}
    under_min: list[str] = []
    exactly_min: list[str] = []
    over_min = 0
    for member in members:
        claims = sorted(owned[member], key=_sticky_order)
        if len(claims) < min_quota:
            result[member] = claims
            under_min.append(member)
        elif len(claims) >= max_quota and over_min < extra:
            over_min += 1
            if over_min == extra:
                exactly_min.clear()
            result[member] = claims[:max_quota]
        else:
            result[member] = claims[:min_quota]
            if over_min < extra:
                exactly_min.append(member)
    taken = {tp for parts in result.values() for tp in parts}
    _assign_round_robin(
        unassigned=[tp for tp in partitions if tp not in taken],
        result=result,
        under_min=under_min,
        exactly_min=exactly_min,
        min_quota=min_quota,
    )
    return {m: frozenset(parts) for m, parts in result.items()}


def _assign_round_robin(
    *,
    unassigned: list[TopicPartition],
    result: dict[str, list[TopicPartition]],
    under_min: list[str],
    exactly_min: list[str],
    min_quota: int,
) -> None:
    """``ConstrainedAssignmentBuilder.assignRoundRobin`` (updates ``result`` in place, a local
    of ``constrained_assign``). Kafka throws when no member can take a partition, which
    consistent claims never cause; a claims rule that lets two members keep one partition can,
    and then the partition goes to the member with the fewest (ties by member id)."""
    cursor = 0
    for tp in unassigned:
        from_under = True
        if cursor < len(under_min):
            member = under_min[cursor]
        elif under_min:
            cursor = 0
            member = under_min[0]
        elif exactly_min:
            member = exactly_min.pop(0)
            from_under = False
        else:
            member = min(result, key=lambda m: (len(result[m]), m))
            from_under = False
        result[member].append(tp)
        if from_under:
            if len(result[member]) == min_quota:
                under_min.pop(cursor)
                exactly_min.append(member)
            else:
                cursor += 1


def _general_order(
    *, partition_counts: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> list[TopicPartition]:
    """``GeneralAssignmentBuilder.sortedAllPartitions``: topics with fewer potential
    consumers first (``TopicComparator``; ties by name), each topic's partitions by index."""
    consumers = {t: sum(t in s.topics for s in subscriptions.values()) for t in partition_counts}
    topics = sorted(partition_counts, key=lambda t: (consumers[t], t))
    return [(t, p) for t in topics for p in range(partition_counts[t])]


def _balancing_move(
    *,
    result: Mapping[str, set[TopicPartition]],
    subscriptions: Mapping[str, Subscription],
    rank: Mapping[TopicPartition, int],
) -> tuple[TopicPartition, str, str] | None:
    """One move of ``GeneralAssignmentBuilder.performReassignments``, simplified: the first
    (partition, from, to) such that ``to`` subscribes to the partition's topic, does not hold
    it, and has at least two partitions fewer than ``from``. Donors are tried largest first
    (ties by member id), a donor's partitions by ``rank`` — ``sortedAllPartitions`` order,
    so partitions of the topics with the fewest potential consumers first, as
    ``performReassignments`` walks them —, receivers smallest first (ties by member id);
    ``None`` when the assignment is balanced (Kafka's ``isBalanced``)."""
    for donor in sorted(result, key=lambda m: (-len(result[m]), m)):
        for tp in sorted(result[donor], key=lambda tp: (rank.get(tp, len(rank)), tp)):
            receivers = [
                m
                for m in result
                if m != donor
                and tp[0] in subscriptions[m].topics
                and tp not in result[m]
                and len(result[m]) + 2 <= len(result[donor])
            ]
            if receivers:
                return (tp, donor, min(receivers, key=lambda m: (len(result[m]), m)))
    return None


def general_assign(
    *,
    partition_counts: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    owned: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """``AbstractStickyAssignor.GeneralAssignmentBuilder`` (differing subscriptions, no racks),
    simplified as the module docstring says: keep the owned partitions of subscribed topics
    (``assignOwnedPartitions``), give each unassigned partition in ``sortedAllPartitions``
    order to its subscriber with the fewest partitions, ties by member id
    (``maybeAssignPartition``), then move partitions until balanced (``_balancing_move``)."""
    result: dict[str, set[TopicPartition]] = {
        m: {tp for tp in owned.get(m, EMPTY) if tp[0] in subscriptions[m].topics}
        for m in sorted(subscriptions)
    }
    taken = {tp for parts in result.values() for tp in parts}
    order = _general_order(partition_counts=partition_counts, subscriptions=subscriptions)
    rank = {tp: i for i, tp in enumerate(order)}
    for tp in order:
        if tp in taken:
            continue
        eligible = [m for m in result if tp[0] in subscriptions[m].topics]
        if eligible:
            result[min(eligible, key=lambda m: (len(result[m]), m))].add(tp)
    while (
        move := _balancing_move(result=result, subscriptions=subscriptions, rank=rank)
    ) is not None:
        tp, donor, receiver = move
        result[donor].remove(tp)
        result[receiver].add(tp)
    return {m: frozenset(parts) for m, parts in result.items()}


def _previously_owned(
    *,
    subscriptions: Mapping[str, Subscription],
    partitions: frozenset[TopicPartition],
    claims: ClaimsRule,
) -> dict[str, Assignment]:
    """``AbstractStickyAssignor.allSubscriptionsEqual`` filling ``consumerToOwnedPartitions``:
    the claims rule's verdict, restricted to existing partitions of each member's own topics
    whatever the rule returns (an injected rule can only change who keeps what)."""
    verdict = claims(subscriptions, partitions)
    return {
        m: frozenset(
            tp
            for tp in verdict.get(m, EMPTY)
            if tp in partitions and tp[0] in subscriptions[m].topics
        )
        for m in sorted(subscriptions)
    }


def sticky_assign(
    *,
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    claims: ClaimsRule = arbitrate_claims,
) -> FrozenMap[str, Assignment]:
    """``AbstractStickyAssignor.assignPartitions`` (``StickyAssignor``; the first step of
    ``CooperativeStickyAssignor.assign``): previously owned partitions by ``claims``, then the
    constrained algorithm if ``all_subscriptions_equal`` and the general one otherwise."""
    counts = _subscribed_partition_counts(
        partitions_per_topic=partitions_per_topic, subscriptions=subscriptions
    )
    partitions = _partitions(counts)
    owned = _previously_owned(
        subscriptions=subscriptions, partitions=frozenset(partitions), claims=claims
    )
    if all_subscriptions_equal(subscriptions):
        return _frozen(constrained_assign(partitions=partitions, owned=owned))
    return _frozen(
        general_assign(partition_counts=counts, subscriptions=subscriptions, owned=owned)
    )


# --------------------------------------------------------------------------- cooperative


def withhold_moved_partitions(
    assignment: Mapping[str, Assignment],
    subscriptions: Mapping[str, Subscription],
    *,
    previously_owned: Mapping[str, Assignment] | None = None,
) -> FrozenMap[str, Assignment]:
    """``CooperativeStickyAssignor.adjustAssignment`` (KIP-429 "Compatibility and Upgrade
    Path": a partition is revoked by its owner before it is assigned to another member).

    A partition assigned to a member that is not its (arbitrated) previous owner, while
    another member still claims it in ``owned_partitions``, is removed from its new owner this
    round; the next rebalance, after the revocation, assigns it. ``previously_owned`` is the
    arbitrated claims the assignment started from (``arbitrate_claims`` over the assigned
    partitions when not given)."""
    if previously_owned is None:
        assigned = frozenset(tp for parts in assignment.values() for tp in parts)
        previously_owned = arbitrate_claims(subscriptions, assigned)
    claimants: dict[TopicPartition, set[str]] = {}
    for member in sorted(subscriptions):
        for tp in subscriptions[member].owned_partitions:
            claimants.setdefault(tp, set()).add(member)
    return FrozenMap(
        {
            member: frozenset(
                tp
                for tp in parts
                if tp in previously_owned.get(member, EMPTY)
                or not claimants.get(tp, set()) - {member}
            )
            for member, parts in assignment.items()
        }
    )


def validate_cooperative_assignment(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, Assignment]
) -> frozenset[TopicPartition]:
    """``ConsumerCoordinator.validateCooperativeAssignment``: the partitions that are both
    revoked from one member (in its ``owned_partitions``, not in its new assignment) and added
    to another (in its new assignment, not in its ``owned_partitions``) in the same round.
    Empty = valid."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member in sorted(assignment):
        sub = subscriptions.get(member)
        owned = sub.owned_partitions if sub is not None else EMPTY
        added |= assignment[member] - owned
        revoked |= owned - assignment[member]
    return frozenset(added & revoked)


def supported_protocols(name: str) -> tuple[str, ...]:
    """``ConsumerPartitionAssignor.supportedProtocols``: ``("EAGER",)``, or
    ``("EAGER", "COOPERATIVE")`` for ``CooperativeStickyAssignor`` (KIP-429)."""
    _check_name(name)
    return ("EAGER", "COOPERATIVE") if name in COOPERATIVE_ASSIGNORS else ("EAGER",)


# --------------------------------------------------------------------------- dispatch


def _check_name(name: str) -> None:
    """``ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG`` accepts the known assignors:
    raise ``ConfigError`` naming them for any other name."""
    if name not in CLIENT_ASSIGNORS:
        raise ConfigError(f"unknown client assignor {name!r}; known: {', '.join(CLIENT_ASSIGNORS)}")


def _check_inputs(
    *, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> None:
    """The leader's inputs as ``ConsumerCoordinator.onLeaderElected`` builds them: the
    subscriptions keyed by their member ids, partition counts not negative."""
    for key, sub in subscriptions.items():
        if key != sub.member_id:
            raise ConfigError(
                f"subscription keyed {key!r} has member_id {sub.member_id!r}; "
                "key the subscriptions by their member ids"
            )
    for topic, count in partitions_per_topic.items():
        if count < 0:
            raise ConfigError(f"topic {topic!r} has {count} partitions; give a count >= 0")


def assign(
    name: str,
    *,
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    claims: ClaimsRule = arbitrate_claims,
    withhold: bool = True,
) -> FrozenMap[str, Assignment]:
    """``ConsumerCoordinator.onLeaderElected`` calling ``ConsumerPartitionAssignor.assign`` of
    the assignor ``name``; every member id of ``subscriptions`` is a key of the result (maybe
    empty). ``claims`` is the arbitration the sticky assignors use; ``withhold`` applies
    ``CooperativeStickyAssignor.adjustAssignment`` for cooperative-sticky. An unknown name
    raises ``ConfigError`` naming the known assignors."""
    _check_name(name)
    _check_inputs(partitions_per_topic=partitions_per_topic, subscriptions=subscriptions)
    if name == "range":
        return range_assign(partitions_per_topic=partitions_per_topic, subscriptions=subscriptions)
    if name == "roundrobin":
        return round_robin_assign(
            partitions_per_topic=partitions_per_topic, subscriptions=subscriptions
        )
    result = sticky_assign(
        partitions_per_topic=partitions_per_topic, subscriptions=subscriptions, claims=claims
    )
    if name not in COOPERATIVE_ASSIGNORS or not withhold:
        return result
    counts = _subscribed_partition_counts(
        partitions_per_topic=partitions_per_topic, subscriptions=subscriptions
    )
    owned = _previously_owned(
        subscriptions=subscriptions, partitions=frozenset(_partitions(counts)), claims=claims
    )
    return withhold_moved_partitions(result, subscriptions, previously_owned=owned)
