"""Client events into a capture: what each driven client process reported, as trace events.

``groupcheck kafka run`` drives real consumers through driver processes that report their
application-side events (``groupcheck.kafka.clients``: ``subscribed``, ``assigned`` …,
each with ``ts``, wall-clock Unix ms). :func:`merge_client_events` turns them into the
trace's client events (``model.trace.codec.ClientEvent``; docs/trace-format.md, "Client
events") and places each in the capture by time. Pure: no I/O beyond its arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CALLBACK_NAMES = {
    "assigned": "onPartitionsAssigned",
    "revoked": "onPartitionsRevoked",
    "lost": "onPartitionsLost",
}
"""A driver's callback event → the ``ConsumerRebalanceListener`` method."""


def _partitions(names: Iterable[str], ids: Mapping[str, str]) -> list[dict[str, Any]]:
    """``["foo-3", …]`` → ``[{"TopicId": …, "Partitions": […]}]``, by the capture's topic ids
    (a topic the capture does not name keeps its name as ``TopicId``)."""
    by_topic: dict[str, list[int]] = {}
    for name in names:
        topic, _, index = str(name).rpartition("-")
        by_topic.setdefault(ids.get(topic, topic), []).append(int(index))
    return [{"TopicId": t, "Partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]


def _incarnations(events: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """A driver's events split at each ``created`` (one consumer instance each); events
    before the first ``created`` are dropped (the driver's own ``ready``)."""
    out: list[list[Mapping[str, Any]]] = []
    for e in events:
        if e.get("event") == "created":
            out.append([])
        if out:
            out[-1].append(e)
    return out


def _member_of(
    incarnation: list[Mapping[str, Any]],
    candidates: list[tuple[int, str]],
    until: int | None,
) -> str | None:
    """The member id of one consumer instance: the one its ``member`` events report (the
    Java client), else the first of ``candidates`` (first-seen ``ts``, member id) seen on
    the wire between its creation and the next instance's (librdkafka reports none)."""
    for e in incarnation:
        if e.get("event") == "member" and e.get("member_id"):
            return str(e["member_id"])
    start = int(incarnation[0].get("ts", 0))
    for ts, member in candidates:
        if ts >= start and (until is None or ts < until):
            return member
    return None


def client_event_dicts(
    capture_lines: Sequence[str],
    driver_events_by_client: Mapping[str, Sequence[Mapping[str, Any]]],
    member_ids: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The trace events (as JSON objects, by ``ts``) that the drivers' events make; see
    :func:`merge_client_events`."""
    header = json.loads(capture_lines[0])
    ids = {name: tid for tid, name in (header.get("topic_names") or {}).items()}
    names = dict(member_ids if member_ids is not None else header.get("clients") or {})
    first_seen: dict[str, int] = {}
    crashed: set[str] = set()
    for line in capture_lines[1:]:
        if not line.strip():
            continue
        e = json.loads(line)
        client = (e.get("payload") or {}).get("client")
        if e.get("kind") == "DeliverMessage" and client is not None and e.get("ts") is not None:
            first_seen.setdefault(client, int(e["ts"]))
        if e.get("kind") == "Crash" and client is not None:
            crashed.add(client)
    out: list[dict[str, Any]] = []
    for name, events in sorted(driver_events_by_client.items()):
        candidates = sorted((ts, m) for m, ts in first_seen.items() if names.get(m, m) == name)
        parts = _incarnations(events)
        for i, incarnation in enumerate(parts):
            until = int(parts[i + 1][0].get("ts", 0)) if i + 1 < len(parts) else None
            member = _member_of(incarnation, candidates, until)
            if member is None:
                continue  # it never reached the wire
            out.extend(_converted(incarnation, member, ids, member in crashed))
    out.sort(key=lambda e: e["ts"])
    return out


def _converted(
    events: list[Mapping[str, Any]], member: str, ids: Mapping[str, str], crash_known: bool
) -> list[dict[str, Any]]:
    def event(ts: Any, kind: str, **payload: Any) -> dict[str, Any]:
        return {
            "seq": 0,
            "ts": int(ts),
            "source": f"client:{member}",
            "kind": kind,
            "payload": {"client": member, **payload},
        }

    out: list[dict[str, Any]] = []
    for i, e in enumerate(events):
        what, ts = e.get("event"), e.get("ts")
        if ts is None:
            continue
        if what == "subscribed":
            if e.get("pattern") is not None:
                out.append(event(ts, "Subscription", pattern=str(e["pattern"])))
            else:
                out.append(event(ts, "Subscription", topics=sorted(e.get("topics") or [])))
        elif what == "unsubscribed":
            out.append(event(ts, "Unsubscribe"))
        elif what in CALLBACK_NAMES:
            callback = CALLBACK_NAMES[str(what)]
            partitions = _partitions(e.get("partitions") or [], ids)
            out.append(event(ts, "Callback", callback=callback, phase="start",
                             partitions=partitions))  # fmt: skip
            end = ts  # a callback not slowed returns at once: the driver reports no end
            for later in events[i + 1 :]:
                if later.get("event") in CALLBACK_NAMES:
                    break
                if later.get("event") == "callback_end" and later.get("callback") == what:
                    end = later.get("ts", ts)
                    break
            out.append(event(end, "Callback", callback=callback, phase="end",
                             partitions=partitions))  # fmt: skip
        elif what == "closing":  # a driver that reports close() being called
            out.append(event(ts, "Close", leave=str(e.get("leave") or "default"), phase="start"))
        elif what == "closed":
            out.append(event(ts, "Close", leave=str(e.get("leave") or "default"), phase="end"))
        elif what == "stalled":
            ms = e.get("ms")
            extra = {"ms": int(ms)} if ms is not None else {}
            out.append(event(ts, "PollStall", phase="start", **extra))
        elif what == "resumed":
            out.append(event(ts, "PollStall", phase="end"))
        elif what == "crash" and not crash_known:
            out.append(event(ts, "Crash"))
    return out


def insert_events(capture_lines: Sequence[str], added: Sequence[Mapping[str, Any]]) -> list[str]:
    """``capture_lines`` with each of ``added`` (trace events with a ``ts``) written just
    before the first event stamped later than it — after those of its millisecond, which
    keeps the file's time order (docs/trace-format.md, "Timestamps")."""
    pending = sorted(added, key=lambda e: int(e["ts"]))
    out = [capture_lines[0]]
    for line in capture_lines[1:]:
        if not line.strip():
            continue
        ts = json.loads(line).get("ts")
        while pending and ts is not None and int(pending[0]["ts"]) < ts:
            out.append(json.dumps(pending.pop(0), sort_keys=True))
        out.append(line)
    out.extend(json.dumps(e, sort_keys=True) for e in pending)
    return out


def merge_client_events(
    capture_lines: Sequence[str],
    driver_events_by_client: Mapping[str, Sequence[Mapping[str, Any]]],
    member_ids: Mapping[str, str] | None = None,
) -> list[str]:
    """The capture (its lines, header first) with its client processes' events merged in
    as trace client events, each placed by its ``ts``.

    ``driver_events_by_client``: a driver's client name (its ``client.id``) → the events it
    reported, in order (``groupcheck.kafka.clients``). ``member_ids``: a message's
    ``client`` (a member id) → that client name; by default the header's ``clients``. A
    consumer instance's events (from its ``created`` on) go to the member id its ``member``
    events report, else to the first member id of its name the wire shows after its
    creation; an instance that never reached the wire is left out. ``crash`` becomes the
    model's ``Crash`` unless the capture has one for that member already."""
    added = client_event_dicts(capture_lines, driver_events_by_client, member_ids)
    return insert_events(capture_lines, added)
