"""The timing a trace is validated with, and hand-overs of unreleased partitions classified
by it.

A coordinator may give a partition its owner has not released to another member once it
has removed the owner from the group: when the owner's session expired (no heartbeat for
the session timeout; KIP-848 "Session timeout", ``GroupMetadataManager`` schedules the
session timer at each heartbeat) or when the owner did not revoke it within its rebalance
timeout (KIP-848 "Rebalance timeout", the rebalance timer scheduled when the member is
asked to revoke). With the trace's timing known (its header, or ``groupcheck validate
--session-timeout-ms`` …) and timestamps on the events, each such hand-over is one of:

* **premature** — given away before the earliest moment the coordinator could have
  removed the owner (:data:`NO_HAND_OVER_BEFORE_EXPIRY`, a violation);
* **after expiry, owner known dead** — a ``Crash`` (or ``Restart``) of the owner's
  process precedes it: valid, nobody consumes the partition twice;
* **after expiry, owner not known dead** — the owner may be alive behind its expired
  session (a network partition, a long pause): a zombie window
  (:data:`ZOMBIE_WINDOW`), reported apart, a violation only with ``--fail-on-zombie``.

The bounds are taken in the coordinator's favour, so that "premature" is certain: the
owner's deadline is counted from the moment the proxy (or logger) saw its last heartbeat
request leave (the coordinator received it later, and its timer runs from then), and the
hand-over from the moment its response was seen (the coordinator decided earlier); the
clock tolerance (``--clock-tolerance-ms``) is added to the hand-over's side for
timestamps of several clocks, or a coordinator whose timers fire a little late.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groupcheck.validate.report import Finding, Report
from model.trace import TIMING_FIELDS, TraceHeader

DEFAULT_TOLERANCE_MS = 100
"""The default clock tolerance (``--clock-tolerance-ms``)."""

PREMATURE = "premature"
AFTER_EXPIRY_DEAD = "after-expiry-owner-dead"
ZOMBIE = "zombie-window"
UNCLASSIFIED = "unclassified"
"""The classifications of a hand-over of an unreleased partition (``--json``
``handovers[].classification``); ``unclassified``: the timing or a timestamp is unknown."""


@dataclass(frozen=True)
class CoordinatorCheck:
    """A named check of the coordinator's timers read from a timed trace."""

    name: str
    description: str
    reference: str


NO_HAND_OVER_BEFORE_EXPIRY = CoordinatorCheck(
    "Observed.NoHandOverBeforeExpiry",
    "The coordinator gives a partition its owner has not released to another member only "
    "after it could have removed the owner: not before the owner's last heartbeat plus the "
    "session timeout, nor (for a partition it asked the owner to revoke) before that request "
    "plus the owner's rebalance timeout, less the clock tolerance.",
    "KIP-848 Session timeout and Rebalance timeout (GroupMetadataManager session and "
    "rebalance timers)",
)
ZOMBIE_WINDOW = CoordinatorCheck(
    "Observed.ZombieWindow",
    "A partition is handed on after its owner's session expired while nothing shows the "
    "owner stopped (no Crash): the owner may still be consuming it until it next "
    "heartbeats and is fenced. Not a violation of the protocol (KIP-848 fences a zombie at "
    "its offset commits and next heartbeat, not its fetches); a violation with "
    "--fail-on-zombie.",
    "KIP-848 Session timeout, Member Epoch (fencing)",
)
TIMED_CHECKS = (NO_HAND_OVER_BEFORE_EXPIRY, ZOMBIE_WINDOW)


@dataclass(frozen=True)
class Timing:
    """The timing a trace is validated with: each value from an option, else the header,
    else unknown (None); ``sources`` says which, per field."""

    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None
    heartbeat_interval_ms: int | None = None
    tolerance_ms: int = DEFAULT_TOLERANCE_MS
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """Whether hand-overs can be classified: the session timeout is known."""
        return self.session_timeout_ms is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in TIMING_FIELDS}
        out["clock_tolerance_ms"] = self.tolerance_ms
        out["sources"] = dict(self.sources)
        out["timestamps"] = False  # set once an event with a ts is read
        return out


@dataclass(frozen=True)
class TimingOptions:
    """``groupcheck validate``'s timing options: each overrides the header's value."""

    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None
    heartbeat_interval_ms: int | None = None
    tolerance_ms: int = DEFAULT_TOLERANCE_MS
    fail_on_zombie: bool = False
    settle_ms: int = 0
    """Convergence: a quiet window must also last this long (ms) to be checked."""

    def resolve(self, header: TraceHeader) -> Timing:
        values: dict[str, int | None] = {}
        sources: dict[str, str] = {}
        for key in TIMING_FIELDS:
            option, given = getattr(self, key), getattr(header, key)
            values[key] = option if option is not None else given
            if option is not None:
                sources[key] = "option"
            elif given is not None:
                sources[key] = "header"
        return Timing(
            values["session_timeout_ms"],
            values["rebalance_timeout_ms"],
            values["heartbeat_interval_ms"],
            self.tolerance_ms,
            sources,
        )


@dataclass
class HandOver:
    """A partition given to ``to`` while ``owner`` had not released it, and its class."""

    line: int
    partition: str
    owner: str
    to: str
    ts: int | None
    classification: str = UNCLASSIFIED
    owner_dead: bool = False
    last_heartbeat_line: int | None = None
    last_heartbeat_ts: int | None = None
    deadline_ts: int | None = None
    deadline: str = ""
    """What the deadline is: ``session`` or ``rebalance``."""
    zombie_until_line: int | None = None
    zombie_until_ts: int | None = None

    @property
    def margin_ms(self) -> int | None:
        """How long after (> 0) or before (< 0) the deadline the hand-over was seen."""
        if self.ts is None or self.deadline_ts is None:
            return None
        return self.ts - self.deadline_ts

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "partition": self.partition,
            "from": self.owner,
            "to": self.to,
            "ts": self.ts,
            "classification": self.classification,
            "owner_known_dead": self.owner_dead,
            "owner_last_heartbeat_line": self.last_heartbeat_line,
            "owner_last_heartbeat_ts": self.last_heartbeat_ts,
            "deadline": self.deadline or None,
            "deadline_ts": self.deadline_ts,
            "after_deadline_ms": self.margin_ms,
            "zombie_until_line": self.zombie_until_line,
            "zombie_window_ms": (
                self.zombie_until_ts - self.ts
                if self.zombie_until_ts is not None and self.ts is not None
                else None
            ),
        }


def classify(
    h: HandOver,
    timing: Timing,
    rebalance_ms: int | None,
    revoke_asked_ts: int | None,
    session_ms: int | None = None,
) -> None:
    """Set ``h``'s class from the owner's last heartbeat (``h.last_heartbeat_ts``), its
    session timeout (``session_ms``, else the timing's), its rebalance timeout and the
    earliest its rebalance timer can have started (``revoke_asked_ts``; None: never)."""
    session = session_ms if session_ms is not None else timing.session_timeout_ms
    if session is None or h.ts is None or h.last_heartbeat_ts is None:
        h.classification = UNCLASSIFIED
        return
    deadline, what = h.last_heartbeat_ts + session, "session"
    if (
        rebalance_ms is not None
        and revoke_asked_ts is not None
        and revoke_asked_ts + rebalance_ms < deadline
    ):
        deadline, what = revoke_asked_ts + rebalance_ms, "rebalance"
    h.deadline_ts, h.deadline = deadline, what
    if h.ts + timing.tolerance_ms < deadline:
        h.classification = PREMATURE
    else:
        h.classification = AFTER_EXPIRY_DEAD if h.owner_dead else ZOMBIE


def _partitions(group: list[HandOver]) -> str:
    """``orders-0 is`` or ``orders-0, orders-1 are``."""
    names = ", ".join(h.partition for h in group)
    return f"{names} {'is' if len(group) == 1 else 'are'}"


def premature_finding(
    file: str, group: list[HandOver], name: Callable[[str], str], tolerance_ms: int
) -> Finding:
    """One :data:`NO_HAND_OVER_BEFORE_EXPIRY` finding for the partitions of one owner given
    away too early at once (``group``)."""
    h = group[0]
    assert h.ts is not None
    assert h.deadline_ts is not None
    assert h.last_heartbeat_ts is not None
    since = seconds(h.ts - h.last_heartbeat_ts)
    if h.deadline == "session":
        limit = f"the session timeout is {seconds(h.deadline_ts - h.last_heartbeat_ts)}"
    else:
        limit = "its rebalance timeout had not run out"
    them = "it" if len(group) == 1 else "them"
    if not h.owner_dead:
        # The owner is alive and its session had not expired: no expiry is involved, the
        # coordinator gave a live member's partitions to another — a double assignment.
        return Finding(
            file,
            h.line,
            NO_HAND_OVER_BEFORE_EXPIRY.name,
            f"double assignment: {_partitions(group)} given to {name(h.to)} while "
            f"{name(h.owner)}, alive, has not released {them} and may still be consuming "
            f"{them}; no session expiry is involved: its last heartbeat (line "
            f"{h.last_heartbeat_line}) was {since} earlier and {limit} (clock tolerance "
            f"{tolerance_ms} ms)",
        )
    return Finding(
        file,
        h.line,
        NO_HAND_OVER_BEFORE_EXPIRY.name,
        f"premature hand-over: {_partitions(group)} given to {name(h.to)} {since} after "
        f"the last heartbeat of {name(h.owner)} (line {h.last_heartbeat_line}), which has "
        f"not released {them} (its process had died, which the coordinator cannot know): "
        f"{limit} (clock tolerance {tolerance_ms} ms)",
    )


def report_handovers(
    report: Report,
    file: str,
    handovers: list[HandOver],
    name: Callable[[str], str],
    timing: Timing,
    fail_on_zombie: bool,
    unclassified_property: str,
) -> None:
    """Put the classified hand-overs into ``report``: all of them (``handovers``), a note
    on those not classified and on those valid, and the zombie-window findings (grouped by
    line and owner; violations with ``fail_on_zombie``)."""
    report.handovers = [
        {**h.to_json(), "from_name": name(h.owner), "to_name": name(h.to)} for h in handovers
    ]
    counts: dict[str, int] = {}
    for h in handovers:
        counts[h.classification] = counts.get(h.classification, 0) + 1
    if counts.get(UNCLASSIFIED):
        unclassified = [h for h in handovers if h.classification == UNCLASSIFIED]
        if any(h.ts is None or h.last_heartbeat_ts is None for h in unclassified):
            why = "a timestamp (ts) is missing"
        else:
            why = "the timing is unknown (no session_timeout_ms in the header; "
            why += "--session-timeout-ms gives it)"
        report.notes.append(
            f"{file}: {counts[UNCLASSIFIED]} hand-over(s) of unreleased partitions "
            f"not classified: {why}; one given while its owner may still consume it is "
            f"reported as {unclassified_property}"
        )
    dead = counts.get(AFTER_EXPIRY_DEAD, 0)
    if dead:
        report.notes.append(
            f"{file}: {dead} hand-over(s) after the owner's session expired, its "
            "process known dead (Crash): valid"
        )
    zombies: dict[tuple[int, str, str], list[HandOver]] = {}
    for h in handovers:
        if h.classification == ZOMBIE:
            zombies.setdefault((h.line, h.owner, h.to), []).append(h)
    for group in zombies.values():
        h = group[0]
        assert h.ts is not None
        assert h.deadline_ts is not None
        if h.zombie_until_line is not None and h.zombie_until_ts is not None:
            until = (
                f"until it was fenced at line {h.zombie_until_line} "
                f"({seconds(h.zombie_until_ts - h.ts)})"
            )
        else:
            until = "until the trace ends"
        finding = Finding(
            file,
            h.line,
            ZOMBIE_WINDOW.name,
            f"{_partitions(group)} given to {name(h.to)} "
            f"{seconds(h.ts - h.deadline_ts)} after the {h.deadline} of {name(h.owner)} "
            f"expired (last heartbeat at line {h.last_heartbeat_line}); nothing shows "
            f"{name(h.owner)} stopped, so it may still consume it {until}",
        )
        if fail_on_zombie:
            report.violations.append(finding)
        else:
            report.zombie_windows.append(finding)


def seconds(ms: int) -> str:
    """``ms`` as a message shows it: ``0.35 s``."""
    return f"{ms / 1000:.2f} s"
