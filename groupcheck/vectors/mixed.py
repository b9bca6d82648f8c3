"""The ``classic-group`` kind: ``GroupMetadataManagerTest``'s classic-group and migration
cases run against the model's coordinators through ``model.migration.system.step``, which
hands a request to the classic coordinator (``model.classic.coordinator``) while the group
is a classic group, and to the consumer group's (``model.consumer.coordinator``, with the classic
members' handlers of ``model.migration.coordinator``) while it is a consumer group —
converting the group on the way, as ``GroupMetadataManager`` does.

A vector gives the group as the test's setup leaves it (loaded: a classic group's members
with their subscriptions and assignments, or a consumer group in the ``consumer-heartbeat``
shape whose members may carry classic metadata), then steps: a JoinGroup, SyncGroup,
Heartbeat, LeaveGroup (a batch is its members' requests one after the other), a
ConsumerGroupHeartbeat, or a session or rebalance timer. Each step expects every response
the coordinator sends in it — the held JoinGroups a completed join phase answers, the held
SyncGroups a leader's assignment answers — and may expect the group afterwards.

The clients are stand-ins, as in ``groupcheck.validate.mixed_coordinator`` (whose
``Ids`` pairs the coordinator-issued member ids with the vector's names for them): a
response's member id the vector names (``"member_id": "leader"``) is paired with the one
the model issued on first sight, and later requests and expected values use the name.

The module is the mixed family's own (``tests/reports/test_family_registry.py``,
``EXCLUDED``): its states are ``model.migration.records.MixedState``, whose group is a
classic or a consumer group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from groupcheck.validate.mixed_coordinator import Ids, stand_in
from groupcheck.vectors.coordinator import (
    as_json,
    group_json,
    load_group,
    mock_assignor,
    model_version,
    parts,
    request,
)
from model.actions import DeliverMessage, RebalanceTimeout, SessionTimeout
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicGroup, ClassicMember, ReplyTo, new_classic_group
from model.config import Config, with_kafka_version
from model.ids import EMPTY, Assignment, FrozenMap
from model.migration import system as mixed_system
from model.migration.records import AnyClient, MixedState
from model.presets import TINY
from model.records import (
    ClassicMemberMetadata,
    ConsumerGroupHeartbeatResponse,
    Group,
    Message,
    TopicMetadata,
)
from model.rules import DEFAULT_RULES, Rules
from model.status import ClassicGroupStatus, ErrorCode

Json = dict[str, Any]

CONFIG_KEYS = ("migration_policy", "max_group_size", "server_assignors", "heartbeat_interval_ms")
"""The settings a ``classic-group`` vector may give (``Config`` options of the same name)."""

REQUESTS = ("join", "sync", "heartbeat", "leave", "consumer_heartbeat")
TIMERS = ("session_timeout", "rebalance_timeout")
STEP_KEYS = {*REQUESTS, *TIMERS, "client", "assignor_result"}

DEFAULT_PROTOCOLS = ("range",)
"""The assignor a JoinGroup names when the vector gives none (the tests'
``withDefaultProtocolTypeAndProtocols``)."""


def config_for(inp: Json, kafka_version: str, rules: Rules = DEFAULT_RULES) -> Config:
    """A mixed config with the file's Kafka version's rules, Kafka's static replacement
    (``classic_replaces_live_holder``, no bump on a converting replacement:
    ``replacement_bumps_group_epoch`` off) and the vector's settings."""
    # The config's clients are not used: the vector's stand-ins are.
    clients = tuple(replace(c, group_protocol="classic") for c in TINY.clients)
    # Kafka's rule for a classic static member replacing a consumer-protocol holder that
    # has not left (docs/fidelity.md V10), and for the join converting a classic group
    # that replaces a holder (no bump, V13): the model's explorations keep their own.
    changes: dict[str, Any] = {
        "protocol": "mixed",
        "rules": rules,
        "clients": clients,
        "classic_replaces_live_holder": True,
        "replacement_bumps_group_epoch": False,
    }
    for key, value in inp.get("config", {}).items():
        changes[key] = tuple(value) if isinstance(value, list) else value
    return with_kafka_version(TINY, model_version(kafka_version), **changes)


def _reply(client: str) -> ReplyTo:
    return ReplyTo(client, 0, 0)


def _subscription(raw: Json) -> ClassicSubscription:
    return ClassicSubscription(
        topics=frozenset(raw.get("topics", [])),
        owned_partitions=parts(raw.get("owned")) or EMPTY,
        generation_id=raw.get("generation", -1),
    )


def load_classic_group(raw: Json) -> ClassicGroup:
    """A classic group as the test's setup leaves it: EMPTY, STABLE or (after a join phase
    the setup completed) COMPLETING_REBALANCE, at its generation, with its protocol, leader
    and members (protocols, subscription, assignment; ``client`` names the process the
    member's responses go to)."""
    members = FrozenMap(
        (
            mid,
            ClassicMember(
                member_id=mid,
                instance_id=m.get("instance_id"),
                protocols=tuple(m.get("protocols", DEFAULT_PROTOCOLS)),
                subscription=_subscription(m),
                rebalance_timeout_ms=m.get("rebalance_timeout_ms", 10000),
                assignment=parts(m.get("assignment")) or EMPTY,
                process=_reply(m.get("client", mid)),
            ),
        )
        for mid, m in raw.get("members", {}).items()
    )
    status = ClassicGroupStatus[raw.get("status", "STABLE" if members else "EMPTY")]
    # A group loaded in its SyncGroup phase awaits every member's SyncGroup, as
    # ``completeClassicGroupJoin`` leaves it (``addPendingSyncMember`` per member).
    syncing = status is ClassicGroupStatus.COMPLETING_REBALANCE
    return replace(
        new_classic_group(),
        status=status,
        generation_id=raw.get("generation_id", 0),
        protocol_name=raw.get("protocol_name"),
        leader_id=raw.get("leader"),
        members=members,
        pending_sync=frozenset(members) if syncing else frozenset(),
    )


def load_consumer_group(raw: Json, config: Config) -> Group:
    """A consumer group in the ``consumer-heartbeat`` shape; a member with ``classic``
    (its ``protocols``) is a classic member (``ConsumerGroupMember.classicMemberMetadata``)."""
    group = load_group(raw, config)
    members = group.members
    for mid, m in raw.get("members", {}).items():
        if "classic" in m:
            meta = ClassicMemberMetadata(
                supported_protocols=tuple(m["classic"].get("protocols", DEFAULT_PROTOCOLS)),
                process=(m.get("client", mid), 0),
            )
            members = members.set(mid, replace(members[mid], classic=meta))
    return replace(group, members=members)


def _clients(inp: Json) -> dict[str, AnyClient]:
    """A stand-in client per process the vector names: classic unless it sends
    ConsumerGroupHeartbeats."""
    families: dict[str, str] = {}
    group = inp.get("group") or {}
    for mid, m in group.get("members", {}).items():
        consumer = group.get("type") == "consumer" and "classic" not in m
        families.setdefault(m.get("client", mid), "consumer" if consumer else "classic")
    for step in inp["steps"]:
        if "client" in step:
            fam = "consumer" if "consumer_heartbeat" in step else "classic"
            families[step["client"]] = fam
    out: dict[str, AnyClient] = {}
    for name, fam in families.items():
        probe = Message(name, 0, 0, True, HeartbeatRequest("", -1, None))
        out[name] = stand_in(name, fam, probe)
    return out


def _classic_request(kind: str, raw: Json, ids: Ids, group: object) -> object:
    member = ids.model(raw.get("member_id", ""))
    instance = raw.get("instance_id")
    if kind == "join":
        return JoinGroupRequest(
            member_id=member,
            instance_id=instance,
            protocols=tuple(raw.get("protocols", DEFAULT_PROTOCOLS)),
            subscription=_subscription(raw),
            rebalance_timeout_ms=raw.get("rebalance_timeout_ms", 10000),
            session_timeout_ms=raw.get("session_timeout_ms", 5000),
            require_known_member_id=raw.get("require_known_member_id", True),
        )
    if kind == "sync":
        # The model's SyncGroup always names its protocol (v5+); Kafka checks the name only
        # when sent, so a vector leaving it out sends the group's.
        name = raw.get("protocol_name", getattr(group, "protocol_name", None))
        given = FrozenMap(
            (ids.model(k), parts(v) or EMPTY) for k, v in raw.get("assignments", {}).items()
        )
        return SyncGroupRequest(
            member_id=member,
            generation_id=raw["generation_id"],
            instance_id=instance,
            protocol_name=name,
            assignments=given,
        )
    if kind == "heartbeat":
        return HeartbeatRequest(member, raw["generation_id"], instance)
    return LeaveGroupRequest(member, instance)


def _response_json(to: str, body: object, ids: Ids) -> Json:
    """A response as a vector expects it (member ids as the vector names them)."""
    if isinstance(body, ConsumerGroupHeartbeatResponse):
        out: Json = {"to": to, "api": "consumer_heartbeat", "error": body.error_code.name}
        if body.error_code is ErrorCode.NONE:
            out["member_id"] = ids.capture(body.member_id or "")
            out["member_epoch"] = body.member_epoch
            out["assignment"] = None if body.assignment is None else as_json(body.assignment)
        return out
    error = getattr(body, "error_code", ErrorCode.NONE)
    if isinstance(body, JoinGroupResponse):
        return {
            "to": to,
            "api": "join",
            "error": error.name,
            "member_id": ids.capture(body.member_id),
            "generation_id": body.generation_id,
            "protocol_name": body.protocol_name,
            "leader": ids.capture(body.leader) if body.leader else "",
            "members": sorted(ids.capture(m.member_id) for m in body.members),
        }
    if isinstance(body, SyncGroupResponse):
        out = {"to": to, "api": "sync", "error": error.name}
        if error is ErrorCode.NONE:
            out["protocol_name"] = body.protocol_name
            out["assignment"] = as_json(body.assignment)
        return out
    api = "heartbeat" if isinstance(body, HeartbeatResponse) else "leave"
    assert isinstance(body, HeartbeatResponse | LeaveGroupResponse)
    return {"to": to, "api": api, "error": error.name}


def _pair(sent: Sequence[tuple[str, object]], expected: list[Json], ids: Ids) -> None:
    """Pair the member ids the model issued with the vector's names for them: the n-th
    response to a client with the n-th the step expects for it."""
    seen: dict[str, int] = {}
    by_client: dict[str, list[Json]] = {}
    for exp in expected:
        by_client.setdefault(exp.get("to", ""), []).append(exp)
    for to, body in sent:
        n = seen.get(to, 0)
        seen[to] = n + 1
        wanted = by_client.get(to, [])
        mid = getattr(body, "member_id", "")
        if n < len(wanted) and isinstance(wanted[n].get("member_id"), str) and mid:
            ids.pair(mid, wanted[n]["member_id"])


def classic_group_json(group: ClassicGroup, ids: Ids) -> Json:
    """The state of a classic group a vector may expect."""
    return {
        "type": "classic",
        "status": group.status.value,
        "generation_id": group.generation_id,
        "protocol_name": group.protocol_name,
        "leader": ids.capture(group.leader_id) if group.leader_id else None,
        "members": sorted(ids.capture(m) for m in group.members),
        "pending_members": sorted(ids.capture(m) for m in group.pending_members),
        "assignments": {ids.capture(m): as_json(x.assignment) for m, x in group.members.items()},
    }


def any_group_json(group: ClassicGroup | Group, ids: Ids) -> Json:
    """A classic group's state, or a consumer group's (``coordinator.group_json``, member
    ids as the vector names them, and ``classic_members``)."""
    if isinstance(group, ClassicGroup):
        return classic_group_json(group, ids)
    raw = group_json(group)
    return {
        "type": "consumer",
        **raw,
        "members": {ids.capture(m): v for m, v in raw["members"].items()},
        "target_assignment": {ids.capture(m): v for m, v in raw["target_assignment"].items()},
        "classic_members": sorted(
            ids.capture(m) for m, x in group.members.items() if x.classic is not None
        ),
    }


def run_classic_group(
    inp: Json, expected: Json, kafka_version: str, rules: Rules = DEFAULT_RULES
) -> Json:
    """Every step of the vector through ``model.migration.system.step``: the responses
    sent in each step and the group afterwards."""
    config = config_for(inp, kafka_version, rules)
    topics = FrozenMap(
        (t["name"], TopicMetadata(topic_id=t["id"], partitions=t["partitions"]))
        for t in inp.get("topics", [])
    )
    raw = inp.get("group")
    group: ClassicGroup | Group
    if raw is None:
        group = new_classic_group()
    elif raw.get("type") == "consumer":
        group = load_consumer_group(raw, config)
    else:
        group = load_classic_group(raw)
    clients = _clients(inp)
    state = MixedState(group=group, topics=topics, clients=tuple(clients.values()), network=())
    ids = Ids()
    answer: dict[str, Assignment] = {}
    out: list[Json] = []
    wanted = expected.get("steps", [])
    for i, step in enumerate(inp["steps"]):
        if "assignor_result" in step:
            # The answer names members as the vector does; a member id the model issued
            # is read through its pairing.
            answer = {
                ids.model(m): parts(a) or frozenset() for m, a in step["assignor_result"].items()
            }
        runs: list[int] = []
        cfg = replace(
            config,
            rules=replace(config.rules, compute_target_assignment=mock_assignor(answer, runs)),
        )
        state = _step(state, step, ids, cfg)
        sent = [(m.client, m.body) for m in state.network if not m.to_coordinator]
        state = replace(state, network=())
        exp = wanted[i] if i < len(wanted) else {}
        _pair(sent, exp.get("responses", []), ids)
        out.append(
            {
                "responses": [_response_json(to, body, ids) for to, body in sent],
                "group": any_group_json(state.group, ids),
            }
        )
    return {"steps": out, "group": any_group_json(state.group, ids)}


def _step(state: MixedState, step: Json, ids: Ids, config: Config) -> MixedState:
    for timer in TIMERS:
        if timer in step:
            names = step[timer] if isinstance(step[timer], list) else [step[timer]]
            for name in names:
                action = (SessionTimeout if timer == "session_timeout" else RebalanceTimeout)(
                    ids.model(name)
                )
                state = mixed_system.step(state, action, config)
            return state
    kind = next(k for k in REQUESTS if k in step)
    client = step["client"]
    raws = step[kind]
    for raw in raws if isinstance(raws, list) else [raws]:
        body: object
        if kind == "consumer_heartbeat":
            body = request({**raw, "member_id": ids.model(raw.get("member_id", ""))})
        else:
            body = _classic_request(kind, raw, ids, state.group)
        message = Message(client, 0, 0, True, body)  # type: ignore[arg-type]
        # The responses to a batch's earlier requests stay in the network with this one.
        state = mixed_system.step(
            replace(state, network=(*state.network, message)), DeliverMessage(message), config
        )
    return state


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        items = {k: _norm(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v not in ({}, [])}
    if isinstance(value, list):
        return sorted((_norm(v) for v in value), key=repr)
    return value


_WHOLE = ("assignment", "assignments", "assigned_partitions", "target_assignment", "members")


def _subset(where: str, expected: Any, got: Any) -> list[str]:
    """``expected``'s keys in ``got`` (partition maps, member lists compared whole)."""
    if (
        isinstance(expected, dict)
        and isinstance(got, dict)
        and where.rsplit(".", 1)[-1] not in _WHOLE
    ):
        out = []
        for key, value in expected.items():
            out += _subset(f"{where}.{key}", value, got.get(key))
        return out
    if isinstance(expected, dict) and isinstance(got, dict) and where.endswith("members"):
        # A consumer group's members: the names compared whole, each member's fields given.
        if sorted(expected) != sorted(got):
            return [f"{where}: expected {sorted(expected)}, model {sorted(got)}"]
        out = []
        for key, value in expected.items():
            out += _subset(f"{where}[{key}]", value, got.get(key))
        return out
    if _norm(expected) != _norm(got):
        return [f"{where}: expected {_dump(expected)}, model {_dump(got)}"]
    return []


def _dump(value: Any) -> str:
    return json.dumps(_norm(value), sort_keys=True, separators=(",", ":"))


def compare_classic(expected: Json, answer: Json) -> list[str]:
    """What differs: per step, the responses sent (as many to each client as expected, each
    with the fields given) and the group after it when given; then the final group."""
    problems: list[str] = []
    for i, (exp, got) in enumerate(zip(expected.get("steps", []), answer["steps"], strict=False)):
        where = f"steps[{i}]"
        if "responses" in exp:
            problems += _responses(where, exp["responses"], got["responses"])
        if "group" in exp:
            problems += _subset(f"{where}.group", exp["group"], got["group"])
    if "group" in expected:
        problems += _subset("group", expected["group"], answer["group"])
    return problems


def _responses(where: str, expected: list[Json], got: list[Json]) -> list[str]:
    def per_client(rs: list[Json]) -> Mapping[str, list[Json]]:
        out: dict[str, list[Json]] = {}
        for r in rs:
            out.setdefault(r.get("to", ""), []).append(r)
        return out

    want, have = per_client(expected), per_client(got)
    problems = []
    for to in sorted(set(want) | set(have)):
        w, h = want.get(to, []), have.get(to, [])
        if len(w) != len(h):
            problems.append(f"{where}.responses to {to}: expected {_dump(w)}, model {_dump(h)}")
            continue
        for n, (a, b) in enumerate(zip(w, h, strict=True)):
            problems += _subset(f"{where}.responses[{to}#{n}]", a, b)
    return problems
