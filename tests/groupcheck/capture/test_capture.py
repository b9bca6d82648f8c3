"""Capture from a real KIP-848 implementation: librdkafka's consumer against librdkafka's
mock coordinator, each consumer in a process of its own, all traffic through
``groupcheck capture``; the captures are checked with ``groupcheck validate``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.validate import validate_safety
from groupcheck.validate.coordinator_mode import validate_coordinator
from groupcheck.validate.timing import TimingOptions

HERE = Path(__file__).resolve().parent
SESSION_MS = 2000
INTERVAL_MS = 250

pytest.importorskip("confluent_kafka")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(proc: subprocess.Popen[str], stream: str, pattern: str, timeout: float = 20) -> str:
    pipe = proc.stdout if stream == "stdout" else proc.stderr
    assert pipe is not None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = pipe.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        m = re.search(pattern, line)
        if m:
            return m.group(0)
    raise AssertionError(f"no line matching {pattern!r}")


class Capture:
    """A mock cluster and a capture proxy in front of it, stopped on exit."""

    def __init__(self, out: Path, *options: str) -> None:
        self.out = out
        self.procs: list[subprocess.Popen[str]] = []
        self.mock = self.spawn(
            str(HERE / "mock_cluster.py"), "foo", "4", str(SESSION_MS), str(INTERVAL_MS)
        )
        upstream = _line(self.mock, "stdout", r"[\d.]+:\d+")
        self.proxy = self.spawn(
            "-m",
            "groupcheck",
            "capture",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--out",
            str(out),
            *options,
        )
        self.bootstrap = _line(self.proxy, "stderr", r"127\.0\.0\.1:\d+")

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        proc = _spawn(*args)
        self.procs.append(proc)
        return proc

    def consumer(self, name: str, seconds: float, *extra: str) -> subprocess.Popen[str]:
        return self.spawn(str(HERE / "consumer.py"), self.bootstrap, name, str(seconds), *extra)

    def members(self) -> set[str]:
        """The member ids whose heartbeats the capture has recorded so far."""
        partial = self.out.with_name(f".{self.out.name}.partial")
        if not partial.exists():
            return set()
        found = set()
        for line in partial.read_text(encoding="utf-8").splitlines():
            try:
                e = json.loads(line)
            except json.JSONDecodeError:  # a line being written
                continue
            body = e.get("payload", {}).get("body", {})
            if e.get("payload", {}).get("api") == "ConsumerGroupHeartbeat" and body.get("MemberId"):
                found.add(body["MemberId"])
        return found

    def responses_to(self, member: str) -> int:
        """How many ConsumerGroupHeartbeat responses to ``member`` the capture has recorded
        so far."""
        partial = self.out.with_name(f".{self.out.name}.partial")
        if not partial.exists():
            return 0
        count = 0
        for line in partial.read_text(encoding="utf-8").splitlines():
            try:
                p = json.loads(line).get("payload", {})
            except json.JSONDecodeError:  # a line being written
                continue
            if (
                p.get("api") == "ConsumerGroupHeartbeat"
                and p.get("direction") == "response"
                and p.get("body", {}).get("MemberId") == member
            ):
                count += 1
        return count

    def finish(self) -> None:
        self.proxy.send_signal(signal.SIGTERM)
        self.proxy.wait(timeout=20)

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


@pytest.fixture
def capture(tmp_path: Path) -> Iterator[Capture]:
    # The session timeout is the mock's group setting, not on the wire: given as an option.
    c = Capture(tmp_path / "capture.ndjson", "--session-timeout-ms", str(SESSION_MS), "--control")
    try:
        yield c
    finally:
        c.close()


def _events(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def _requests(events: list[dict], epoch: int) -> set[str]:  # type: ignore[type-arg]
    return {
        e["payload"]["body"]["MemberId"]
        for e in events
        if e["payload"]["api"] == "ConsumerGroupHeartbeat"
        and e["payload"]["direction"] == "request"
        and e["payload"]["body"]["MemberEpoch"] == epoch
    }


def test_joins_and_clean_leaves_are_valid_and_an_early_hand_out_is_caught(
    capture: Capture, tmp_path: Path
) -> None:
    consumers = []
    started = time.time()
    for i, name in enumerate(("c1", "c2", "c3")):
        consumers.append(capture.consumer(name, 5.0 - i))
        time.sleep(0.7)
    for c in consumers:
        assert c.wait(timeout=60) == 0
    capture.finish()
    events = _events(capture.out)
    stamps = [e["ts"] for e in events]
    assert all(isinstance(t, int) for t in stamps)  # Unix ms when the proxy forwarded it
    assert abs(stamps[0] / 1000 - started) < 60
    for e, f in zip(events[::2], events[1::2], strict=True):  # request, then its response
        assert e["payload"]["direction"] == "request"
        assert f["payload"]["direction"] == "response"
        assert e["ts"] <= f["ts"]
    assert len(_requests(events, 0)) == 3  # three members joined …
    assert len(_requests(events, -1)) == 3  # … and left with a leave heartbeat
    report = _validate(capture.out.read_text().splitlines())
    assert report.windows, "convergence was checked"
    assert report.violations == []  # every window converged, nothing else found
    assert report.handovers == []  # every partition was released before it moved

    # Replayed through the model's coordinator: every response agrees, or the first that
    # does not is reported with the model's response and Kafka's rule (docs/capture.md
    # says which librdkafka's mock gives).
    replay = validate_coordinator("capture", capture.out.read_text().splitlines())
    assert replay.error is None
    for v in replay.violations:
        assert v.property == "Coordinator.Divergence"
        assert "the model's coordinator answers" in v.message
        assert "Kafka's rule" in v.message

    # Edit the capture: give a partition another member still owns to a second member.
    lines = capture.out.read_text(encoding="utf-8").splitlines()
    owned: dict[str, set[tuple[str, int]]] = {}
    edited_line = None
    for n, line in enumerate(lines[1:], 2):
        e = json.loads(line)
        p = e["payload"]
        if p["api"] != "ConsumerGroupHeartbeat":
            continue
        body = p["body"]
        if p["direction"] == "request" and "TopicPartitions" in body:
            owned[body["MemberId"]] = {
                (t["TopicId"], i) for t in body["TopicPartitions"] for i in t["Partitions"]
            }
        if p["direction"] == "response" and "Assignment" in body:
            me = body["MemberId"]
            others = [tp for m, tps in owned.items() if m != me for tp in tps]
            given = {
                (t["TopicId"], i)
                for t in body["Assignment"]["TopicPartitions"]
                for i in t["Partitions"]
            }
            steal = [tp for tp in others if tp not in given]
            if steal:
                topic, index = steal[0]
                body["Assignment"]["TopicPartitions"].append(
                    {"TopicId": topic, "Partitions": [index]}
                )
                lines[n - 1] = json.dumps(e, sort_keys=True)
                edited_line = n
                break
    assert edited_line is not None
    edited = tmp_path / "edited.ndjson"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate_safety(
        str(edited), lines, settle=5, timing=TimingOptions(settle_ms=4 * INTERVAL_MS)
    )
    assert report.violations, "the edited capture must be reported"
    assert report.violations[0].line == edited_line


class Lines:
    """The stdout lines of consumer processes, read by threads as they come."""

    def __init__(self, procs: dict[str, subprocess.Popen[str]]) -> None:
        self.lines: dict[str, list[str]] = {name: [] for name in procs}
        self.threads = [
            threading.Thread(target=self._read, args=(name, p), daemon=True)
            for name, p in procs.items()
        ]
        for t in self.threads:
            t.start()

    def _read(self, name: str, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines[name].append(line.strip())

    def owns(self, name: str) -> list[int]:
        """What the consumer last said it owns."""
        said = [x for x in self.lines[name] if x.startswith("owns ")]
        return json.loads(said[-1][5:]) if said else []

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
        """Wait until ``condition`` holds (polled 600 times at most)."""
        for _ in range(600):
            if condition():
                return
            time.sleep(timeout / 600)
        raise AssertionError(f"timed out waiting until {what}: {self.lines}")


def _parts(entries: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(t["TopicId"], i) for t in entries for i in t["Partitions"]}


def _hand_overs_of(events: list[dict[str, Any]], victim: str) -> list[dict[str, Any]]:
    """Read the capture independently of the validator: every response giving another
    member a partition the victim had been given or reported and never released, with the
    victim's last heartbeat before it — and the class the timing gives it (the victim's
    session ends at its last heartbeat request + SESSION_MS; the validator's default clock
    tolerance is 100 ms). A hand-over the victim's next request released concurrently (sent
    before the giving response came back: the coordinator may have handled it first,
    docs/trace-format.md "Exchanges handled in either order") is none."""
    holds: set[tuple[str, int]] = set()
    last_hb: int | None = None
    out = []
    for n, e in enumerate(events, 2):
        p = e["payload"]
        if e["kind"] != "DeliverMessage" or p["api"] != "ConsumerGroupHeartbeat":
            continue
        body = p["body"]
        if p["direction"] == "request" and body["MemberId"] == victim:
            last_hb = e["ts"]
            if body["MemberEpoch"] < 0:
                holds = set()
            elif "TopicPartitions" in body:
                holds = _parts(body["TopicPartitions"])
        elif p["direction"] == "response" and "Assignment" in body and body["ErrorCode"] == 0:
            given = _parts(body["Assignment"]["TopicPartitions"])
            if body["MemberId"] == victim:
                holds |= given
            elif given & holds:
                assert last_hb is not None
                if _released_concurrently(events[n - 1 :], victim, given & holds, e["ts"]):
                    holds -= given
                    continue
                deadline = last_hb + SESSION_MS
                premature = e["ts"] + 100 < deadline
                out.append({"line": n, "ts": e["ts"], "deadline": deadline, "premature": premature})
                holds -= given
    return out


def _released_concurrently(
    after: list[dict[str, Any]], victim: str, parts: set[tuple[str, int]], answered: int
) -> bool:
    """Whether the victim's next heartbeat request after a response (answered at
    ``answered``) was sent before that response came back and releases ``parts`` (a leave,
    or partitions reported without them)."""
    for e in after:
        p = e["payload"]
        if e["kind"] != "DeliverMessage" or p["api"] != "ConsumerGroupHeartbeat":
            continue
        body = p["body"]
        if p["direction"] == "request" and body["MemberId"] == victim:
            if e["ts"] > answered:
                return False
            if body["MemberEpoch"] < 0:
                return True
            reported = body.get("TopicPartitions")
            return reported is not None and not (_parts(reported) & parts)
    return False


def _merge_crash(path: Path, member: str, ts: int) -> list[str]:
    """The capture's lines with a ``Crash`` of ``member`` at ``ts`` among them, in time
    order: what a client-side log of the death adds to the wire's record."""
    lines = path.read_text(encoding="utf-8").splitlines()
    crash = json.dumps(
        {
            "seq": 0,
            "ts": ts,
            "source": f"client:{member}",
            "kind": "Crash",
            "payload": {"client": member},
        }
    )
    at = next((i for i, x in enumerate(lines[1:], 1) if json.loads(x)["ts"] > ts), len(lines))
    return [*lines[:at], crash, *lines[at:]]


def _check_classes(report: Any, expected: list[dict[str, Any]], after_expiry: str) -> None:
    """The validator classifies each hand-over as the independent reading does: premature
    ones as Observed.NoHandOverBeforeExpiry violations, the others as ``after_expiry``."""
    got = {}
    for h in report.handovers:
        got.setdefault(h["line"], set()).add(h["classification"])
    assert sorted(got) == [h["line"] for h in expected]
    for h in expected:
        assert got[h["line"]] == {"premature" if h["premature"] else after_expiry}, h
    premature_lines = [h["line"] for h in expected if h["premature"]]
    assert [
        v.line for v in report.violations if v.property == "Observed.NoHandOverBeforeExpiry"
    ] == premature_lines


def _validate(lines: list[str], fail_on_zombie: bool = False) -> Any:
    """Safety mode as a capture is validated: convergence required of quiet windows of 5
    events and 4 heartbeat intervals. Each window checked is listed with its verdict, and
    a window that did not converge is an Observed.Convergence violation at its end."""
    options = TimingOptions(fail_on_zombie=fail_on_zombie, settle_ms=4 * INTERVAL_MS)
    report = validate_safety("capture", lines, settle=5, timing=options)
    assert report.error is None
    unconverged = [w["last_line"] for w in report.windows if not w["converged"]]
    convergence = [v.line for v in report.violations if v.property == "Observed.Convergence"]
    assert convergence == unconverged
    assert all(w["ms"] >= 4 * INTERVAL_MS and w["events"] >= 5 for w in report.windows)
    return report


def _header(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_a_killed_consumer(capture: Capture, tmp_path: Path) -> None:
    """SIGKILL: the victim's partitions go to the survivors once its session expired. From
    the wire alone the victim may be a zombie (Observed.ZombieWindow, not a violation);
    with its death merged in as a Crash the hand-over is valid."""
    survivors = [capture.consumer("c1", 9.0), capture.consumer("c2", 9.0)]
    victim = capture.consumer("c3", 30.0)
    _line(victim, "stdout", "assigned", timeout=30)
    time.sleep(0.5)
    killed_at = time.time_ns() // 1_000_000
    os.kill(victim.pid, signal.SIGKILL)
    for c in survivors:
        assert c.wait(timeout=60) == 0
    capture.finish()
    header = _header(capture.out)
    assert header["session_timeout_ms"] == SESSION_MS  # the option
    assert header["heartbeat_interval_ms"] == INTERVAL_MS  # the wire
    assert header["topics"] == {"foo": 4}
    assert set(header["topic_names"].values()) == {"foo"}
    assert sorted(header["clients"].values()) == ["c1", "c2", "c3"]
    events = _events(capture.out)
    joined, left = _requests(events, 0), _requests(events, -1)
    assert len(joined) == 3
    (victim_member,) = joined - left  # the killed process never sent a leave heartbeat
    assert header["clients"][victim_member] == "c3"
    expected = _hand_overs_of(events, victim_member)
    assert expected, "the victim's partitions were handed on"
    wire = _validate(capture.out.read_text().splitlines())
    assert wire.error is None
    _check_classes(wire, expected, "zombie-window")
    assert all("c3" in z.message for z in wire.zombie_windows)
    assert all("foo-" in z.message for z in wire.zombie_windows)
    merged = _merge_crash(capture.out, victim_member, killed_at)
    report = _validate(merged)
    assert report.error is None
    expected = _hand_overs_of([json.loads(x) for x in merged[1:]], victim_member)
    _check_classes(report, expected, "after-expiry-owner-dead")
    assert report.zombie_windows == []
    assert [v for v in report.violations if v.property == "Observed.NoDoubleOwnership"] == []


def test_a_consumer_cut_off_by_a_network_partition(capture: Capture) -> None:
    """The proxy drops all of c3's traffic (``cut``) while c3 runs on: the coordinator
    expires its session and hands its partitions on — a zombie window, c3 alive and
    holding them — until the cut heals, its connections are severed and its next
    heartbeat is fenced."""
    procs = {
        "c1": capture.consumer("c1", 40.0),
        "c2": capture.consumer("c2", 40.0),
        "c3": capture.consumer("c3", 40.0),
    }
    out = Lines(procs)
    out.wait(lambda: all(out.owns(n) for n in procs), "every consumer owns a partition")
    time.sleep(0.5)
    held = out.owns("c3")
    control(capture, "cut c3")
    out.wait(
        lambda: sorted(out.owns("c1") + out.owns("c2")) == [0, 1, 2, 3],
        "the survivors own every partition",
    )
    assert out.owns("c3") == held  # c3 never learnt: it still holds them
    control(capture, "heal c3")
    control(capture, "sever c3")
    out.wait(lambda: out.owns("c3") != held, "c3 learns it lost its partitions")
    for p in procs.values():
        p.send_signal(signal.SIGTERM)
    for p in procs.values():
        assert p.wait(timeout=60) == 0
    capture.finish()
    events = _events(capture.out)
    header = _header(capture.out)
    (victim,) = [m for m, c in header["clients"].items() if c == "c3"]
    expected = _hand_overs_of(events, victim)
    assert expected, "c3's partitions were handed on"
    report = _validate(capture.out.read_text().splitlines())
    assert report.error is None
    _check_classes(report, expected, "zombie-window")
    fenced = any(
        e["payload"]["client"] == victim
        and e["payload"]["direction"] == "response"
        and e["payload"]["body"]["ErrorCode"] in (25, 110)
        for e in events
    )
    zombies = [h for h in expected if not h["premature"]]
    # One finding per hand-over line: c3 alive behind its expired session, until the
    # response that fenced it when it came back (docs/capture.md says what the mock did).
    assert sorted(z.line for z in report.zombie_windows) == sorted({h["line"] for h in zombies})
    for z in report.zombie_windows:
        assert "of c3 expired" in z.message
        assert ("until it was fenced at line" in z.message) == fenced
    strict = validate_safety(
        "strict",
        capture.out.read_text().splitlines(),
        settle=5,
        timing=TimingOptions(fail_on_zombie=True),
    )
    assert sorted(v.line for v in strict.violations if v.property == "Observed.ZombieWindow") == (
        sorted({h["line"] for h in zombies})
    )


def test_a_severed_connection(capture: Capture) -> None:
    """The proxy closes c2's connections while it is a member: c2 reconnects and heartbeats
    on. Whatever the coordinator does, each hand-over of c2's unreleased partitions is
    classified by its timing."""
    procs = {"c1": capture.consumer("c1", 8.0), "c2": capture.consumer("c2", 8.0)}
    out = Lines(procs)
    out.wait(lambda: all(out.owns(n) for n in procs), "both consumers own a partition")
    control(capture, "sever c2")
    for p in procs.values():
        assert p.wait(timeout=60) == 0
    capture.finish()
    events = _events(capture.out)
    header = _header(capture.out)
    (victim,) = [m for m, c in header["clients"].items() if c == "c2"]
    assert len([e for e in events if e["payload"]["client"] == victim]) > 4
    report = _validate(capture.out.read_text().splitlines())
    assert report.error is None
    _check_classes(report, _hand_overs_of(events, victim), "zombie-window")
    assert [v.property for v in report.violations] == []


def control(capture: Capture, command: str) -> None:
    """Send a control command to the proxy and wait for its acknowledgement."""
    assert capture.proxy.stdin is not None
    capture.proxy.stdin.write(command + "\n")
    capture.proxy.stdin.flush()
    _line(capture.proxy, "stderr", f"control: {re.escape(command)}")


SLOW_ASSIGN_S = 4.0
"""How long c2's rebalance callback takes over its first assignment."""


def _stale_target_run(capture: Capture, heartbeat_fails: bool) -> Lines:
    """c1 owns foo's four partitions; c2 joins and is given two of them, and its
    rebalance callback takes SLOW_ASSIGN_S over them; meanwhile c3 joins, so that the
    target no longer gives c2 both. With ``heartbeat_fails``, c2 is cut off before c3
    joins and its connections are severed once c3 has heartbeated, so the heartbeat c2
    had in flight fails with a transport error (librdkafka then sends a full request).
    Ends once c2 has applied its first assignment and then a later one."""
    procs = {"c1": capture.consumer("c1", 40.0)}
    out = Lines(procs)
    out.wait(lambda: out.owns("c1") == [0, 1, 2, 3], "c1 owns every partition")
    procs["c2"] = capture.consumer("c2", 40.0, "slow-assign", str(SLOW_ASSIGN_S))
    procs["c3"] = capture.consumer("c3", 40.0, "on-cue")
    more = Lines({"c2": procs["c2"], "c3": procs["c3"]})
    more.wait(lambda: "ready" in more.lines["c3"], "c3 is ready to join")
    more.wait(lambda: any(x.startswith("applying") for x in more.lines["c2"]), "c2 applies")
    if heartbeat_fails:
        before = capture.members()
        control(capture, "cut c2")
        cut_at = time.monotonic()
    assert procs["c3"].stdin is not None
    procs["c3"].stdin.write("join\n")
    procs["c3"].stdin.flush()
    if heartbeat_fails:
        # c3's join is recorded, and c2 has sent a heartbeat since the cut (it has one
        # in flight), well inside c2's session.
        out.wait(lambda: len(capture.members()) == 3, "c3 has joined", timeout=SESSION_MS / 2000)
        (c3,) = capture.members() - before
        time.sleep(max(0.0, cut_at + 3 * INTERVAL_MS / 1000 - time.monotonic()))
        # Sever just after one of c3's heartbeats was answered: c2 reconnects and sends its
        # full request (about 100 ms) before c3's next heartbeat (INTERVAL_MS), so that the
        # mock's forgetting c2's assignment at the closed connection cannot hand the
        # partition to c3 first (a premature hand-over, not F1).
        seen = capture.responses_to(c3)
        out.wait(lambda: capture.responses_to(c3) > seen, "c3 heartbeated", timeout=2.0)
        control(capture, "heal c2")
        control(capture, "sever c2")
    more.wait(
        lambda: len([x for x in more.lines["c2"] if x.startswith("owns ")]) >= 2,
        "c2 applied its first assignment and a later one",
    )
    for p in procs.values():
        p.send_signal(signal.SIGTERM)
    for p in procs.values():
        assert p.wait(timeout=60) == 0
    capture.finish()
    return more


def _stale_target(events: list[dict[str, Any]], member: str) -> dict[str, Any]:
    """Read the capture independently of the validator: the first partitions the member
    was given (``given``, at ``epoch``, line ``given_line``), the first request in which
    it reports owning them all (``applied_line``: its reconciliation of them is done),
    the member's requests in between (``between``: line, MemberEpoch, the partitions
    reported or None when the request has no TopicPartitions), and every response
    giving another member one of them before ``applied_line`` (``moved``: line,
    partitions, member)."""
    given: set[tuple[str, int]] = set()
    found: dict[str, Any] = {"between": [], "moved": []}
    for n, e in enumerate(events, 2):
        p = e["payload"]
        if p["api"] != "ConsumerGroupHeartbeat":
            continue
        body = p["body"]
        if not given:
            if p["direction"] == "response" and body["MemberId"] == member:
                given = _parts((body.get("Assignment") or {}).get("TopicPartitions", []))
                found.update(given=given, epoch=body["MemberEpoch"], given_line=n)
            continue
        reported = _parts(body["TopicPartitions"]) if "TopicPartitions" in body else None
        if p["direction"] == "request" and body["MemberId"] == member:
            if reported is not None and given <= reported:
                found["applied_line"] = n
                return found
            found["between"].append((n, body["MemberEpoch"], reported))
        elif p["direction"] == "response" and body["MemberId"] != member and body["ErrorCode"] == 0:
            moved = given & _parts((body.get("Assignment") or {}).get("TopicPartitions", []))
            if moved:
                found["moved"].append((n, moved, body["MemberId"]))
    raise AssertionError(f"{member} never reported owning what it was first given")


def _double_ownership(report: Any, line: int) -> list[str]:
    return [
        v.message
        for v in report.violations
        if v.property == "Observed.NoDoubleOwnership" and v.line == line
    ]


def test_a_stale_target_applied_after_a_plain_heartbeat(capture: Capture) -> None:
    """F1's shape (docs/findings.md) with no fault at all: c2's slow rebalance callback
    is applying its first target while c3 joins. librdkafka's heartbeats meanwhile carry
    no TopicPartitions; Kafka's coordinator takes such a member to hold its whole
    assignment, but librdkafka's mock takes the last set it reported (none) and moves c2
    on at once, handing the partition to c3 — and c2, whose running reconciliation the
    newer target does not abort, then applies the stale one. The validator reports the
    double ownership at c2's acknowledgement; the model's coordinator answers that plain
    heartbeat differently (c2 keeps its epoch)."""
    _stale_target_run(capture, heartbeat_fails=False)
    events = _events(capture.out)
    header = _header(capture.out)
    names = {c: m for m, c in header["clients"].items()}
    found = _stale_target(events, names["c2"])
    # Every heartbeat c2 sent while applying its first target was a plain one.
    assert found["between"], "c2 heartbeated while its rebalance callback ran"
    assert all(reported is None for _, _, reported in found["between"])
    assert found["moved"], "a partition of c2's first target went to c3 before c2 applied it"
    moved_line, moved, to = found["moved"][0]
    assert header["clients"][to] == "c3"
    report = _validate(capture.out.read_text().splitlines())
    messages = _double_ownership(report, found["applied_line"])
    assert messages, report.violations
    for _, index in moved:
        assert any(
            f"c2 reports owning foo-{index} while c3 has not released it" in m for m in messages
        )
    # The mock moved c2 on at one of its plain heartbeats: the response to it took the
    # moved partitions away at a new epoch. Kafka's rule keeps c2 at its epoch there.
    released = [
        n
        for n, e in enumerate(events, 2)
        if n < moved_line
        and e["payload"]["direction"] == "response"
        and e["payload"]["body"]["MemberId"] == names["c2"]
        and e["payload"]["body"]["MemberEpoch"] > found["epoch"]
    ]
    assert released
    replay = validate_coordinator(
        "capture", capture.out.read_text().splitlines(), all_divergences=True
    )
    assert any(
        f"line {released[0]} (c2): MemberEpoch" in note
        and f"the model's coordinator answers ErrorCode NONE (0), MemberEpoch {found['epoch']},"
        in note
        for note in replay.notes
    ), replay.notes


def test_a_stale_target_applied_after_a_failed_heartbeat(capture: Capture) -> None:
    """F1 as the Java client shows it (docs/findings.md), by librdkafka's own requests:
    c2's slow rebalance callback is applying its first target (given at epoch E) when
    its heartbeat fails with a transport error; its next heartbeat is a full request at
    epoch E carrying its last acknowledged assignment (empty), without the partitions it
    is applying. Meanwhile c3 joined and the target moved a partition to c3; on that
    request Kafka's rule (the model's coordinator agrees with the mock) moves c2 on and
    releases the partition, the coordinator then gives it to c3, and c2, whose running
    reconciliation the newer target does not abort, applies it. The validator reports the
    double ownership at c2's acknowledgement. The test asserts that order: the mock may
    hand the partition over before the full request (it forgets a member's assignment
    when its connection closes: a premature hand-over, not F1), which the run avoids by
    severing c2 just after one of c3's heartbeats was answered."""
    _stale_target_run(capture, heartbeat_fails=True)
    events = _events(capture.out)
    header = _header(capture.out)
    names = {c: m for m, c in header["clients"].items()}
    found = _stale_target(events, names["c2"])
    # The F1 heartbeat: at the epoch that gave the partitions, reporting a set without
    # some of them, while c2 was still applying them.
    f1 = [
        (n, reported)
        for n, epoch, reported in found["between"]
        if epoch == found["epoch"] and reported is not None and not found["given"] <= reported
    ]
    assert f1, found["between"]
    f1_line, f1_reported = f1[0]
    response = f1_line + 1
    body = events[response - 2]["payload"]["body"]
    assert events[response - 2]["payload"]["direction"] == "response"
    assert body["MemberId"] == names["c2"]
    assert found["moved"], "a partition of c2's first target went to c3 before c2 applied it"
    moved = set().union(*(m for _, m, _ in found["moved"]))
    assert moved <= found["given"] - f1_reported
    assert {header["clients"][to] for _, _, to in found["moved"]} == {"c3"}
    # F1's order, not the mock's premature hand-over at the closed connection: until the
    # F1 heartbeat the coordinator kept c2 at the epoch that gave the partitions (no
    # response moved it on), it released them on that heartbeat (below), and only then
    # gave them to c3.
    assert not [
        n
        for n, e in enumerate(events, 2)
        if found["given_line"] < n < response
        and e["payload"]["direction"] == "response"
        and e["payload"]["body"]["MemberId"] == names["c2"]
        and e["payload"]["body"]["MemberEpoch"] != found["epoch"]
    ], "the coordinator moved c2 on before its full request"
    assert min(line for line, _, _ in found["moved"]) > response, (
        "the partition went to c3 before the F1 heartbeat released it (premature, not F1)",
        found["moved"],
        response,
    )
    report = _validate(capture.out.read_text().splitlines())
    messages = _double_ownership(report, found["applied_line"])
    assert messages, report.violations
    for _, index in moved:
        assert any(
            f"c2 reports owning foo-{index} while c3 has not released it" in m for m in messages
        )
    hand_overs = _hand_overs_of(events, names["c2"])
    _check_classes(report, hand_overs, "zombie-window")
    assert not [h for h in hand_overs if h["premature"]]  # released first: F1's hand-out
    # Kafka's rule answers the F1 heartbeat as the mock did: c2 moves on to the new epoch
    # without the moved partitions (it reported not owning them).
    assert body["MemberEpoch"] > found["epoch"]
    assert not moved & _parts(body["Assignment"]["TopicPartitions"])
    replay = validate_coordinator(
        "capture", capture.out.read_text().splitlines(), all_divergences=True
    )
    assert not [n for n in replay.notes if f"line {response} (c2)" in n], replay.notes
    assert not [v for v in replay.violations if v.line == response]


def test_listen_must_be_loopback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "x.ndjson"
    assert (
        main(
            [
                "capture",
                "--listen",
                "10.1.2.3:9092",
                "--upstream",
                "127.0.0.1:9092",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "loopback" in capsys.readouterr().err
    assert main(["capture", "--listen", "127.0.0.1", "--upstream", "x:1", "--out", str(out)]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
    assert not out.exists()


def test_ctrl_c_while_a_consumer_is_connected(capture: Capture) -> None:
    """Ctrl-C is the documented way to end a capture: with a consumer still heartbeating
    through the proxy, the trace gets its final name with whole exchanges, the proxy says
    one line and exits 0."""
    consumer = capture.consumer("c1", 30.0)
    _line(consumer, "stdout", "assigned", timeout=30)  # it has joined through the proxy
    capture.proxy.send_signal(signal.SIGINT)
    assert capture.proxy.wait(timeout=20) == 0
    assert consumer.poll() is None  # the client was still connected
    assert capture.proxy.stderr is not None
    rest = capture.proxy.stderr.read()
    assert re.fullmatch(
        rf"capture: [1-9]\d* exchanges written to {re.escape(str(capture.out))}\n", rest
    )
    assert not list(capture.out.parent.glob(".*.partial"))
    events = _events(capture.out)
    assert events
    for e, f in zip(events[::2], events[1::2], strict=True):  # whole exchanges only
        assert (e["payload"]["direction"], f["payload"]["direction"]) == ("request", "response")
    assert _requests(events, 0) == {events[0]["payload"]["body"]["MemberId"]}
