"""Two protocol changes of "my" own, as a KIP designer would write them
(docs/tutorial.md, "Checking your own protocol change").

LATE_ACK: the client acknowledges a reconciliation one heartbeat late — slower, not
broken. EAGER_HANDOUT: the coordinator assigns a partition while its previous owner has
not yet revoked it — broken (a partition consumed twice).
"""

from dataclasses import replace

from model.consumer import reconcile as rc
from model.ids import EMPTY
from model.rules import DEFAULT_RULES
from model.status import ClientStatus, MemberState


def late_ack(client, config):
    """The first heartbeat after a reconciliation leaves the owned partitions out."""
    new, request = DEFAULT_RULES.client_build_heartbeat(client, config)
    if (
        client.status is ClientStatus.ACKNOWLEDGING
        and request.member_epoch > 0
        and request.topic_partitions is not None
        and new.sent is not None
    ):
        return replace(new, sent=replace(new.sent, topic_partitions=None)), replace(
            request, topic_partitions=None
        )
    return new, request


LATE_ACK = {"client_build_heartbeat": late_ack}


def eager_handout(member, **kw):
    """The member jumps to its target at once: partitions it must revoke count as
    released before its client acknowledged (KIP-848's revoke-before-assign dropped)."""
    out = rc.reconcile(member, **kw)
    if out.state is MemberState.UNREVOKED_PARTITIONS:
        return rc.with_epoch(
            out,
            kw["target_epoch"],
            state=MemberState.STABLE,
            partitions_pending_revocation=EMPTY,
        )
    return out


EAGER_HANDOUT = {"reconcile": eager_handout}
