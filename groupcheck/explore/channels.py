"""The channel normal form of a state (``groupcheck.explore.bfs``): without
``Config.reorder`` the model delivers only the head of each channel, so two states whose
networks hold the same channels in another interleaving are the same state."""

from __future__ import annotations

from collections.abc import Callable

from model.config import Config
from model.records import Message, replace
from model.system import AnyState


def _channel_key(m: Message) -> tuple[str, int, bool]:
    return (m.client, m.incarnation, m.to_coordinator)


def channel_normal_form(config: Config) -> Callable[[AnyState], AnyState]:
    """Order the network by channel, keeping each channel's order (the identity with
    ``config.reorder``, where connections are channels of their own and may overtake)."""
    if config.reorder:
        return lambda state: state

    def normal(state: AnyState) -> AnyState:
        net = state.network
        if len(net) < 2:
            return state
        last = None
        for m in net:  # in order already (most are)? Then no sort and no copy.
            key = (m.client, m.incarnation, m.to_coordinator)  # _channel_key, inline
            if last is not None and key < last:
                return replace(state, network=tuple(sorted(net, key=_channel_key)))
            last = key
        return state

    return normal
