"""Client events: what a client process's application saw and did, as trace events.

They are not model actions (the model has no step "the application's callback started"):
a wire capture records messages, and a runner that also drives the client processes
(``groupcheck kafka run``) adds what each process reported — its rebalance callbacks
with their partitions, its ``subscribe()``, ``close()`` and poll stalls — so that client
conformance (``groupcheck validate --mode client``) can judge the callbacks and knows when
the application did what. Their vocabulary follows the model's where it has one
(``Config.callback_steps``' callbacks ``onPartitionsRevoked``/``Assigned``/``Lost``,
``Subscribe``/``ChangeSubscription``, ``Leave``/``TemporaryLeave``, ``PollTimerExpires``);
a process's crash is the model's ``Crash`` action itself. docs/trace-format.md, "Client
events".

Every mode but client mode reads past them: :func:`decode_client_event` returns a
:class:`ClientEvent`, an ``Action`` no model step takes and no other mode looks at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model.actions import Action
from model.ids import Assignment
from model.trace.codec import (
    CLIENT_EVENT_KINDS,
    MAX_INT,
    TraceError,
    TraceEvent,
    _col,
    _get,
    _parts,
    _unknown,
)

CALLBACKS = ("onPartitionsRevoked", "onPartitionsAssigned", "onPartitionsLost")
"""The ``ConsumerRebalanceListener`` methods a ``Callback`` event names."""
PHASES = ("start", "end")
LEAVE_KINDS = ("default", "leave", "remain")
"""``close()``'s group membership operation (``CloseOptions.GroupMembershipOperation``):
``leave`` (epoch -1), ``remain`` (a static member leaves for a while, epoch -2), or
``default`` (-1 for a dynamic member, -2 for a static one)."""

_FIELDS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    # kind: (required, allowed)
    "Callback": (
        frozenset({"client", "callback", "phase", "partitions"}),
        frozenset({"client", "callback", "phase", "partitions"}),
    ),
    "Subscription": (frozenset({"client"}), frozenset({"client", "topics", "pattern"})),
    "Unsubscribe": (frozenset({"client"}), frozenset({"client"})),
    "Close": (frozenset({"client", "leave", "phase"}), frozenset({"client", "leave", "phase"})),
    "PollStall": (frozenset({"client", "phase"}), frozenset({"client", "phase", "ms"})),
}
assert set(_FIELDS) == CLIENT_EVENT_KINDS


@dataclass(frozen=True, slots=True)
class ClientEvent(Action):
    """One client event (module docstring). ``client`` is the member id of the process
    (a capture's message ``client``); the other fields are those of its ``event`` kind:

    - ``Callback``: ``callback`` (:data:`CALLBACKS`), ``phase`` (``start``: the listener
      method was entered; ``end``: it returned) and ``partitions`` (its argument);
    - ``Subscription``: ``topics`` (``subscribe(topics)``) or ``pattern``
      (``subscribe(SubscriptionPattern)``, sent as ``SubscribedTopicRegex``);
    - ``Unsubscribe``: ``unsubscribe()`` returned;
    - ``Close``: ``leave`` (:data:`LEAVE_KINDS`), ``phase`` (``start``: ``close()`` was
      called; ``end``: it returned);
    - ``PollStall``: ``phase`` (``start``: the application stops polling, for ``ms``;
      ``end``: it polls again)."""

    event: str
    client: str
    callback: str | None = None
    phase: str | None = None
    partitions: Assignment | None = None
    topics: tuple[str, ...] | None = None
    pattern: str | None = None
    leave: str | None = None
    ms: int | None = None

    @property
    def kind(self) -> str:
        """The event kind (``Callback``, ``Subscription`` …), as written in the trace."""
        return self.event


def _choice(p: Mapping[str, Any], key: str, allowed: tuple[str, ...], line: str, n: int) -> str:
    value: str = _get(p, key, str, line, n)
    if value not in allowed:
        raise TraceError(n, _col(line, key), f"{key} must be one of {', '.join(allowed)}")
    return value


def decode_client_event(event: TraceEvent, line: str, n: int) -> ClientEvent:
    """The :class:`ClientEvent` a line of a client event kind records (its payload
    checked: the kind's fields only, each of its type)."""
    kind = event.kind
    required, allowed = _FIELDS[kind]
    p = event.payload
    _unknown(p, allowed, line, n, "payload")
    for key in sorted(required):
        if key not in p:
            raise TraceError(n, _col(line, "payload"), f"{kind} needs {key!r}")
    if not event.source.startswith("client:"):
        raise TraceError(n, _col(line, "source"), f"a {kind} event's source is client:NAME")
    client = _get(p, "client", str, line, n)
    if kind == "Callback":
        return ClientEvent(
            kind,
            client,
            callback=_choice(p, "callback", CALLBACKS, line, n),
            phase=_choice(p, "phase", PHASES, line, n),
            partitions=_parts(p["partitions"], line, n, "partitions"),
        )
    if kind == "Subscription":
        topics = p.get("topics")
        pattern = _get(p, "pattern", str, line, n, optional=True)
        if (topics is None) == (pattern is None):
            raise TraceError(n, _col(line, "payload"), "Subscription needs topics or pattern")
        if topics is not None and (
            not isinstance(topics, list) or not all(isinstance(t, str) for t in topics)
        ):
            raise TraceError(n, _col(line, "topics"), "topics must be a list of names")
        return ClientEvent(
            kind, client, topics=tuple(topics) if topics is not None else None, pattern=pattern
        )
    if kind == "Close":
        return ClientEvent(
            kind,
            client,
            leave=_choice(p, "leave", LEAVE_KINDS, line, n),
            phase=_choice(p, "phase", PHASES, line, n),
        )
    if kind == "PollStall":
        ms = _get(p, "ms", int, line, n, optional=True)
        if ms is not None and not 0 <= ms <= MAX_INT:
            raise TraceError(n, _col(line, "ms"), "ms must be ≥ 0")
        return ClientEvent(kind, client, phase=_choice(p, "phase", PHASES, line, n), ms=ms)
    return ClientEvent(kind, client)  # Unsubscribe
