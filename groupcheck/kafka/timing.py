"""Measured rebalance times on the real broker beside the timed simulation's prediction
(``groupcheck kafka timing``; docs/timed.md, "Against Kafka 4.4").

Two kinds of rows, each read from run directories (``verdicts.json``: the steps with their
Unix ms and, for ``wait = "stable"``, ``settled_ms``; ``capture.ndjson``: the wire;
``clients/*.events.ndjson``: the clients' own events):

* **join** — the ``batching-*`` scenarios mirror ``groupcheck timed rebalance-times``: for
  N members the group of N-2 is formed, member N-1 joins and 200 ms later member N. The
  time runs from member N's **first ConsumerGroupHeartbeat on the wire** (MemberEpoch 0)
  to the group's settled state (the last change of a live member's assignment or epoch,
  the clients' timestamps: the wait's ``settled_ms``). Not from the ``subscribe`` call:
  what the client does before its first heartbeat (librdkafka looks up the coordinator,
  and on a fresh client fetches metadata first) is client behaviour the simulation does
  not have — its Subscribe sends the join at once. The delay is shown in its own column.
  The simulation: ``groupcheck.timed.scenarios.scale_up`` with the same interval,
  heartbeat and partitions, and the same rest before member N-1's join (the wait's quiet
  time, ``groupcheck.kafka.run`` ``wait_stable``: the assignment interval and three
  heartbeats).
* **crash / cut** — ``consumer-crash`` (a member's process halts) and ``consumer-fenced``
  (the proxy cuts a member off): from the crash (the client's ``Crash`` event in the
  capture; the ``cut`` step, the proxy drops its traffic from then) to the settled state
  of the others (crash: the wait's ``settled_ms``; cut: the others' last change
  before the ``heal`` step). The coordinator sees the same in both: a member that stops
  heartbeating. The simulation: ``groupcheck.timed.scenarios.crash`` with the same
  session timeout, heartbeat, interval, members and partitions. After a cut, the
  ``heal`` → settled row (the cut member is fenced and rejoins) is measured without a
  prediction: the simulation has no cut-off client.

The simulation's assignor run takes what the broker said its runs took: the median of
``Computed a new target assignment … in N ms`` in the runs' ``broker.log``
(``GroupMetadataManager.maybeUpdateTargetAssignment``), 0–2 ms for these groups.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.timed.engine import Timing
from groupcheck.timed.scenarios import Kip1263, crash, scale_up

SIZES = {"1 member": 1, "2 members": 2, "10 members": 10, "50 members": 50}
"""A wait's label → the group size it measures."""

SEEDS = 5
"""Seeds of the simulation per row (its median is the prediction)."""

JOIN_GAP_MS = 200
"""The batching scenarios' sleep between member N-1's and member N's subscription."""

KINDS = {"join": "last join", "crash": "crash", "cut": "cut", "heal": "heal after a cut"}
"""A row's kind → how the table names the event its time runs from."""


@dataclass(frozen=True)
class Run:
    """What a run directory says about its setting."""

    interval_ms: int
    heartbeat_ms: int
    session_ms: int
    partitions: int
    members: int


@dataclass
class Sample:
    """One measured time and, for a join, the client's delay before its first heartbeat."""

    ms: int
    delay_ms: int | None = None


Key = tuple[str, int, int, int, int]
"""(kind, assignment interval ms, members, heartbeat ms, session timeout ms)."""


def measured(dirs: list[Path]) -> dict[Key, list[Sample]]:
    """Every row's samples, one per run (a run directory may give several rows)."""
    out: dict[Key, list[Sample]] = defaultdict(list)
    for d in dirs:
        for key, sample in _samples(d):
            out[key].append(sample)
    return dict(out)


def _samples(d: Path) -> list[tuple[Key, Sample]]:
    meta = _json(d / "verdicts.json")
    if not isinstance(meta, dict) or meta.get("error"):
        return []
    header, wire, crashes = _capture(d / "capture.ndjson")
    run = _setting(meta, header)
    steps = list(meta.get("steps", []))
    out: list[tuple[Key, Sample]] = []
    for i, step in enumerate(steps):
        what = str(step.get("what", ""))
        label = str(step.get("label", ""))
        if label in SIZES and step.get("settled_ms") is not None and i > 0:
            end = int(step["ts"]) + int(step["settled_ms"])
            joined = _joiner(steps[i - 1], header)
            if joined is None:
                continue
            _name, member_ids, subscribed_at = joined
            first = _first_join(wire, member_ids, subscribed_at)
            if first is None:
                continue
            key = ("join", run.interval_ms, SIZES[label], run.heartbeat_ms, run.session_ms)
            out.append((key, Sample(end - first, first - subscribed_at)))
        elif what.startswith("crash "):
            wait = _next_wait(steps, i)
            if wait is not None:
                end = int(wait["ts"]) + int(wait["settled_ms"])
                victim = what.split()[1]
                at = _crashed_at(crashes, header, victim, int(step["ts"]))
                key = ("crash", run.interval_ms, run.members, run.heartbeat_ms, run.session_ms)
                out.append((key, Sample(end - at)))
        elif what.startswith("cut "):
            victim = what.split()[1]
            heal = next(
                (s for s in steps[i + 1 :] if str(s.get("what", "")).startswith("heal ")), None
            )
            stop = int(heal["ts"]) if heal is not None else None
            last = _last_change(d, int(step["ts"]), stop, exclude=victim)
            if last is not None:
                key = ("cut", run.interval_ms, run.members, run.heartbeat_ms, run.session_ms)
                out.append((key, Sample(last - int(step["ts"]))))
        elif what.startswith("heal "):
            wait = _next_wait(steps, i)
            if wait is not None:
                end = int(wait["ts"]) + int(wait["settled_ms"])
                key = ("heal", run.interval_ms, run.members, run.heartbeat_ms, run.session_ms)
                out.append((key, Sample(end - int(step["ts"]))))
    return out


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _capture(
    path: Path,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The capture's header, its ConsumerGroupHeartbeat requests and its ``Crash`` events
    (a client's own report of its crash, merged in by ``groupcheck kafka``)."""
    header: dict[str, Any] = {}
    wire: list[dict[str, Any]] = []
    crashes: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return header, wire, crashes
    for n, line in enumerate(lines):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if n == 0 and "format" in event:
            header = event
            continue
        payload = event.get("payload", {})
        if (
            event.get("kind") == "DeliverMessage"
            and payload.get("api") == "ConsumerGroupHeartbeat"
            and payload.get("direction") == "request"
        ):
            wire.append(event)
        elif event.get("kind") == "Crash":
            crashes.append(event)
    return header, wire, crashes


def _crashed_at(
    crashes: list[dict[str, Any]], header: dict[str, Any], name: str, after: int
) -> int:
    """When client ``name`` crashed: its ``Crash`` event at or after the crash step
    (``after``; the step's time when the capture has none)."""
    ids = {mid for mid, n in (header.get("clients", {}) or {}).items() if n == name}
    for event in crashes:
        if event.get("payload", {}).get("client") in ids and int(event.get("ts", 0)) >= after:
            return int(event["ts"])
    return after


def _setting(meta: dict[str, Any], header: dict[str, Any]) -> Run:
    """The run's assignment interval (the group's, else the broker's, else Kafka's default
    1,000 ms: ``GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS_DEFAULT``),
    heartbeat interval, session timeout, partitions and clients."""
    group = meta.get("group_config", {}) or {}
    broker = meta.get("broker_settings", {}) or {}
    interval = group.get("consumer.assignment.interval.ms") or broker.get(
        "group.consumer.assignment.interval.ms", 1000
    )
    heartbeat = group.get("consumer.heartbeat.interval.ms") or broker.get(
        "group.consumer.heartbeat.interval.ms", header.get("heartbeat_interval_ms", 5000)
    )
    session = group.get("consumer.session.timeout.ms") or broker.get(
        "group.consumer.session.timeout.ms", header.get("session_timeout_ms", 45000)
    )
    topics = header.get("topics", {}) or {}
    names = set((header.get("clients", {}) or {}).values())
    return Run(
        interval_ms=int(interval),
        heartbeat_ms=int(heartbeat),
        session_ms=int(session),
        partitions=sum(int(n) for n in topics.values()) or 1,
        members=len(names),
    )


def _joiner(step: dict[str, Any], header: dict[str, Any]) -> tuple[str, set[str], int] | None:
    """The client a ``subscribe NAME …`` step subscribed, its member ids, and when."""
    m = re.match(r"subscribe (\S+) ", str(step.get("what", "")))
    if m is None:
        return None
    name = m.group(1)
    ids = {mid for mid, n in (header.get("clients", {}) or {}).items() if n == name}
    return name, ids, int(step["ts"])


def _first_join(wire: list[dict[str, Any]], member_ids: set[str], after: int) -> int | None:
    """When the first join request (MemberEpoch 0) of ``member_ids`` crossed the wire."""
    for event in wire:
        body = event["payload"].get("body", {})
        if (
            int(event.get("ts", 0)) >= after
            and body.get("MemberId") in member_ids
            and body.get("MemberEpoch") == 0
        ):
            return int(event["ts"])
    return None


def _next_wait(steps: list[dict[str, Any]], i: int) -> dict[str, Any] | None:
    """The first ``wait stable`` after step ``i`` that settled (None: a step that changes
    the group came first; a sleep, a wait or the proxy's ``sever`` of the same heal does
    not)."""
    for step in steps[i + 1 :]:
        if step.get("settled_ms") is not None:
            return step
        if not str(step.get("what", "")).startswith(("wait", "sleep", "sever")):
            return None
    return None


def _last_change(d: Path, start: int, stop: int | None, exclude: str) -> int | None:
    """The last change of an assignment or member epoch of a client other than
    ``exclude`` from ``start`` until ``stop`` (the clients' own events)."""
    last: int | None = None
    for path in sorted((d / "clients").glob("*.events.ndjson")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            ts = int(e.get("ts", 0))
            if (
                e.get("event") in ("assignment", "member")
                and e.get("client") not in (None, exclude)
                and ts >= start
                and (stop is None or ts < stop)
            ):
                last = ts if last is None else max(last, ts)
    return last


# --------------------------------------------------------------------------- prediction


ASSIGNOR_LOG = re.compile(
    r"Computed a new target assignment for epoch \d+ with '[^']*' assignor in (\d+)ms"
)


def assignor_ms(dirs: list[Path]) -> float | None:
    """The median assignor run the brokers of ``dirs`` logged (None: no log)."""
    times: list[int] = []
    for d in dirs:
        try:
            text = (d / "broker.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        times += [int(m.group(1)) for m in ASSIGNOR_LOG.finditer(text)]
    return float(statistics.median(times)) if times else None


def predicted(
    key: Key, partitions: int, seeds: int = SEEDS, assignor: float | None = None
) -> int | None:
    """The timed simulation's median for a row (None: none for this kind, or a seed did
    not converge). No offload: Kafka 4.4 runs the assignor on the coordinator thread;
    ``assignor``: its run in ms (default: the simulation's)."""
    kind, interval, members, heartbeat, session = key
    timing = Timing() if assignor is None else Timing(assignor_ms=assignor)
    times: list[float | None]
    if kind == "join":
        # The formed group rests for the wait's quiet time (interval + 3 heartbeats,
        # groupcheck.kafka.run wait_stable) before member N-1 subscribes, then 200 ms.
        rest = interval + 3 * heartbeat + JOIN_GAP_MS
        times = [
            scale_up(
                members=members,
                kip1263=Kip1263(interval, False),
                seed=seed,
                timing=timing,
                heartbeat_interval_ms=heartbeat,
                partitions_per_member=max(1, partitions // members),
                join_gap_ms=JOIN_GAP_MS,
                rest_ms=rest,
            ).rebalance_ms
            for seed in range(1, seeds + 1)
        ]
    elif kind in ("crash", "cut"):
        times = [
            crash(
                members=members,
                seed=seed,
                timing=timing,
                partitions=partitions,
                heartbeat_interval_ms=heartbeat,
                session_timeout_ms=session,
                assignment_interval_ms=interval,
            ).settled_ms
            for seed in range(1, seeds + 1)
        ]
    else:
        return None
    done = [t for t in times if t is not None]
    return round(statistics.median(done)) if done and len(done) == len(times) else None


def _partitions(dirs: list[Path]) -> dict[Key, int]:
    out: dict[Key, int] = {}
    for d in dirs:
        meta = _json(d / "verdicts.json")
        if not isinstance(meta, dict):
            continue
        header, _, _ = _capture(d / "capture.ndjson")
        run = _setting(meta, header)
        for key, _sample in _samples(d):
            out.setdefault(key, run.partitions)
    return out


def table(dirs: list[Path]) -> str:
    """The markdown table: per row the runs' min/median/max beside the prediction, and
    whether they differ by more than one heartbeat interval."""
    data = measured(dirs)
    partitions = _partitions(dirs)
    assignor = assignor_ms(dirs)
    rows = [
        "| from | consumer.assignment.interval.ms | members | runs "
        "| measured min / median / max ms | timed prediction ms | within one heartbeat "
        "| first heartbeat after subscribe(), median ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    order = list(KINDS)
    for key in sorted(data, key=lambda k: (order.index(k[0]), *k[1:])):
        kind, interval, members, heartbeat, _session = key
        values = sorted(s.ms for s in data[key])
        median = round(statistics.median(values))
        guess = predicted(key, partitions.get(key, 1), assignor=assignor)
        within = "—" if guess is None else ("yes" if abs(median - guess) <= heartbeat else "**no**")
        delays = [s.delay_ms for s in data[key] if s.delay_ms is not None]
        delay = f"{round(statistics.median(delays)):,}" if delays else "—"
        rows.append(
            f"| {KINDS[kind]} | {interval:,} | {members} | {len(values)} | {values[0]:,} / "
            f"{median:,} / {values[-1]:,} | {'—' if guess is None else f'{guess:,}'} "
            f"| {within} | {delay} |"
        )
    return "\n".join(rows) + "\n"
