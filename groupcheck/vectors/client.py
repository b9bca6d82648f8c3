"""The ``consumer-membership`` kind: ``ConsumerMembershipManagerTest`` and
``ConsumerHeartbeatRequestManagerTest`` cases run against the model's consumer
(``model.consumer.client``: ``AbstractMembershipManager``, ``ConsumerMembershipManager`` and
``ConsumerHeartbeatRequestManager.HeartbeatState``).

A vector gives the consumer as the test builds it (``client``: its member id, instance id,
server assignor, rack, subscription, ``max.poll.interval.ms``, whether a rebalance listener
is registered and whether auto-commit runs before a revocation), then a list of steps, each
one thing the test does to the membership manager:

* ``join`` — ``subscribe()`` then poll: ``transitionToJoining``;
* ``response`` — ``onHeartbeatSuccess``/``onHeartbeatFailure`` with a ConsumerGroupHeartbeat
  response (``error``, ``member_id``, ``member_epoch``, ``assignment``: null when not sent);
* ``reconcile`` — ``maybeReconcile``: start applying the latest target, if one waits;
* ``heartbeat`` — ``onHeartbeatRequestGenerated`` after ``HeartbeatState.buildRequestData``:
  the request the consumer sends (compared field by field);
* ``callback_done`` — the application thread finishes the rebalance callback it runs;
* ``commit_done`` — the auto-commit before a revocation completes;
* ``leave`` — ``leaveGroup``/``leaveGroupOnClose``: the leave epoch (-1, or -2 for a static
  member that will come back; ``true``: the default for the instance id);
* ``fence`` — ``transitionToFenced``; ``fatal`` — ``transitionToFatal`` (the error named);
* ``listener`` — from now on a rebalance listener is registered (true) or not (false);
* ``poll_timer_expires`` — ``transitionToSendingLeaveGroup(dueToExpiredPollTimer=true)``;
  ``poll`` — the next poll of a stale member (``maybeRejoinStaleMember``).

After each step the consumer does at once what needs no one else: a callback its listener
does not see (no listener registered, or a revocation or loss of no partitions) completes
(``ConsumerMembershipManager.signalPartitionsRevoked``/``Lost``/``Assigned`` without a
listener), and what waited for it follows. A step's answer is the consumer after it —
``state``, ``member_epoch``, ``member_id``, ``assignment`` (the last reconciled assignment,
``currentAssignment``: what a heartbeat reports), ``owned`` (what the application consumes,
``SubscriptionState.assignedPartitions``), ``reconciling`` (a reconciliation in
progress), ``sends_heartbeats`` (not ``shouldSkipHeartbeat``), ``callbacks`` (the
listener calls started in it: method and partitions) — and, for a ``heartbeat`` step,
the ``request``. Only the fields a step expects are compared.
"""

from __future__ import annotations

from typing import Any

from groupcheck.vectors.coordinator import _dump, _norm
from model.config import ClientSpec, Config
from model.consumer import client as cl
from model.ids import EMPTY, Assignment
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    replace,
)
from model.rules import DEFAULT_RULES, Rules
from model.status import ClientStatus, ErrorCode

Json = dict[str, Any]
S = ClientStatus

CLIENT_KEYS = (
    "member_id",
    "instance_id",
    "server_assignor",
    "rack_id",
    "subscription",
    "regex",
    "rebalance_timeout_ms",
    "listener",
    "auto_commit",
)
"""What a ``consumer-membership`` vector's ``client`` may give."""
ACTIONS = (
    "join",
    "response",
    "reconcile",
    "heartbeat",
    "callback_done",
    "commit_done",
    "leave",
    "fence",
    "fatal",
    "poll_timer_expires",
    "poll",
    "listener",
)
"""The steps of a ``consumer-membership`` vector, one per step."""
MAX_SETTLE = 16
"""At most this many silent callbacks complete after one step."""


def _partitions(obj: Any) -> Assignment:
    return frozenset((t, p) for t, ps in obj.items() for p in ps)


def _json(a: Assignment | None) -> Json | None:
    if a is None:
        return None
    out: dict[str, list[int]] = {}
    for t, p in sorted(a):
        out.setdefault(t, []).append(p)
    return out


def config_for(raw: Json) -> Config:
    """The consumer's settings: callbacks as steps of their own (the test completes them),
    a commit before a revocation only with auto-commit, and its ``max.poll.interval.ms``
    (sent as ``RebalanceTimeoutMs``)."""
    return Config(
        kafka_version="4.3",
        name="consumer-membership",
        topics=(("topic", 1),),
        clients=(ClientSpec("client", ("topic",)),),
        callback_steps=True,
        commit_on_revoke=bool(raw.get("auto_commit", False)),
        rebalance_timeout_ms=raw.get("rebalance_timeout_ms", 300000),
    )


def new_client(raw: Json) -> Client:
    """The consumer as the test creates it: UNSUBSCRIBED, its own member id (KIP-1082)."""
    member_id = raw.get("member_id", "member")
    return Client(
        name=member_id,
        instance_id=raw.get("instance_id"),
        incarnation=0,
        member_id=member_id,
        alive=True,
        status=S.UNSUBSCRIBED,
        member_epoch=0,
        subscription=frozenset(raw.get("subscription", [])),
        server_assignor=raw.get("server_assignor"),
        rack=raw.get("rack_id"),
        regex=raw.get("regex"),
    )


class _Run:
    """One vector's consumer and what the runner tracks beside it."""

    def __init__(self, raw: Json, rules: Rules) -> None:
        self.config = config_for(raw)
        self.listener = bool(raw.get("listener", False))
        self.rules = rules
        self.client = new_client(raw)
        self.callbacks: list[list[Any]] = []
        self.callback_partitions: Assignment = EMPTY
        self.lost_partitions: Assignment = EMPTY

    def apply(self, new: Client) -> None:
        """Take the consumer after a model step; note a callback it started."""
        before, self.client = self.client, new
        if new.lost_queued and not before.lost_queued:
            self.lost_partitions = before.owned | before.revoking
        if new.callback is None or new.callback == before.callback:
            return
        if new.callback == cl.ON_PARTITIONS_REVOKED:
            self.callback_partitions = new.revoking
        elif new.callback == cl.ON_PARTITIONS_ASSIGNED:
            self.callback_partitions = (new.reconciling or EMPTY) - new.owned
        elif new.callback == cl.ON_PARTITIONS_LOST:
            lost_now = before.lost_queued and not new.lost_queued
            self.callback_partitions = (
                self.lost_partitions if lost_now else before.owned | before.revoking
            )
        else:  # the release before a leave
            self.callback_partitions = new.owned | new.revoking
        if self.listener and not self._silent():
            self.callbacks.append([self._listener_method(), _json(self.callback_partitions)])

    def _listener_method(self) -> str:
        name = self.client.callback
        if name == cl.RELEASE_ASSIGNMENT:
            # ``leaveGroup`` revokes an assignment it owns at a positive epoch, and calls
            # it lost when the member was fenced meanwhile (``AbstractMembershipManager``).
            return (
                cl.ON_PARTITIONS_REVOKED if self.client.member_epoch > 0 else cl.ON_PARTITIONS_LOST
            )
        return str(name)

    def _silent(self) -> bool:
        """A callback the listener does not see: no listener, or a revocation or loss of no
        partitions (``onPartitionsAssigned`` is called even with none)."""
        if not self.listener:
            return True
        return not self.callback_partitions and self.client.callback != cl.ON_PARTITIONS_ASSIGNED

    def complete(self) -> None:
        self.apply(self.rules.client_complete_callback(self.client, self.config)[0])

    def settle(self) -> None:
        """Complete the callbacks nobody sees, and start the release of a leave."""
        for _ in range(MAX_SETTLE):
            c = self.client
            if c.callback is not None and self._silent():
                self.complete()
            elif c.status is S.PREPARE_LEAVING and c.callback is None and c.reconciling is None:
                self.apply(cl.start_release(c, self.config)[0])
            else:
                return


def _response(raw: Json, client: Client) -> ConsumerGroupHeartbeatResponse:
    assignment = raw.get("assignment")
    return ConsumerGroupHeartbeatResponse(
        error_code=ErrorCode[raw.get("error", "NONE")],
        member_id=raw.get("member_id", client.member_id),
        member_epoch=raw.get("member_epoch", client.member_epoch),
        heartbeat_interval_ms=raw.get("heartbeat_interval_ms", 3000),
        assignment=None if assignment is None else _partitions(assignment),
    )


def request_json(req: ConsumerGroupHeartbeatRequest) -> Json:
    """A request's fields; a field not sent is null."""
    names = req.subscribed_topic_names
    return {
        "member_id": req.member_id,
        "member_epoch": req.member_epoch,
        "instance_id": req.instance_id,
        "rebalance_timeout_ms": req.rebalance_timeout_ms,
        "subscribed_topic_names": None if names is None else sorted(names),
        "subscribed_topic_regex": req.subscribed_topic_regex,
        "server_assignor": req.server_assignor,
        "rack_id": req.rack_id,
        "topic_partitions": _json(req.topic_partitions),
    }


def _step(run: _Run, step: Json) -> Json:
    """Apply one step; its extra answer (a heartbeat's request)."""
    c, config, rules = run.client, run.config, run.rules
    extra: Json = {}
    if "join" in step:
        run.apply(cl.subscribe(c))
    elif "response" in step:
        resp = _response(step["response"], c)
        run.apply(
            rules.client_on_heartbeat_response(replace(c, heartbeat_in_flight=True), resp, config)
        )
    elif "reconcile" in step:
        if c.status is S.RECONCILING and c.reconciling is None and c.target is not None:
            run.apply(rules.client_reconcile(c, config)[0])
    elif "heartbeat" in step:
        new, req = rules.client_build_heartbeat(c, config)
        run.apply(replace(new, heartbeat_in_flight=False))
        extra["request"] = request_json(req)
    elif "callback_done" in step:
        if c.callback is not None:
            run.complete()
    elif "commit_done" in step:
        run.apply(cl.on_commit_response(c, None, config))
    elif "listener" in step:
        run.listener = bool(step["listener"])
    elif "leave" in step:
        if c.status not in cl.IN_GROUP:  # the model's Leave guard (model.consumer.system)
            raise NotExpressible("leaveGroup outside the group is not a model action")
        epoch = step["leave"]
        if epoch is True:
            static = c.instance_id is not None
            epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH if static else LEAVE_GROUP_MEMBER_EPOCH
        run.apply(cl.leave(c, epoch))
    elif "fence" in step:
        run.apply(cl.on_heartbeat_error(c, ErrorCode.FENCED_MEMBER_EPOCH, config))
    elif "fatal" in step:
        run.apply(cl.on_heartbeat_error(c, ErrorCode[step["fatal"]], config))
    elif "poll_timer_expires" in step:
        run.apply(cl.poll_timer_expires(c))
    elif "poll" in step and c.status is S.STALE and c.callback is None and not c.lost_queued:
        run.apply(cl.poll(c))
    run.settle()
    return extra


class NotExpressible(Exception):
    """A step the model's consumer has no action for."""


def snapshot(run: _Run) -> Json:
    """The consumer's observable state after a step."""
    c = run.client
    return {
        "state": c.status.value,
        "member_epoch": _epoch(c),
        "member_id": c.member_id,
        "assignment": _json(c.owned | c.revoking),
        "owned": _json(c.owned),
        "reconciling": c.reconciling is not None,
        "callback": None if c.callback is None else run._listener_method(),
        "sends_heartbeats": c.status in cl.HEARTBEATING,
    }


def _epoch(c: Client) -> int:
    """``memberEpoch()``: the leave epoch while LEAVING (the model keeps it beside the
    epoch, ``Client.leave_epoch``), else the epoch the model's client holds."""
    if c.status is S.LEAVING:
        return c.leave_epoch
    return c.member_epoch


def run_consumer_membership(inp: Json, rules: Rules = DEFAULT_RULES) -> Json:
    """Every step's answer (``steps``: the consumer after it, the callbacks it started, a
    heartbeat's request)."""
    run = _Run(inp.get("client", {}), rules)
    answers: list[Json] = []
    for step in inp["steps"]:
        run.callbacks = []
        try:
            extra = _step(run, step)
        except NotExpressible as e:
            answers.append({"refused": str(e)})
            break
        answers.append({**snapshot(run), "callbacks": run.callbacks, **extra})
    return {"steps": answers}


def compare_membership(expected: Json, answer: Json) -> list[str]:
    """What differs: each step's expected fields, each compared whole (a request field by
    field; partition order does not count, an empty topic equals a missing one)."""
    problems: list[str] = []
    for i, (exp, got) in enumerate(zip(expected.get("steps", []), answer["steps"], strict=False)):
        for key, value in exp.items():
            where = f"steps[{i}].{key}"
            if key == "request" and isinstance(got.get(key), dict):
                for field, v in value.items():
                    problems += _differs(f"{where}.{field}", v, got[key].get(field, _MISSING))
            else:
                problems += _differs(where, value, got.get(key, _MISSING))
    return problems


_MISSING = "(no such field)"


def _differs(where: str, expected: Any, got: Any) -> list[str]:
    if where.endswith(".callbacks") and isinstance(expected, list) and isinstance(got, list):
        same = len(expected) == len(got) and all(
            e[0] == g[0] and _norm(e[1]) == _norm(g[1]) for e, g in zip(expected, got, strict=True)
        )  # in order: the listener's calls are a sequence
        return [] if same else [f"{where}: expected {expected}, model {got}"]
    if _norm(expected) != _norm(got):
        return [f"{where}: expected {_dump(expected)}, model {_dump(got)}"]
    return []
