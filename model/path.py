"""Paths: a config plus a sequence of actions, replayable and compactly encodable.

The compact code is the index of each action among ``system.enabled`` at that step,
written in base 62 (one character per index below 62, ``~`` + two characters otherwise).
It is only meaningful together with the config that produced it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from model import system
from model.actions import Action
from model.config import Config
from model.status import ConfigError
from model.system import AnyState

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_BASE = len(_DIGITS)


class PathError(ConfigError):
    """A path that does not replay: an action not enabled, or a malformed code."""


@dataclass(frozen=True, slots=True)
class Path:
    """A replayable run: the config and the actions taken from its initial state."""

    config: Config
    actions: tuple[Action, ...]

    def states(self) -> Iterator[AnyState]:
        """The initial state and the state after every action (checks enabledness)."""
        state = system.initial(self.config)
        yield state
        for i, action in enumerate(self.actions):
            if action not in system.enabled(state, self.config):
                raise PathError(f"step {i}: {action} is not enabled")
            state = system.step(state, action, self.config)
            yield state

    def final(self) -> AnyState:
        """The last state of the path."""
        last = None
        for last in self.states():  # noqa: B007 - the last state is the result
            pass
        assert last is not None
        return last

    def indices(self) -> tuple[int, ...]:
        """The index of every action among the actions enabled where it was taken."""
        out: list[int] = []
        state = system.initial(self.config)
        for i, action in enumerate(self.actions):
            acts = system.enabled(state, self.config)
            try:
                out.append(acts.index(action))
            except ValueError:
                raise PathError(f"step {i}: {action} is not enabled") from None
            state = system.step(state, action, self.config)
        return tuple(out)

    def encode(self) -> str:
        """The compact action-index code of this path."""
        return encode_indices(self.indices())

    @classmethod
    def decode(cls, config: Config, code: str) -> Path:
        """Rebuild a path from its compact code."""
        state = system.initial(config)
        actions: list[Action] = []
        for i, index in enumerate(decode_indices(code)):
            acts = system.enabled(state, config)
            if index >= len(acts):
                raise PathError(
                    f"code position {i}: index {index} but only {len(acts)} actions are enabled"
                )
            actions.append(acts[index])
            state = system.step(state, acts[index], config)
        return cls(config, tuple(actions))


def encode_indices(indices: Sequence[int]) -> str:
    """Base-62 code of action indices."""
    parts: list[str] = []
    for n in indices:
        if n < 0 or n >= _BASE * _BASE:
            raise PathError(f"action index {n} out of range 0..{_BASE * _BASE - 1}")
        if n < _BASE:
            parts.append(_DIGITS[n])
        else:
            parts.append("~" + _DIGITS[n // _BASE] + _DIGITS[n % _BASE])
    return "".join(parts)


def decode_indices(code: str) -> list[int]:
    """Inverse of :func:`encode_indices`."""
    out: list[int] = []
    i = 0
    while i < len(code):
        ch = code[i]
        if ch == "~":
            hi, lo = code[i + 1 : i + 2], code[i + 2 : i + 3]
            if not hi or not lo or hi not in _DIGITS or lo not in _DIGITS:
                raise PathError(f"code position {i}: '~' needs two base-62 digits after it")
            out.append(_DIGITS.index(hi) * _BASE + _DIGITS.index(lo))
            i += 3
        else:
            if ch not in _DIGITS:
                raise PathError(f"code position {i}: {ch!r} is not a base-62 digit")
            out.append(_DIGITS.index(ch))
            i += 1
    return out
