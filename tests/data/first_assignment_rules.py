"""Two rule changes that move rebalance time without breaking any property
(tests/unit/test_rebalance_compare.py), written as the mutant catalogue writes its
functions (groupcheck/mutants/catalogue.py): the signature of the ``Rules`` field they
replace, and one rule changed.

Both change the Java client's handling of the response to its join
(``AbstractMembershipManager.onHeartbeatSuccess``): it ignores the assignment, so it stays
joining and its next heartbeat is a join again (epoch 0, a full request), which the
coordinator answers with the assignment (``GroupMetadataManager.consumerGroupHeartbeat``).
A client-side "initial rebalance delay": a member waits one heartbeat before it takes its
first partitions. On the tests' config (one topic of two partitions, B subscribing at any
moment) neither violates a property; with crashes and session timeouts (the preset TINY)
``DELAY`` does: ``groupcheck explore --preset TINY --rules
tests/data/first_assignment_rules.py:DELAY`` reports OwnedPartitionsAreHeld.
"""

from dataclasses import replace

from model.rules import DEFAULT_RULES


def _waits(client, resp, config):
    """The response to a join, carrying an assignment, to which the client waits."""
    return (
        client.heartbeat_in_flight
        and client.member_epoch == 0
        and resp.member_epoch > 0
        and resp.assignment is not None
    )


def wait_for_first_assignment(client, resp, config):
    """Every joining client takes its first assignment one heartbeat late. Slower when a
    member joins alone (it waits for nothing), faster when a second member joins before
    the first has its partitions (nothing is assigned and then revoked): the worst
    rebalance is the same as the reference rules', so only a start-by-start comparison
    sees the slower starts."""
    if _waits(client, resp, config):
        new = DEFAULT_RULES.client_on_heartbeat_response(
            client, replace(resp, assignment=None), config
        )
        return replace(new, sent=None)
    return DEFAULT_RULES.client_on_heartbeat_response(client, resp, config)


def late_joiner_waits(client, resp, config):
    """Only a client joining a group whose epoch has moved on (``resp.member_epoch > 1``:
    another member joined first) takes its first assignment one heartbeat late: never
    slower than the reference rules (its partitions are still being revoked by the
    member that had them)."""
    if _waits(client, resp, config) and resp.member_epoch > 1:
        new = DEFAULT_RULES.client_on_heartbeat_response(
            client, replace(resp, assignment=None), config
        )
        return replace(new, sent=None)
    return DEFAULT_RULES.client_on_heartbeat_response(client, resp, config)


DELAY = {"client_on_heartbeat_response": wait_for_first_assignment}
LATE_JOINER = {"client_on_heartbeat_response": late_joiner_waits}
