"""The system: ``initial``, ``enabled`` and ``step``. Everything that explores, replays,
simulates or renders goes through these three (README.md, Conventions). Each dispatches to
the protocol family of its config or state (``model.family``): KIP-848's
``model.consumer.system``, ``model.classic.system``, ``model.migration.system``.
"""

from __future__ import annotations

from model.actions import Action
from model.classic.records import ClassicState
from model.config import Config
from model.family import family_of, family_of_state
from model.migration.records import MixedState
from model.records import State

AnyState = State | ClassicState | MixedState
"""A state of either protocol family: ``State`` (KIP-848) or ``ClassicState``, or of a
mixed config (``MixedState``: classic and consumer-protocol clients in one group)."""


# --------------------------------------------------------------------------- initial


def initial(config: Config) -> AnyState:
    """The initial state of ``config``'s protocol family (``model.family.family_of``)."""
    state: AnyState = family_of(config).initial(config)
    return state


# --------------------------------------------------------------------------- enabled


def enabled(state: AnyState, config: Config) -> tuple[Action, ...]:
    """Every action enabled in ``state``, in a deterministic order (its family's
    ``enabled``; a search that runs one config resolves the family once:
    ``model.family.family_of``)."""
    return family_of_state(state).enabled(state, config)


# --------------------------------------------------------------------------- step


def step(state: AnyState, action: Action, config: Config) -> AnyState:
    """Apply ``action`` to ``state``. The caller guarantees the action is enabled
    (``replay`` checks it). A perturbation spends one unit of the budget. Dispatched to
    the state's family (``model.family.family_of_state``)."""
    new: AnyState = family_of_state(state).step(state, action, config)
    return new


def is_enabled(state: AnyState, action: Action, config: Config) -> bool:
    """Whether ``action`` is enabled in ``state``."""
    return action in enabled(state, config)
