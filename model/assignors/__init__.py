"""Server-side assignors: ``uniform`` (default) and ``range`` (KIP-848 "Server Side Mode")."""

from __future__ import annotations

from collections.abc import Mapping

from model.assignors.range import RangeAssignor
from model.assignors.spec import AssignmentSpec, Assignor, MemberSubscription, subscription_type
from model.assignors.uniform import UniformAssignor

ASSIGNORS: Mapping[str, Assignor] = {"uniform": UniformAssignor(), "range": RangeAssignor()}


class UnknownAssignorError(KeyError):
    """An assignor name the coordinator does not know (UNSUPPORTED_ASSIGNOR)."""


def get_assignor(name: str) -> Assignor:
    """The assignor called ``name``."""
    try:
        return ASSIGNORS[name]
    except KeyError:
        raise UnknownAssignorError(
            f"unknown assignor {name!r}; known: {', '.join(ASSIGNORS)}"
        ) from None


__all__ = [
    "ASSIGNORS",
    "AssignmentSpec",
    "Assignor",
    "MemberSubscription",
    "UnknownAssignorError",
    "get_assignor",
    "subscription_type",
]
