"""The ``consumer-heartbeat`` kind: ``GroupMetadataManagerTest``'s consumer-group cases run
against the model's coordinator (``model.consumer.coordinator.handle_consumer_group_heartbeat``).

A vector gives the group as the test loads it (its records replayed: group and assignment
epochs, members with their current assignments, the target assignment), then a list of
steps — a ConsumerGroupHeartbeat request, or a session or rebalance timeout — with what
each step answers, and the group's state after the last one. The tests mock the server
assignor (``MockPartitionAssignor``: it answers the assignment it was last given); a step's
``assignor_result`` gives that answer, and the model's target computation is replaced by
one that installs it (the rest of the heartbeat — validation, member resolution, epoch
bump, reconciliation, response — is the model's own).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from model.config import Config, with_kafka_version
from model.consumer import coordinator
from model.ids import Assignment, FrozenMap, TopicPartition
from model.presets import TINY
from model.records import (
    ConsumerGroupHeartbeatRequest,
    Group,
    Member,
    TopicMetadata,
    static_member_index,
)
from model.rules import DEFAULT_RULES, Rules
from model.status import ErrorCode, MemberState

Json = dict[str, Any]


_CONFIG_KEYS = {
    "max_group_size": "max_group_size",
    "server_assignors": "server_assignors",
    "heartbeat_interval_ms": "heartbeat_interval_ms",
    "assignment_interval_ms": "assignment_interval_ms",
}
"""Vector ``config`` keys → ``Config`` options (the Kafka settings the tests change)."""


def model_version(kafka_version: str) -> str:
    """The model's version setting for a vector file's Kafka version ("4.3.0" → "4.3")."""
    return ".".join(kafka_version.split(".")[:2])


def config_for(inp: Json, kafka_version: str, rules: Rules = DEFAULT_RULES) -> Config:
    """The model's config for a vector: the Kafka version's rules, then the settings the
    test changes (``GroupMetadataManagerTestContext.Builder.withConfig``), with ``rules``
    (a mutant's, or the default)."""
    changes: dict[str, Any] = {"protocol": "consumer", "rules": rules}
    for key, value in inp.get("config", {}).items():
        option = _CONFIG_KEYS[key]
        changes[option] = tuple(value) if isinstance(value, list) else value
    return with_kafka_version(TINY, model_version(kafka_version), **changes)


def _parts(raw: Mapping[str, Any], epoch: int) -> dict[TopicPartition, int]:
    """Partitions as ``{"topic": [0, 1]}`` (each at ``epoch``) or ``{"topic": {"0": 5}}``."""
    out: dict[TopicPartition, int] = {}
    for topic, ps in raw.items():
        if isinstance(ps, dict):
            out.update({(topic, int(p)): e for p, e in ps.items()})
        else:
            out.update({(topic, p): epoch for p in ps})
    return out


def parts(raw: Mapping[str, list[int]] | None) -> Assignment | None:
    """``{"topic": [0, 1]}`` → frozenset; None stays None (a field not sent)."""
    if raw is None:
        return None
    return frozenset((t, p) for t, ps in raw.items() for p in ps)


def as_json(tps: Assignment) -> Json:
    """frozenset of (topic, partition) → ``{"topic": [sorted partitions]}``."""
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out


def load_member(mid: str, raw: Json, config: Config) -> Member:
    """A member as the test replays it (``ConsumerGroupMember.Builder`` defaults: epoch 0,
    previous -1, STABLE, nothing assigned)."""
    epoch = raw.get("member_epoch", 0)
    assigned = _parts(raw.get("assigned_partitions", {}), epoch)
    pending = _parts(raw.get("partitions_pending_revocation", {}), epoch)
    return Member(
        member_id=mid,
        instance_id=raw.get("instance_id"),
        member_epoch=epoch,
        previous_member_epoch=raw.get("previous_member_epoch", -1),
        state=MemberState[raw.get("state", "STABLE")],
        assigned_partitions=frozenset(assigned),
        partitions_pending_revocation=frozenset(pending),
        subscribed_topic_names=frozenset(raw.get("subscribed_topic_names", [])),
        server_assignor=raw.get("server_assignor"),
        rebalance_timeout_ms=raw.get("rebalance_timeout_ms", -1),
        rack_id=raw.get("rack_id"),
        subscribed_topic_regex=raw.get("subscribed_topic_regex"),
        assignment_epochs=FrozenMap(sorted({**pending, **assigned}.items()))
        if config.assignment_epochs
        else FrozenMap(),
    )


def load_group(raw: Json | None, config: Config) -> Group:
    """The group the test's replayed records build, as a coordinator loads it
    (``model.consumer.coordinator.rebuild_group``: partition epochs from the members' current
    assignments, the static-member index from their instance ids); a new group when the
    test starts with none (``{"absent": true}``: no group of this id, which even a
    heartbeat at a non-zero epoch does not create)."""
    if raw is None:
        return coordinator.new_group(config)
    if raw.get("absent"):
        # No group of this id: the model's record of a deleted group answers as Kafka does
        # for an unknown group id (``Group.deleted``).
        return replace(coordinator.new_group(config), deleted=True)
    members = FrozenMap(
        sorted((m, load_member(m, r, config)) for m, r in raw.get("members", {}).items())
    )
    target = FrozenMap(
        sorted((m, frozenset(parts(a) or ())) for m, a in raw.get("target_assignment", {}).items())
    )
    group = Group(
        group_epoch=raw["group_epoch"],
        assignment_epoch=raw["assignment_epoch"]
        if "assignment_epoch" in raw
        else raw["group_epoch"],
        target_assignment=target,
        members=members,
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
        resolved_regexes=FrozenMap(
            sorted((k, frozenset(v)) for k, v in raw.get("resolved_regexes", {}).items())
        ),
        static_members=static_member_index(members),
    )
    return coordinator.rebuild_group(group, config)


def request(raw: Json) -> ConsumerGroupHeartbeatRequest:
    """A ConsumerGroupHeartbeat request; a field left out is not sent."""
    names = raw.get("subscribed_topic_names")
    return ConsumerGroupHeartbeatRequest(
        member_id=raw.get("member_id", ""),
        member_epoch=raw["member_epoch"],
        instance_id=raw.get("instance_id"),
        rebalance_timeout_ms=raw.get("rebalance_timeout_ms", -1),
        subscribed_topic_names=None if names is None else frozenset(names),
        server_assignor=raw.get("server_assignor"),
        topic_partitions=parts(raw.get("topic_partitions")),
        subscribed_topic_regex=raw.get("subscribed_topic_regex"),
        rack_id=raw.get("rack_id"),
    )


def mock_assignor(answer: Mapping[str, Assignment], runs: list[int]) -> Any:
    """``MockPartitionAssignor``: the target is the prepared answer, an empty assignment for
    a member it does not name (``TargetAssignmentBuilder`` gives every member an entry);
    each run appends the group epoch to ``runs``."""

    def compute(group: Group, topics: Mapping[str, TopicMetadata], default: str) -> Group:
        runs.append(group.group_epoch)
        target = FrozenMap((m, frozenset(answer.get(m, frozenset()))) for m in group.members)
        return replace(
            group,
            assignment_epoch=group.group_epoch,
            target_assignment=target,
            target_assignor=default,
        )

    return compute


def member_json(member: Member) -> Json:
    """The fields of a member a vector may expect."""
    return {
        "state": member.state.value,
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "instance_id": member.instance_id,
        "subscribed_topic_names": sorted(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex,
        "server_assignor": member.server_assignor,
        "rebalance_timeout_ms": member.rebalance_timeout_ms,
        "assigned_partitions": as_json(member.assigned_partitions),
        "partitions_pending_revocation": as_json(member.partitions_pending_revocation),
        "assignment_epochs": epochs_json(member.assignment_epochs),
    }


def epochs_json(epochs: Mapping[TopicPartition, int]) -> Json:
    """KIP-1251 assignment epochs: ``{"topic": {"0": 5}}``."""
    out: dict[str, dict[str, int]] = {}
    for (t, p), e in sorted(epochs.items()):
        out.setdefault(t, {})[str(p)] = e
    return out


def group_json(group: Group) -> Json:
    """The state of the group a vector may expect."""
    return {
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "status": coordinator.group_status(group).value,
        "target_assignment": {m: as_json(a) for m, a in sorted(group.target_assignment.items())},
        "members": {m: member_json(x) for m, x in sorted(group.members.items())},
    }


def run_consumer_heartbeat(inp: Json, kafka_version: str, rules: Rules = DEFAULT_RULES) -> Json:
    """Every step of the vector on the model's coordinator (under ``rules``); each step's
    response (or the error it answered) and the group afterwards."""
    config = config_for(inp, kafka_version, rules)
    topics = {
        t["name"]: TopicMetadata(topic_id=t["id"], partitions=t["partitions"])
        for t in inp["topics"]
    }
    raw_group = inp.get("group")
    group = load_group(raw_group, config)
    # The test's clock (``MockTime``, 1000 ms at the start) and the Kafka timestamp of the
    # last target computation (0: unknown): the model's logical ``assignment_timestamp``
    # and ``assignment_interval_elapsed`` are derived from them before each step.
    now = inp.get("time_ms", 1000)
    stamp = (raw_group or {}).get("assignment_timestamp_ms", 0)
    interval = config.effective_assignment_interval_ms()
    answer: dict[str, Assignment] = {}
    responses: list[Json] = []
    for step in inp["steps"]:
        now += step.get("sleep_ms", 0)
        if "assignor_result" in step:
            answer = {m: parts(a) or frozenset() for m, a in step["assignor_result"].items()}
        runs: list[int] = []
        rules = replace(config.rules, compute_target_assignment=mock_assignor(answer, runs))
        cfg = replace(config, rules=rules)
        group = replace(
            group,
            assignment_timestamp=1 if stamp else 0,
            assignment_interval_elapsed=bool(stamp) and now >= stamp + interval,
        )
        group, response = _step(group, topics, step, cfg)
        if runs:
            stamp = now
        responses.append({**response, "group": group_json(group)})
    return {"responses": responses, "group": group_json(group)}


def _step(
    group: Group, topics: Mapping[str, TopicMetadata], step: Json, config: Config
) -> tuple[Group, Json]:
    """One step: a timer firing or the regular expressions resolved (both answer ``{}``),
    or a heartbeat and its response."""
    if step.get("resolve_regexes"):
        return config.rules.resolve_regular_expressions(group, topics, config), {}
    if "session_timeout" in step:
        return coordinator.session_timeout(group, step["session_timeout"], config), {}
    if "rebalance_timeout" in step:
        return coordinator.rebalance_timeout(group, step["rebalance_timeout"], config), {}
    group, resp = coordinator.handle_consumer_group_heartbeat(
        group, topics, request(step["request"]), config
    )
    if resp.error_code is not ErrorCode.NONE:
        return group, {"error": resp.error_code.name}
    return group, {
        "error": "NONE",
        "member_id": resp.member_id,
        "member_epoch": resp.member_epoch,
        "heartbeat_interval_ms": resp.heartbeat_interval_ms,
        "assignment": None if resp.assignment is None else as_json(resp.assignment),
    }


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        items = {k: _norm(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v not in ({}, [])}
    if isinstance(value, list):
        return sorted((_norm(v) for v in value), key=repr)
    return value


def _subset_problems(where: str, expected: Any, got: Any) -> list[str]:
    """Where ``got`` does not have what ``expected`` says: objects compared on the keys
    ``expected`` names (a member or partition map compared whole), other values after
    normalisation (partition order does not count, an empty topic equals a missing one)."""
    if isinstance(expected, dict) and isinstance(got, dict) and not _whole(where):
        out = []
        for key, value in expected.items():
            out += _subset_problems(f"{where}.{key}", value, got.get(key))
        return out
    if _norm(expected) != _norm(got):
        return [f"{where}: expected {_dump(expected)}, model {_dump(got)}"]
    return []


_WHOLE = (
    "assignment",
    "assigned_partitions",
    "partitions_pending_revocation",
    "target_assignment",
    "assignment_epochs",
)


def _whole(where: str) -> bool:
    return where.rsplit(".", 1)[-1] in _WHOLE


def _dump(value: Any) -> str:
    return json.dumps(_norm(value), sort_keys=True, separators=(",", ":"))


def compare_steps(expected: Json, answer: Json) -> list[str]:
    """What differs: each step's expected response fields (and the group after it, when the
    step expects one), then the expected group after the last step."""
    problems: list[str] = []
    for i, (exp, got) in enumerate(
        zip(expected.get("responses", []), answer["responses"], strict=False)
    ):
        where = f"responses[{i}]"
        fields = {k: v for k, v in exp.items() if k != "group"}
        problems += _subset_problems(where, fields, got)
        if "group" in exp:
            problems += _group_problems(f"{where}.group", exp["group"], got["group"])
    return problems + _group_problems("group", expected.get("group", {}), answer["group"])


def _group_problems(where: str, expected: Json, got: Json) -> list[str]:
    """The group fields ``expected`` names; ``absent_members`` must not be members."""
    fields = {k: v for k, v in expected.items() if k != "absent_members"}
    problems = _subset_problems(where, fields, got)
    for mid in expected.get("absent_members", []):
        if mid in got["members"]:
            problems.append(f"{where}.members: {mid} expected gone, model keeps it")
    return problems
