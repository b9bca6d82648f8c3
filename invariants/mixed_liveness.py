"""The mixed family's facets of ``invariants.liveness`` (KIP-848 "Online Migration"): its
"converged" (registered in ``invariants.families.CONVERGED``) and the witnesses of a
group converted between the protocols. A mixed state is read through the view of its
group's family (``model.migration.system.classic_view`` / ``consumer_view``)."""

from __future__ import annotations

from invariants.families import CONVERGED
from model.actions import Action
from model.classic.records import ClassicClient, ClassicGroup
from model.consumer.client import IN_GROUP
from model.migration.records import MixedState
from model.migration.system import classic_view, consumer_view
from model.records import Client, Group
from model.status import ClassicClientStatus


def mixed_converged(state: MixedState) -> bool:
    """A mixed state has converged when its group has converged for the clients of the
    group's protocol (``converged`` of that family on the view), no client of the other
    protocol is still trying to join, and — a consumer group — nothing is in flight and
    every classic client in the group is STABLE at its member's epoch with no rejoin
    pending, consuming exactly its member's assigned partitions."""
    g = state.group
    if isinstance(g, ClassicGroup):
        if not CONVERGED.named("classic")(classic_view(state, g)):
            return False
        return not any(
            isinstance(c, Client) and c.alive and c.status in IN_GROUP for c in state.clients
        )
    if state.network or not CONVERGED.named("consumer")(consumer_view(state, g)):
        return False
    for c in state.clients:
        if not isinstance(c, ClassicClient) or not c.alive:
            continue
        if c.status is ClassicClientStatus.UNSUBSCRIBED:
            continue
        member = g.members.get(c.member_id)
        if c.status is not ClassicClientStatus.STABLE or member is None:
            return False
        if c.rejoin_needed or c.generation_id != member.member_epoch:
            return False
        if c.owned != member.assigned_partitions:
            return False
    return True


CONVERGED.register("mixed", mixed_converged)


def group_upgrades(pre: MixedState, action: Action, post: MixedState) -> bool:
    """A classic group with members becomes a consumer group
    (``GroupMetadataManager.convertToConsumerGroup``)."""
    return (
        isinstance(pre.group, ClassicGroup)
        and bool(pre.group.members)
        and isinstance(post.group, Group)
    )


def group_downgrades(pre: MixedState, action: Action, post: MixedState) -> bool:
    """A consumer group with members becomes a classic group with members
    (``GroupMetadataManager.convertToClassicGroup``)."""
    return (
        isinstance(pre.group, Group)
        and bool(pre.group.members)
        and isinstance(post.group, ClassicGroup)
        and bool(post.group.members)
    )
