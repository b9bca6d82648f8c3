"""The network both protocol families share: per-channel FIFO delivery of
``model.records.Message`` values.

A channel is one direction of one TCP connection of a client process; without
``Config.reorder`` a client's successive connections form one channel (an old connection's
messages arrive first).
"""

from __future__ import annotations

from model.records import Message


def deliverable(network: tuple[Message, ...], reorder: bool) -> list[Message]:
    """The messages the network may deliver now: the head of each channel."""
    seen: set[tuple[str, int, int, bool]] = set()
    out: list[Message] = []
    for m in network:
        channel = (m.client, m.incarnation, m.connection if reorder else 0, m.to_coordinator)
        if channel not in seen:
            seen.add(channel)
            out.append(m)
    return out


def without(network: tuple[Message, ...], message: Message) -> tuple[Message, ...]:
    """``network`` less one occurrence of ``message``."""
    i = network.index(message)
    return network[:i] + network[i + 1 :]


def apis_in_flight(
    network: tuple[Message, ...], client: str, incarnation: int, connection: int
) -> set[str]:
    """The APIs (``Message.api``) with a request or response in the network on one
    connection of a client process."""
    return {
        m.api
        for m in network
        if m.client == client and m.incarnation == incarnation and m.connection == connection
    }
