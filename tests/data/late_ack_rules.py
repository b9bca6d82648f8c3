from dataclasses import replace

from model.rules import DEFAULT_RULES
from model.status import ClientStatus


def late_ack(client, config):
    """Acknowledges one heartbeat late: the first heartbeat after a reconciliation leaves
    the owned partitions out (and marks them unsent, so the next one carries them)."""
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


SLOW = {"client_build_heartbeat": late_ack}
