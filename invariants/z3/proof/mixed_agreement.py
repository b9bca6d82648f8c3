"""The mixed relation against the Python migration model on concrete steps, both ways.

:func:`check_step` pins the projection (``mixed_state.project``) of a model step's state
before, fixes the family's parameters to what the step did (:func:`parameters`: the
request's fields, the member a timer fires for, the coordinator's choices as the model
made them) and asks whether the family allows the projection of the state after
(``allowed``) and whether that is the family's only successor (``unique``). The
``ClassicGroup`` family, which does not follow the classic group's rules, is checked one
way only (``unique`` is None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import z3

from invariants.z3.proof.mixed_state import (
    MixedDomains,
    MixedSym,
    OutsideUniverse,
    domains_of,
    pin,
    project,
)
from invariants.z3.proof.mixed_transition import MixedOptions, families, family_of
from model import coordinator as co
from model.actions import Action, DeliverMessage, RebalanceTimeout, SessionTimeout
from model.classic.messages import UNKNOWN_MEMBER_ID, JoinGroupRequest
from model.classic.records import ClassicGroup
from model.config import Config
from model.migration import coordinator as mco
from model.migration.records import MixedState
from model.records import ConsumerGroupHeartbeatRequest, Group, Member


@dataclass(frozen=True)
class StepCheck:
    """One step's verdicts: the family, whether it allows the model's successor and
    whether that successor is its only one (None: not asked)."""

    family: str
    allowed: bool
    unique: bool | None


def _number(table: Mapping[str, int], name: str | None) -> int:
    """``name``'s number in ``table`` (0: none)."""
    if name is None:
        return 0
    if name not in table:
        raise OutsideUniverse(name)
    return table[name]


def _topics(m: Member | None, g: Group) -> frozenset[str]:
    return co.subscribed_topics(m, g) if m is not None else frozenset()


def parameters(
    pre: MixedState, action: Action, post: MixedState, d: MixedDomains, config: Config
) -> dict[str, Any]:
    """The family's parameters as the model step took them (by name; member ids as
    indices into the universe)."""
    ids = {m: i + 1 for i, m in enumerate(d.members)}

    def index(mid: str) -> int:
        return _number(ids, mid) - 1

    name = family_of(pre, action)
    group = pre.group
    if name in ("SessionTimeout", "RebalanceTimeout"):
        assert isinstance(action, SessionTimeout | RebalanceTimeout)
        return {"member": index(action.member_id)}
    assert isinstance(action, DeliverMessage)
    body = action.message.body
    if name in ("DeliverMessage.consumer_leave", "DeliverMessage.classic_leave"):
        assert isinstance(group, Group)
        gone = [mid for mid in group.members if mid not in post.group.members]
        return {"member": index(gone[0])}
    if name == "DeliverMessage.static_leave":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        return {"member": index(body.member_id)}
    if name == "DeliverMessage.consumer_join":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        out: dict[str, Any] = {
            "member": index(body.member_id),
            "instance": _number(d.instances, body.instance_id),
            "assignor": _number(d.assignors, body.server_assignor),
            "join": body.member_epoch == 0,
            "generation": 0,
            "fresh": False,
            "refused": False,
        }
        base = group
        if isinstance(group, ClassicGroup):
            out["fresh"] = mco.is_empty_classic(group)
            out["generation"] = group.generation_id
            if out["fresh"]:
                base = mco.new_consumer_group(group, config)
                out["refused"] = body.member_id not in post.group.members
            else:
                base = mco.bump_for_replacement(mco.from_classic_group(group), body.instance_id)
        assert isinstance(base, Group)
        old = base.members.get(body.member_id)
        holder = base.static_member_id(body.instance_id) if body.instance_id else None
        if old is None and holder is not None and body.member_epoch == 0:
            old = base.members[holder]
        new = body.subscribed_topic_names
        before = _topics(old, base)
        out["subscription_changed"] = (new if new is not None else before) != before
        return out
    assert name == "DeliverMessage.classic_join"
    assert isinstance(body, JoinGroupRequest)
    assert isinstance(group, Group)
    unknown = body.member_id == UNKNOWN_MEMBER_ID
    client = action.message.client
    new_id = f"{client}.m{pre.issued_member_ids.get(client, 0) + 1}"
    mid = new_id if unknown else body.member_id
    old = group.members.get(mid)
    holder = group.static_member_id(body.instance_id) if body.instance_id else None
    if old is None and holder is not None:
        old = group.members[holder]
    before = _topics(old, group)
    id_required = unknown and body.instance_id is None
    return {
        "member": index(new_id if unknown else body.member_id),
        "unknown": unknown,
        "new_id": index(new_id) if unknown else 0,
        "instance": _number(d.instances, body.instance_id),
        "supported": True,
        "subscription_changed": body.subscription.topics != before,
        "refused": not id_required and mid not in post.group.members,
    }


def check_step(
    pre: MixedState, action: Action, post: MixedState, config: Config, variant: str | None = None
) -> StepCheck:
    """The verdicts on one model step that changes the projection (module docstring)."""
    d = domains_of(config)
    o = MixedOptions.of(config, variant)
    name = family_of(pre, action)
    s0, s1 = MixedSym.fresh("a", d.members), MixedSym.fresh("b", d.members)
    (fam,) = families(s0, s1, d, o, (name,))
    solver = z3.Solver()
    solver.add(*pin(s0, project(pre), d), fam.formula)
    if name != "ClassicGroup":
        values = parameters(pre, action, post, d, config)
        assert set(values) == set(fam.params), (values, fam.params)
        solver.add(*[fam.params[k] == v for k, v in values.items()])
    pinned = z3.And(*pin(s1, project(post), d))
    allowed = solver.check(pinned) == z3.sat
    unique = None
    if name != "ClassicGroup":
        unique = solver.check(z3.Not(pinned)) == z3.unsat
    return StepCheck(name, allowed, unique)
