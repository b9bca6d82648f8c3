"""The replay of a client-layer BMC path (``invariants.z3.proof.bmc_clients``) through the
Python clients and coordinator: every state must be the path's (``bmc.ReplayDiverged``
otherwise). Its own module since it reads both the core's replay (``bmc``) and the client
layer, which ``bmc`` imports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from invariants.snapshot import client_view, project_key
from invariants.z3.proof.bmc import (
    ReplayDiverged,
    _tp,
    apply_step,
    replay_projection,
    replay_start,
    same_as_path,
)
from invariants.z3.proof.bmc_clients import ClientValue
from invariants.z3.proof.state import Concrete, Partition
from model.config import Config
from model.consumer import client as cl
from model.consumer import coordinator as co
from model.consumer.system import consumer_initial
from model.records import LEAVE_GROUP_MEMBER_EPOCH, OffsetCommitRequest
from model.status import ClientStatus, ErrorCode


def _value_of(
    client: Any,
    member: str,
    request: Any = None,
    response: Any = None,
    commit: str | None = None,
    group: Any = None,
) -> ClientValue:
    """A Python client as the path's ``ClientValue`` (replay partitions ``("p<i>", 0)``);
    a zombie as ``invariants.snapshot`` reads one: expired, alive, its member not in
    ``group``."""

    def ps(s: Any) -> frozenset[Partition]:
        return frozenset(("p", int(t[0][1:])) for t in s)

    return ClientValue(
        name=client.name,
        member=member,
        status=client.status.name,
        epoch=client.member_epoch,
        owns=ps(client.owned),
        revoking=ps(client.revoking),
        target=None if client.target is None else ps(client.target),
        request=(
            None
            if request is None
            else (
                request.member_epoch,
                None if request.topic_partitions is None else ps(request.topic_partitions),
            )
        ),
        response=(
            None
            if response is None
            else (
                response.member_epoch,
                None if response.assignment is None else ps(response.assignment),
            )
        ),
        commit=commit,
        zombie=(
            group is not None
            and client.expired
            and client.alive
            and client.member_id not in group.members
        ),
        callback=client.callback,
        lost_queued=client.lost_queued,
    )


def replay_clients(
    path: Any,
    rules: Any,
    base_config: Config,
    *,
    after_assignor: Callable[[Any], Any] | None = None,
) -> tuple[list[Concrete], list[Any]]:
    """Play a client-layer path through the Python clients (``rules``' client functions)
    and coordinator: each heartbeat is the one the client builds (its epoch and reported
    partitions must be the path's), sent with the path's subscription (replay topics) and
    answered by ``coordinator.handle_consumer_group_heartbeat`` installing the path's
    target; a reconciliation is the client's, its revocation commit delivered to
    ``coordinator.handle_offset_commit``. Returns the projections of the Python groups and
    the Python snapshots of every state; raises ``bmc.ReplayDiverged`` when a group or a
    client differs from the path's."""

    config = replace(base_config, rules=rules)
    group, topics = replay_start(path)
    by_name = {c.name: c for c in consumer_initial(base_config).clients}
    clients: dict[str, Any] = {}
    for v in path.clients[0]:
        c = replace(by_name[v.name], member_id=v.member)
        if c.status is ClientStatus.UNSUBSCRIBED:
            c = cl.subscribe(c)
        clients[v.member] = c
    commits: dict[str, OffsetCommitRequest] = {}
    flight: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    commit_answers: dict[str, Any] = {}

    def snapshot() -> Any:
        return project_key((group, topics, tuple(client_view(c) for c in clients.values())))

    out = [replay_projection(group, topics)]
    snaps = [snapshot()]
    for i, (family, params) in enumerate(path.steps):
        member = str(params["member"])
        client = clients[member]
        if family == "SendHeartbeat":
            new, req = rules.client_build_heartbeat(client, config)
            if new.expired and req.member_epoch == 0:
                new = replace(new, expired=False)
            clients[member], flight[member] = new, req
        elif family in ("ClientHeartbeat", "DeliverHeartbeat", "FencedHeartbeat"):
            if family != "DeliverHeartbeat":
                new, req = rules.client_build_heartbeat(client, config)
                if new.expired and req.member_epoch == 0:
                    new = replace(new, expired=False)
            else:
                new, req = client, flight.pop(member)
            owned = None if req.topic_partitions is None else frozenset(req.topic_partitions)
            listed: Any = params["owned"]
            want = None if params["owned_null"] else frozenset(_tp(str(p)) for p in listed)
            if req.member_epoch != params["epoch"] or owned != want:
                raise ReplayDiverged(
                    f"step {i + 1} ({family}): client {client.name} sends epoch "
                    f"{req.member_epoch}, owned {sorted(owned) if owned is not None else None}"
                    f" where the path has epoch {params['epoch']}, owned "
                    f"{sorted(want) if want is not None else None}"
                )
            responses: list[Any] = []
            group, _ = apply_step(
                group,
                topics,
                "DeliverMessage.heartbeat",
                dict(params),
                rules,
                base_config,
                after_assignor=after_assignor,
                request=req,
                responses=responses,
            )
            if family != "DeliverHeartbeat":
                new = rules.client_on_heartbeat_response(new, responses[0], config)
            else:
                answers[member] = responses[0]
            clients[member] = new
        elif family == "HeartbeatResponse":
            resp = answers.pop(member)
            clients[member] = rules.client_on_heartbeat_response(client, resp, config)
        elif family == "Reconcile":
            new, commit = rules.client_reconcile(client, config)
            if commit is not None:
                commits[member] = commit
            clients[member] = new
        elif family == "DeliverCommit":
            commit = commits.pop(member, None)
            parts: Any = params["partitions"]
            if (
                commit is None
                or commit.generation_id_or_member_epoch != params["epoch"]
                or commit.topics != frozenset(_tp(str(p)) for p in parts)
            ):
                raise ReplayDiverged(f"step {i + 1} ({family}): no such commit in flight")
            group, commit_answers[member] = co.handle_offset_commit(group, commit, config)
        elif family == "CommitResponse":
            resp = commit_answers.pop(member)
            clients[member] = cl.on_commit_response(client, resp, config)
        elif family == "LoseResponse":
            answers.pop(member)
            clients[member] = cl.disconnect(client, config)
        elif family == "Rejoin":
            clients[member] = cl.rejoin(client)
        elif family == "Leave":
            clients[member] = cl.leave(client, LEAVE_GROUP_MEMBER_EPOCH)
        elif family == "ReleaseAssignment":
            new, commit = cl.start_release(client, config)
            if commit is not None:
                raise ReplayDiverged(f"step {i + 1} ({family}): the release commits")
            clients[member] = new
        elif family == "PollTimerExpires":
            clients[member] = cl.poll_timer_expires(client)
        elif family == "Poll":
            clients[member] = cl.poll(client)
        elif family == "CompleteCallback":
            new, commit = rules.client_complete_callback(client, config)
            if commit is not None:
                raise ReplayDiverged(f"step {i + 1} ({family}): the callback's end commits")
            clients[member] = new
        elif family in ("ClientLeave", "StaleLeave"):
            new, req = rules.client_build_heartbeat(client, config)
            if req.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
                raise ReplayDiverged(
                    f"step {i + 1} ({family}): client {client.name} sends epoch "
                    f"{req.member_epoch}, not the leave's"
                )
            group, resp = co.handle_consumer_group_heartbeat(group, topics, req, config)
            if resp.error_code is not ErrorCode.NONE:
                raise ReplayDiverged(
                    f"step {i + 1} ({family}): the coordinator answers {resp.error_code.name}"
                )
            clients[member] = rules.client_on_heartbeat_response(new, resp, config)
        else:
            raise ValueError(f"the client replay drives no {family!r} step")
        now = replay_projection(group, topics)
        after = path.states[i + 1]
        same_as_path(i, family, now, after)
        for v in path.clients[i + 1]:
            got = _value_of(
                clients[v.member],
                v.member,
                flight.get(v.member),
                answers.get(v.member),
                "in flight"
                if v.member in commits
                else "answered"
                if v.member in commit_answers
                else None,
                group,
            )
            if got != v:
                raise ReplayDiverged(
                    f"step {i + 1} ({family}): the Python client reached {got.render()} "
                    f"where the path has {v.render()}"
                )
        out.append(now)
        snaps.append(snapshot())
    return out, snaps
