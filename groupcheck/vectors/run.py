"""Execute vectors against the model (``docs/vectors.md``).

Each kind calls the model function that mirrors the Kafka class under test:

* ``reconcile``: ``Rules.reconcile`` (``model/consumer/reconcile.py``,
  ``CurrentAssignmentBuilder``), then the KIP-1251 assignment epochs the coordinator stamps on the
  written member (``model.consumer.coordinator.stamp_assignment_epochs``);
* ``server-assignor``: ``model.assignors.get_assignor(name).assign`` (``UniformAssignor``,
  ``RangeAssignor`` of the group coordinator);
* ``client-assignor``: ``Rules.classic_leader_assignment``, the classic group leader's
  assignment step (``model.classic.client.leader_assignment``: the consumer's assignors,
  ``model.classic.assignors``);
* ``consumer-heartbeat``: ``model.consumer.coordinator.handle_consumer_group_heartbeat`` and the
  session and rebalance timeouts (``groupcheck.vectors.coordinator``);
* ``consumer-membership``: the consumer's state machine, ``model.consumer.client``
  (``groupcheck.vectors.client``).

A vector whose ``expressible`` is false is counted, never run.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from groupcheck.vectors.client import compare_membership, run_consumer_membership
from groupcheck.vectors.coordinator import compare_steps, run_consumer_heartbeat
from groupcheck.vectors.load import Explanation, Vector, VectorFile
from groupcheck.vectors.mixed import compare_classic, run_classic_group
from model.assignors import AssignmentSpec, MemberSubscription, get_assignor
from model.classic import assignors as client_assignors
from model.classic.messages import ClassicSubscription, JoinGroupResponseMember
from model.classic.records import ClassicClient
from model.consumer.coordinator import replace_static_member, stamp_assignment_epochs
from model.consumer.target import assignment_spec, member_topics
from model.ids import Assignment, FrozenMap, TopicPartition
from model.presets import TINY
from model.records import Group, Member, TopicMetadata, new_member
from model.rules import DEFAULT_RULES, Rules
from model.status import ClassicClientStatus, MemberState

Json = dict[str, Any]
PASS, DIFFER, EXPLAINED, NOT_EXPRESSIBLE = "pass", "differ", "explained", "not-expressible"
TARGET_CONFIG = TINY
"""The config whose rules a static replacement runs with (only its rules are read)."""
MAX_ORDERS = 24
"""``order-independent`` tries at most this many member orders."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One vector's verdict: the model's answer and, when it differs, what differs."""

    vector: Vector
    status: str
    answer: Json | None = None
    detail: str = ""
    explanation: Explanation | None = None


@dataclass(slots=True)
class ClassResult:
    """Every outcome of one vector file."""

    file: VectorFile
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many vectors of this file have ``status``."""
        return sum(o.status == status for o in self.outcomes)


# --------------------------------------------------------------------------- shapes


def partitions(obj: Mapping[str, list[int]]) -> Assignment:
    """``{"topic": [0, 1]}`` → frozenset of (topic, partition)."""
    return frozenset((t, p) for t, ps in obj.items() for p in ps)


def with_epochs(obj: Mapping[str, Mapping[str, int]]) -> dict[TopicPartition, int]:
    """``{"topic": {"0": 5}}`` → {(topic, 0): 5}."""
    return {(t, int(p)): e for t, ps in obj.items() for p, e in ps.items()}


def as_json(assignment: Assignment) -> Json:
    """frozenset of (topic, partition) → ``{"topic": [sorted partitions]}``."""
    out: dict[str, list[int]] = {}
    for t, p in sorted(assignment):
        out.setdefault(t, []).append(p)
    return out


def epochs_json(tps: Assignment, epochs: Mapping[TopicPartition, int]) -> Json:
    """The partitions ``tps`` with their epochs: ``{"topic": {"0": 5}}``."""
    out: dict[str, dict[str, int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, {})[str(p)] = epochs[(t, p)]
    return out


def group_json(result: Mapping[str, Assignment]) -> Json:
    """A group assignment as JSON, member by member."""
    return {m: as_json(result[m]) for m in sorted(result)}


def normal(value: Any) -> Any:
    """A value with list order, empty topics and empty member entries removed, so that two
    answers that mean the same compare equal."""
    if isinstance(value, dict):
        items = {k: normal(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v not in ({}, [])} or {}
    if isinstance(value, list):
        return sorted((normal(v) for v in value), key=repr)
    return value


# --------------------------------------------------------------------------- reconcile


def _member(raw: Json) -> Member:
    assigned = with_epochs(raw["assigned_partitions"])
    pending = with_epochs(raw["partitions_pending_revocation"])
    return Member(
        member_id=raw["member_id"],
        instance_id=raw.get("instance_id"),
        member_epoch=raw["member_epoch"],
        previous_member_epoch=raw["previous_member_epoch"],
        state=MemberState[raw["state"]],
        assigned_partitions=frozenset(assigned),
        partitions_pending_revocation=frozenset(pending),
        subscribed_topic_names=frozenset(raw["subscribed_topic_names"]),
        server_assignor=None,
        rebalance_timeout_ms=-1,
        subscribed_topic_regex=raw.get("subscribed_topic_regex") or None,
        assignment_epochs=FrozenMap({**pending, **assigned}),
    )


def _member_json(member: Member, raw: Json) -> Json:
    epochs = member.assignment_epochs
    return {
        "member_id": member.member_id,
        "state": member.state.value,
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "subscribed_topic_names": sorted(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex
        or raw.get("subscribed_topic_regex"),
        "assigned_partitions": epochs_json(member.assigned_partitions, epochs),
        "partitions_pending_revocation": epochs_json(member.partitions_pending_revocation, epochs),
    }


def partition_epochs(inp: Json) -> dict[TopicPartition, int]:
    """The current partition epochs of every partition of the metadata image: a partition's
    own entry, else its topic's, else the default; -1 (free) entries left out."""
    spec = inp["current_partition_epochs"]
    default = spec.get("default", -1)
    per_topic = spec.get("topics", {})
    per_partition = spec.get("partitions", {})
    result: dict[TopicPartition, int] = {}
    for topic in inp["topics"]:
        tid = topic["id"]
        for p in range(topic["partitions"]):
            epoch = per_partition.get(tid, {}).get(str(p), per_topic.get(tid, default))
            if epoch != -1:
                result[(tid, p)] = epoch
    return result


def run_reconcile(inp: Json, rules: Rules) -> Json:
    """``CurrentAssignmentBuilder.build`` as the model runs it, then the written member's
    KIP-1251 assignment epochs."""
    member = _member(inp["member"])
    ids = {t["name"]: t["id"] for t in inp["topics"]}
    resolved = {k: frozenset(v) for k, v in inp["resolved_regular_expressions"].items()}
    subscribed = frozenset(ids[n] for n in member_topics(member, resolved) if n in ids)
    owned = inp["owned_topic_partitions"]
    new = rules.reconcile(
        member,
        target_epoch=inp["target_epoch"],
        target=partitions(inp["target_assignment"]),
        partition_epochs=partition_epochs(inp),
        owned=None if owned is None else partitions(owned),
        subscription_changed=inp["has_subscription_changed"],
        subscribed_topic_ids=subscribed,
    )
    stamped = Member(**{**_fields(new), "assignment_epochs": stamp_assignment_epochs(member, new)})
    return {"member": _member_json(stamped, inp["member"])}


def _fields(member: Member) -> dict[str, Any]:
    return {name: getattr(member, name) for name in Member.__slots__}


# --------------------------------------------------------------------------- server assignors


def _spec(inp: Json, members: Json, order: list[str] | None = None) -> AssignmentSpec:
    ids = order if order is not None else list(members)
    subs = tuple(
        MemberSubscription(
            member_id=m,
            instance_id=members[m].get("instance_id"),
            subscribed_topic_ids=frozenset(members[m]["subscribed_topic_ids"]),
        )
        for m in ids
    )
    counts = FrozenMap((t["id"], t["partitions"]) for t in inp["topics"])
    previous = FrozenMap((m, partitions(members[m].get("assignment", {}))) for m in ids)
    return AssignmentSpec(members=subs, partitions_per_topic=counts, previous_target=previous)


def _server_assign(
    inp: Json, members: Json, order: list[str] | None = None
) -> dict[str, Assignment]:
    return get_assignor(inp["assignor"]).assign(_spec(inp, members, order))


def _with_assignment(members: Json, result: Mapping[str, Assignment]) -> Json:
    return {m: {**members[m], "assignment": as_json(result.get(m, frozenset()))} for m in members}


def run_server_assignor(inp: Json, expected: Json) -> tuple[Json, list[str]]:
    """The assignment, and the properties the vector asks for that do not hold."""
    members = inp["members"]
    result = _server_assign(inp, members)
    subscribed = {m: frozenset(members[m]["subscribed_topic_ids"]) for m in members}
    failed = [
        p
        for p in expected.get("properties", [])
        if not _server_property(p, inp, result, subscribed, expected)
    ]
    return {"assignment": group_json(result)}, failed


def _server_property(
    name: str,
    inp: Json,
    result: Mapping[str, Assignment],
    subscribed: Mapping[str, frozenset[str]],
    expected: Json,
) -> bool:
    members = inp["members"]
    if name == "valid":
        return is_valid(result, subscribed)
    if name == "balanced":
        return is_balanced(result, subscribed)
    if name == "stable-reassignment":
        return _server_assign(inp, _with_assignment(members, result)) == result
    if name == "order-independent":
        again = _with_assignment(members, result)
        orders = itertools.islice(itertools.permutations(list(members)), MAX_ORDERS)
        return all(_server_assign(inp, again, list(o)) == result for o in orders)
    then = expected["then"]
    second = _server_assign(inp, then["members"])
    return all(
        result.get(a, frozenset()) == second.get(b, frozenset()) for a, b in then["same"].items()
    )


def is_valid(result: Mapping[str, Assignment], subscribed: Mapping[str, frozenset[str]]) -> bool:
    """Every partition assigned at most once, and only to a subscriber of its topic."""
    seen: set[TopicPartition] = set()
    for m, tps in result.items():
        if any(t not in subscribed.get(m, frozenset()) for t, _ in tps) or seen & tps:
            return False
        seen |= tps
    return True


def is_balanced(result: Mapping[str, Assignment], subscribed: Mapping[str, frozenset[str]]) -> bool:
    """No partition could move from a member to a subscriber of its topic holding at least
    two partitions fewer (with equal subscriptions: sizes differ by at most one)."""
    for a, b in itertools.permutations(result, 2):
        if len(result[a]) > len(result[b]) + 1 and any(
            t in subscribed.get(b, frozenset()) for t, _ in result[a]
        ):
            return False
    return True


# --------------------------------------------------------------------------- target assignment


def _target_member(member_id: str, raw: Json, base: Member | None = None) -> Member:
    """A member as ``TargetAssignmentBuilderTest`` builds it (``ConsumerGroupMember.Builder``
    defaults, then its subscription, regex, instance id and rack)."""
    member = base if base is not None else new_member(member_id, raw.get("instance_id"))
    return replace(
        member,
        subscribed_topic_names=frozenset(raw.get("subscribed_topic_names", [])),
        subscribed_topic_regex=raw.get("subscribed_topic_regex") or member.subscribed_topic_regex,
        instance_id=raw.get("instance_id") or member.instance_id,
        rack_id=raw.get("rack_id") or member.rack_id,
    )


def run_target_assignment(inp: Json) -> Json:
    """``TargetAssignmentBuilder.build`` with the assignor's answer given (the test mocks the
    assignor): the group's members with the test's updates applied — a new static member
    takes over the target of the departed member of its instance
    (``model.consumer.coordinator.replace_static_member``, which also removes that member), then the
    other removals drop their members — then the assignor input
    (``model.consumer.target.assignment_spec``), the new target (every member's entry of the
    assignor's answer) and the members whose target changed (a target record each)."""
    topics = {
        t["name"]: TopicMetadata(topic_id=t["id"], partitions=t["partitions"])
        for t in inp["topics"]
    }
    before = {m: partitions(a) for m, a in inp["target_assignment"].items()}
    members = {m: _target_member(m, raw) for m, raw in inp["members"].items()}
    group = Group(
        group_epoch=inp["group_epoch"],
        assignment_epoch=inp["group_epoch"] - 1,
        target_assignment=FrozenMap(sorted(before.items())),
        members=FrozenMap(sorted(members.items())),
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
        static_members=FrozenMap(
            (m.instance_id, mid) for mid, m in sorted(members.items()) if m.instance_id
        ),
    )
    updates = inp.get("updated_members", {})
    for mid, raw in updates.items():
        if raw is None:
            continue
        holder = group.static_member_id(raw.get("instance_id"))
        if holder is not None and holder != mid and holder in group.members:
            group, _, _ = replace_static_member(group, group.members[holder], mid, TARGET_CONFIG)
        base = group.members.get(mid)
        group = replace(group, members=group.members.set(mid, _target_member(mid, raw, base)))
    for mid in (m for m, raw in updates.items() if raw is None and m in group.members):
        group = replace(group, members=group.members.remove(mid))
    resolved = {k: frozenset(v) for k, v in inp["resolved_regular_expressions"].items()}
    spec = assignment_spec(group.members, topics, group.target_assignment, resolved)
    answer = {m: partitions(a) for m, a in inp["assignor_result"].items()}
    target = {s.member_id: answer.get(s.member_id, frozenset()) for s in spec.members}
    return {
        "spec": {
            s.member_id: {
                "subscribed_topic_ids": sorted(s.subscribed_topic_ids),
                "assignment": as_json(spec.previous_target.get(s.member_id, frozenset())),
            }
            for s in spec.members
        },
        "assignment": group_json(target),
        "records": {
            "target_assignment": sorted(m for m, a in target.items() if before.get(m) != a),
            "assignment_epoch": group.group_epoch,
        },
    }


def is_fully_balanced(result: Mapping[str, Assignment]) -> bool:
    """Every member's assignment size within one of every other's, whatever the
    subscriptions (``AbstractStickyAssignorTest.isFullyBalanced``'s condition)."""
    sizes = [len(a) for a in result.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


# --------------------------------------------------------------------------- client assignors


def _subscriptions(raw: Json) -> dict[str, client_assignors.Subscription]:
    return {
        m: client_assignors.Subscription(
            member_id=m,
            instance_id=s.get("instance_id"),
            topics=frozenset(s["topics"]),
            owned_partitions=partitions(s.get("owned_partitions", {})),
            generation=s.get("generation", client_assignors.DEFAULT_GENERATION),
        )
        for m, s in raw.items()
    }


LEADER_FAILED = (
    "the leader's assignment fails validateCooperativeAssignment (IllegalStateException)"
)
"""What a vector reports when the leader step answers None: the rebalance fails."""


def leader_members(subs: Json) -> tuple[JoinGroupResponseMember, ...]:
    """The members as the leader's JoinGroup response lists them (by member id): each claim
    is both the KIP-429 ``ownedPartitions`` and the sticky user data's previous assignment,
    with its generation (the vector's ``generation``; -1 when absent)."""
    members = []
    for m, s in sorted(subs.items()):
        owned = partitions(s.get("owned_partitions", {}))
        members.append(
            JoinGroupResponseMember(
                member_id=m,
                instance_id=s.get("instance_id"),
                subscription=ClassicSubscription(
                    topics=frozenset(s["topics"]),
                    owned_partitions=owned,
                    generation_id=s.get("generation", client_assignors.DEFAULT_GENERATION),
                    user_data=owned,
                ),
            )
        )
    return tuple(members)


def _client_assign(
    inp: Json, subs: Json, rules: Rules = DEFAULT_RULES
) -> Mapping[str, Assignment] | None:
    """The classic group leader's assignment step, ``Rules.classic_leader_assignment``
    (``ConsumerCoordinator.onLeaderElected`` → ``performAssignment``), over the vector's
    subscriptions: the leader is a KIP-429 client configured with the vector's assignor
    alone, and topic ids are topic names. For the reference rules this is
    ``model.classic.assignors.assign`` (with ``CooperativeStickyAssignor.adjustAssignment``
    for cooperative-sticky, as the assignor's ``assignPartitions`` the tests call); a mutant
    of the leader step or of the claims arbitration (``Rules.classic_arbitrate_claims``) is
    run by the vector. None when the leader's check fails the rebalance."""
    name = inp["assignor"]
    members = leader_members(subs)
    leader = ClassicClient(
        name="leader",
        instance_id=None,
        incarnation=0,
        alive=True,
        status=ClassicClientStatus.COMPLETING_REBALANCE,
        assignors=(name,),
        kip429=True,
        subscription=frozenset(t for m in members for t in m.subscription.topics),
        member_id=members[0].member_id if members else "leader",
        protocol_name=name,
        leader=True,
        join_members=members,
    )
    topics = {t: TopicMetadata(topic_id=t, partitions=n) for t, n in inp["topics"].items()}
    config = replace(TARGET_CONFIG, rules=rules)
    return rules.classic_leader_assignment(leader, members, topics, config)


MAX_FOLLOW_UPS = 4
"""``cooperative-follow-ups`` allows at most this many follow-up rebalances."""


def cooperative_follow_ups_settle(
    inp: Json, subs: Json, result: Mapping[str, Assignment], rules: Rules = DEFAULT_RULES
) -> Mapping[str, Assignment] | None:
    """``CooperativeStickyAssignorTest.verifyValidityAndBalance``'s condition: no round
    assigns a partition to one member while revoking it from another
    (``validate_cooperative_assignment``); while a round revokes a partition, the members
    rejoin owning what they were given (same generations) and the leader step runs again,
    at most ``MAX_FOLLOW_UPS`` times; the last assignment is valid, balanced and fully
    balanced. Returns that last assignment (what the test's assertions after
    ``verifyValidityAndBalance`` read), or None when the condition fails."""
    subscribed = {m: frozenset(s["topics"]) for m, s in subs.items()}
    current = dict(subs)
    answer: Mapping[str, Assignment] | None = result
    for _ in range(MAX_FOLLOW_UPS + 1):
        if answer is None:
            return None
        parsed = _subscriptions(current)
        if client_assignors.validate_cooperative_assignment(parsed, answer):
            return None
        revoked = any(parsed[m].owned_partitions - answer.get(m, frozenset()) for m in parsed)
        if not revoked:
            settled = (
                is_valid(answer, subscribed)
                and is_balanced(answer, subscribed)
                and is_fully_balanced(answer)
            )
            return answer if settled else None
        current = {
            m: {**s, "owned_partitions": as_json(answer.get(m, frozenset()))}
            for m, s in current.items()
        }
        answer = _client_assign(inp, current, rules)
    return None


def _size_ok(size: int, bound: int | list[int]) -> bool:
    """A ``bounds`` size: an exact count, or ``[least, most]``."""
    if isinstance(bound, int):
        return size == bound
    return bound[0] <= size <= bound[1]


Rounds = list[Mapping[str, Assignment]]
"""The answers of the rounds run so far (round 1 first)."""


def _bound_partitions(value: Json, earlier: Rounds) -> Assignment:
    """A bound's partitions: given, or ``{"round": k, "member": m}`` — member m's answer in
    round k."""
    if "round" in value:
        answer: Assignment = earlier[value["round"] - 1].get(value["member"], frozenset())
        return answer
    return partitions(value)


def bounds_problems(
    result: Mapping[str, Assignment], bounds: Json, earlier: Rounds | None = None
) -> list[str]:
    """``expected.bounds``, member id → what a test asserts of its assignment without
    stating it whole: ``size`` (a count or ``[least, most]``), ``within`` (every partition
    from these), ``contains`` (all of these), ``disjoint`` (none of these), ``overlaps``
    (some of these); partitions given, or a member's answer of an earlier round
    (``_bound_partitions``). One line per bound that does not hold."""
    rounds = earlier or []
    problems = []
    for member, bound in sorted(bounds.items()):
        mine = result.get(member, frozenset())
        if "size" in bound and not _size_ok(len(mine), bound["size"]):
            problems.append(f"bounds: {member} has {len(mine)} partitions, not {bound['size']}")
        if "within" in bound and not mine <= _bound_partitions(bound["within"], rounds):
            problems.append(f"bounds: {member} is given partitions outside {bound['within']}")
        if "contains" in bound and not _bound_partitions(bound["contains"], rounds) <= mine:
            problems.append(f"bounds: {member} lacks some of {bound['contains']}")
        if "disjoint" in bound and mine & _bound_partitions(bound["disjoint"], rounds):
            problems.append(f"bounds: {member} is given some of {bound['disjoint']}")
        if "overlaps" in bound and not mine & _bound_partitions(bound["overlaps"], rounds):
            problems.append(f"bounds: {member} is given none of {bound['overlaps']}")
    return problems


def _round_subscriptions(raw: Json, earlier: Rounds) -> Json:
    """A later round's subscriptions: ``owned_from: k`` stands for the member's own answer
    of round k as its owned partitions."""
    out = {}
    for m, given in raw.items():
        sub = dict(given)
        if "owned_from" in sub:
            owned = earlier[sub.pop("owned_from") - 1].get(m, frozenset())
            sub["owned_partitions"] = as_json(owned)
        out[m] = sub
    return out


def _check_round(
    inp: Json, subs: Json, expected: Json, rules: Rules, earlier: Rounds
) -> tuple[Mapping[str, Assignment] | None, Json, list[str]]:
    """One round of the leader step: its answer, the answer's JSON and the properties and
    bounds of ``expected`` that do not hold."""
    result = _client_assign(inp, subs, rules)
    if result is None:
        return None, {"error": LEADER_FAILED}, [LEADER_FAILED]
    subscribed = {m: frozenset(s["topics"]) for m, s in subs.items()}
    failed = []
    answer: Json = {"assignment": group_json(result)}
    for prop in expected.get("properties", []):
        ok = True
        if prop == "valid":
            ok = is_valid(result, subscribed)
        elif prop == "balanced":
            ok = is_balanced(result, subscribed)
        elif prop == "fully-balanced":
            ok = is_fully_balanced(result)
        elif prop == "cooperative-follow-ups":
            settled = cooperative_follow_ups_settle(inp, subs, result, rules)
            ok = settled is not None
            if settled is not None and "settled" in expected:
                answer["settled"] = group_json(settled)
        elif prop == "same-as-first":
            then = expected["then"]
            second = _client_assign(inp, then["subscriptions"], rules)
            ok = second is not None and all(
                result.get(a) == second.get(b) for a, b in then["same"].items()
            )
        if not ok:
            failed.append(prop)
    failed.extend(bounds_problems(result, expected.get("bounds", {}), [*earlier, result]))
    return result, answer, failed


def run_client_assignor(
    inp: Json, expected: Json, rules: Rules = DEFAULT_RULES
) -> tuple[Json, list[str]]:
    """The leader's assignment step, and the properties and bounds asked for that do not
    hold; ``settled`` in the answer when the vector expects the assignment after the
    cooperative follow-up rebalances. ``input.rounds`` are later rounds (a test that
    assigns again with the members owning what earlier rounds gave them), each checked
    against its entry of ``expected.rounds``; ``answer.rounds`` has their assignments."""
    result, answer, failed = _check_round(inp, inp["subscriptions"], expected, rules, [])
    if result is None:
        return answer, failed
    earlier: Rounds = [result]
    later = []
    pairs = zip(inp.get("rounds", []), expected.get("rounds", []), strict=True)
    for n, (raw, exp) in enumerate(pairs, 2):
        subs = _round_subscriptions(raw["subscriptions"], earlier)
        result, round_answer, round_failed = _check_round(inp, subs, exp, rules, earlier)
        failed.extend(f"round {n}: {p if ' ' in p else 'property ' + p}" for p in round_failed)
        later.append(round_answer)
        if result is None:
            break
        earlier.append(result)
    if later:
        answer["rounds"] = later
    return answer, failed


# --------------------------------------------------------------------------- dispatch


Runner = Callable[[Json, Json, Rules, str], tuple[Json, list[str]]]
"""A kind's runner: input, expected values, the rules, the file's Kafka version."""


def _reconcile_runner(
    inp: Json, expected: Json, rules: Rules, version: str
) -> tuple[Json, list[str]]:
    return run_reconcile(inp, rules), []


def _heartbeat_runner(
    inp: Json, expected: Json, rules: Rules, version: str
) -> tuple[Json, list[str]]:
    answer = run_consumer_heartbeat(inp, version, rules)
    return answer, compare_steps(expected, answer)


def _membership_runner(
    inp: Json, expected: Json, rules: Rules, version: str
) -> tuple[Json, list[str]]:
    answer = run_consumer_membership(inp, rules)
    return answer, compare_membership(expected, answer)


def _classic_runner(
    inp: Json, expected: Json, rules: Rules, version: str
) -> tuple[Json, list[str]]:
    answer = run_classic_group(inp, expected, version, rules)
    return answer, compare_classic(expected, answer)


RUNNERS: dict[str, Runner] = {
    "reconcile": _reconcile_runner,
    "server-assignor": lambda inp, exp, rules, version: run_server_assignor(inp, exp),
    "client-assignor": lambda inp, exp, rules, version: run_client_assignor(inp, exp, rules),
    "target-assignment": lambda inp, exp, rules, version: (run_target_assignment(inp), []),
    "consumer-heartbeat": _heartbeat_runner,
    "consumer-membership": _membership_runner,
    "classic-group": _classic_runner,
}


def compare(expected: Json, answer: Json, failed: list[str]) -> str:
    """What differs between the expected values and the model's answer ("" when nothing)."""
    problems = [p if " " in p else f"property {p} does not hold" for p in failed]
    for key in ("member", "assignment", "settled", "spec", "records"):
        if key in expected and normal(expected[key]) != normal(answer.get(key)):
            problems.append(
                f"{key}: expected {_short(expected[key])}, model {_short(answer.get(key))}"
            )
    if "error" in expected and "responses" not in expected:
        problems.append(f"expected error {expected['error']}, model answered without one")
    return "; ".join(problems)


def _short(value: Any) -> str:
    return json.dumps(normal(value), sort_keys=True, separators=(",", ":"))


ASSIGNOR_KINDS = ("server-assignor", "client-assignor")
"""Kinds whose explained differences are tie-breaks: the runner still checks the answer."""


def _assignor_view(vector: Vector) -> tuple[dict[str, frozenset[str]], dict[str, Assignment]]:
    """Each member's subscribed topics and the assignment it enters with (the current target
    of a server assignor, the owned partitions of a client assignor)."""
    if vector.kind == "server-assignor":
        members = vector.input["members"]
        return (
            {m: frozenset(v["subscribed_topic_ids"]) for m, v in members.items()},
            {m: partitions(v.get("assignment", {})) for m, v in members.items()},
        )
    subs = vector.input["subscriptions"]
    return (
        {m: frozenset(s["topics"]) for m, s in subs.items()},
        {m: partitions(s.get("owned_partitions", {})) for m, s in subs.items()},
    )


def tie_break_problems(vector: Vector, answer: Json) -> list[str]:
    """What an assignor's answer that differs from Kafka's only in tie-breaks must still
    share with Kafka's expected assignment (docs/vectors.md, "Explanations"): the same
    partitions assigned, each once and only to a subscriber of its topic (valid); no
    partition could move to a subscriber of its topic holding two fewer, and the same
    multiset of assignment sizes (balanced as Kafka's); and at least as many partitions
    kept from the assignment the members entered with (sticky as Kafka's). Empty when all
    hold."""
    subscribed, before = _assignor_view(vector)
    members = set(subscribed)
    mine = {m: partitions(answer["assignment"].get(m, {})) for m in members}
    kafka = {m: partitions(vector.expected["assignment"].get(m, {})) for m in members}
    problems = []
    if frozenset().union(*mine.values()) != frozenset().union(*kafka.values()):
        problems.append("assigns other partitions than Kafka's answer")
    if not is_valid(mine, subscribed):
        problems.append("is not valid")
    if not is_balanced(mine, subscribed):
        problems.append("is not balanced")
    if sorted(map(len, mine.values())) != sorted(map(len, kafka.values())):
        problems.append("has other assignment sizes than Kafka's answer")
    kept = sum(len(mine[m] & before[m]) for m in members)
    kafka_kept = sum(len(kafka[m] & before[m]) for m in members)
    if kept < kafka_kept:
        problems.append(f"keeps {kept} partitions where Kafka's answer keeps {kafka_kept}")
    return problems


def explanation_key(file_name: str, vector_id: str) -> str:
    """The key of a vector in ``explained.json``: file stem, colon, vector id."""
    return f"{file_name}:{vector_id}"


def run_vector(
    vector: Vector,
    explained: Mapping[str, Explanation],
    rules: Rules = DEFAULT_RULES,
    file_name: str = "",
    kafka_version: str = "4.3.0",
) -> Outcome:
    """Run one vector; a difference listed in ``explained`` (under
    ``explanation_key(file_name, vector.id)``) counts as explained — for an assignor, only
    while the answer keeps Kafka's validity, balance and stickiness (``tie_break_problems``)."""
    runner = RUNNERS.get(vector.kind)
    if not vector.expressible or runner is None:
        return Outcome(vector, NOT_EXPRESSIBLE, detail=vector.reason or "no runner for this kind")
    answer, failed = runner(vector.input, vector.expected, rules, kafka_version)
    detail = compare(vector.expected, answer, failed)
    if not detail:
        return Outcome(vector, PASS, answer)
    explanation = explained.get(explanation_key(file_name, vector.id))
    if explanation is None:
        return Outcome(vector, DIFFER, answer, detail)
    if vector.kind in ASSIGNOR_KINDS and "assignment" in vector.expected and not failed:
        problems = tie_break_problems(vector, answer)
        if problems:
            detail += "; explained as a tie-break, but the model's answer " + ", ".join(problems)
            return Outcome(vector, DIFFER, answer, detail, explanation)
    return Outcome(vector, EXPLAINED, answer, detail, explanation)


def run_files(
    files: list[VectorFile],
    explained: Mapping[str, Explanation],
    rules: Rules = DEFAULT_RULES,
    kafka_version: str | None = None,
) -> list[ClassResult]:
    """Every vector of every file, with the rules of the file's Kafka version — or of
    ``kafka_version`` (``Config.kafka_version``, "4.2", "4.3", "4.4") when given."""
    results = []
    for f in files:
        result = ClassResult(f)
        version = kafka_version or f.kafka_version
        result.outcomes.extend(run_vector(v, explained, rules, f.name, version) for v in f.vectors)
        results.append(result)
    return results


RULE_KINDS = (
    "reconcile",
    "consumer-heartbeat",
    "client-assignor",
    "consumer-membership",
    "classic-group",
)
"""Kinds whose runner calls the injected rules (``model.rules.Rules``): the only vectors a
mutant can change."""


def mutant_failures(
    files: list[VectorFile], explained: Mapping[str, Explanation], rules: Rules
) -> list[str]:
    """``FILE:ID`` of every vector of a rule-reading kind that passes (or is explained) under
    the default rules and differs under ``rules``."""
    failed = []
    for f in files:
        for v in f.vectors:
            if v.kind not in RULE_KINDS or not v.expressible:
                continue
            if run_vector(v, explained, rules, f.name, f.kafka_version).status != DIFFER:
                continue
            if run_vector(v, explained, DEFAULT_RULES, f.name, f.kafka_version).status != DIFFER:
                failed.append(explanation_key(f.name, v.id))
    return failed
