"""Capture from a real classic-protocol implementation: librdkafka's consumer
(``group.protocol=classic``, a client-side assignor) against librdkafka's mock classic
coordinator, each consumer in a process of its own, all traffic through ``groupcheck
capture``. The capture must be a version 2 classic trace (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit) that the codec reads and ``groupcheck validate --mode safety``
checks (docs/capture.md says what it reports and why).

Churn, once per assignor (eager ``range``, KIP-429's ``cooperative-sticky``): one consumer
joins and takes every partition, a second joins and is given some of them, the first
leaves cleanly (LeaveGroup), the second is killed with SIGKILL, a third joins and takes
every partition. Each step waits for an
event the consumers print (``assigned``, ``owns [...]``); the timeouts are safety nets.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.validate import validate_safety
from model.classic.messages import JoinGroupRequest, JoinGroupResponse, SyncGroupResponse
from model.records import OffsetCommitRequest
from model.trace import decode_action, parse_event
from model.trace.codec import parse_header

pytest.importorskip("confluent_kafka")

HERE = Path(__file__).resolve().parent
PARTITIONS = 4
ALL = f"owns {list(range(PARTITIONS))}"
WAIT = 60.0
SESSION_MS = 3000
"""The classic consumers' session timeout (tests/groupcheck/capture/consumer.py): the mock makes a
rebalance wait for it, so it sets the test's pace."""
"""Seconds any one step may take before the test fails (a safety net: each step ends on
an event, within a few seconds of the mock's timers)."""


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _line(proc: subprocess.Popen[str], stream: str, pattern: str) -> str:
    """The first match of ``pattern`` in the next lines ``proc`` prints."""
    pipe = proc.stdout if stream == "stdout" else proc.stderr
    assert pipe is not None
    end = time.monotonic() + WAIT
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


class ClassicCapture:
    """A mock cluster, a capture proxy in front of it and classic consumers (one assignor
    for all), every process stopped on exit."""

    def __init__(self, out: Path, strategy: str) -> None:
        self.out = out
        self.strategy = strategy
        self.procs: list[subprocess.Popen[str]] = []
        # The session timeout and heartbeat interval are the consumers' (JoinGroup's
        # SessionTimeoutMs, consumer.py); these two only configure KIP-848 groups.
        self.mock = self.spawn(str(HERE / "mock_cluster.py"), "foo", str(PARTITIONS), "2000", "250")
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
        )
        self.bootstrap = _line(self.proxy, "stderr", r"127\.0\.0\.1:\d+")

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        proc = _spawn(*args)
        self.procs.append(proc)
        return proc

    def consumer(self, name: str) -> subprocess.Popen[str]:
        """A classic consumer that runs until SIGTERM (or SIGKILL), at most ``WAIT * 3``
        seconds."""
        return self.spawn(
            str(HERE / "consumer.py"),
            self.bootstrap,
            name,
            str(WAIT * 3),
            "classic",
            self.strategy,
        )

    def finish(self) -> str:
        """Stop the proxy; its stderr (the notes and its last line)."""
        self.proxy.send_signal(signal.SIGTERM)
        assert self.proxy.wait(timeout=WAIT) == 0
        assert self.proxy.stderr is not None
        return self.proxy.stderr.read()

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


@pytest.fixture(params=["cooperative-sticky", "range"])
def capture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClassicCapture]:
    c = ClassicCapture(tmp_path / "capture.ndjson", request.param)
    try:
        yield c
    finally:
        c.close()


def _leave(consumer: subprocess.Popen[str]) -> None:
    """Close ``consumer`` cleanly (SIGTERM: ``close()``, a LeaveGroup)."""
    consumer.send_signal(signal.SIGTERM)
    assert consumer.wait(timeout=WAIT) == 0


def _messages(path: Path) -> list[tuple[int, Any]]:
    """(line, model message) of every event, read with the trace codec."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = parse_header(lines[0])
    out = []
    for n, line in enumerate(lines[1:], 2):
        out.append((n, decode_action(parse_event(line, n), line, n, header).message))
    return out


def test_churn_is_a_classic_trace_the_validator_checks(capture: ClassicCapture) -> None:
    c1 = capture.consumer("c1")
    _line(c1, "stdout", re.escape(ALL))  # alone in the group: every partition
    c2 = capture.consumer("c2")
    _line(c2, "stdout", "assigned")  # c1 gave some up (revoked them first) for c2
    _leave(c1)
    _line(c2, "stdout", re.escape(ALL))  # c2 took c1's partitions in the next generation
    os.kill(c2.pid, signal.SIGKILL)
    c2.wait(timeout=WAIT)
    c3 = capture.consumer("c3")
    _line(c3, "stdout", re.escape(ALL))  # c2's session expired, c3 has everything
    _leave(c3)
    stderr = capture.finish()
    assert re.search(r"capture: [1-9]\d* exchanges written to ", stderr)
    assert "not decoded" not in stderr  # the mock's null SyncGroup assignments too

    # A version 2 classic trace, which the codec reads line by line.
    lines = capture.out.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert (header["version"], header["protocol"]) == (2, "classic")
    messages = _messages(capture.out)
    apis = {type(m.body).__name__ for _, m in messages}
    assert {"JoinGroupRequest", "JoinGroupResponse", "SyncGroupRequest"} <= apis
    assert {"SyncGroupResponse", "HeartbeatRequest", "LeaveGroupRequest"} <= apis
    for (_, req), (_, resp) in zip(messages[::2], messages[1::2], strict=True):
        assert req.to_coordinator
        assert not resp.to_coordinator  # request, then its response
        assert req.client == resp.client

    # Members, generations and assignments, with partitions named by topic name.
    joins = [m.body for _, m in messages if isinstance(m.body, JoinGroupResponse)]
    generations = [j.generation_id for j in joins if j.error_code == 0]
    assert len(set(generations)) >= 3  # joins, the leave and the expiry each rebalance
    leaders = [j for j in joins if j.members]
    assert leaders
    assert all(j.leader == j.member_id for j in leaders)
    assert max(len(j.members) for j in leaders) == 2  # c1 and c2 in one generation
    if capture.strategy == "cooperative-sticky":
        # KIP-429: c1 rejoined still owning its partitions, and revoked some for c2.
        assert any(m.subscription.owned_partitions for j in leaders for m in j.members)
    assert all(m.subscription.topics == {"foo"} for j in leaders for m in j.members)
    requests = [m.body for _, m in messages if isinstance(m.body, JoinGroupRequest)]
    assert requests[0].member_id == ""  # a first join: the coordinator names the member
    assert all(r.protocols == (capture.strategy,) for r in requests)
    given = [m.body.assignment for _, m in messages if isinstance(m.body, SyncGroupResponse)]
    assert any(given)
    assert all(t == "foo" and 0 <= i < PARTITIONS for a in given for t, i in a)
    assert given[-1] == {("foo", i) for i in range(PARTITIONS)}  # c3's, at the end
    clients = {m.client for _, m in messages}
    assert len(clients) == 3  # one per process, across member ids

    # Offset commits at the generation of the committer's last JoinGroup response.
    generation: dict[str, int] = {}
    accepted = 0
    for (_, req), (_, resp) in zip(messages[::2], messages[1::2], strict=True):
        if isinstance(resp.body, JoinGroupResponse) and resp.body.error_code == 0:
            generation[resp.body.member_id] = resp.body.generation_id
        if isinstance(req.body, OffsetCommitRequest) and resp.body.error_code == 0:
            assert req.body.generation_id_or_member_epoch == generation[req.body.member_id]
            assert {t for t, _ in req.body.topics} == {"foo"}  # by name
            accepted += 1
    assert accepted

    # The header: the timing JoinGroup requests show, and the clients' names.
    assert header["session_timeout_ms"] == SESSION_MS  # SessionTimeoutMs of the JoinGroups
    assert header["rebalance_timeout_ms"] > 0
    assert sorted(set(header["clients"].values())) == ["c1", "c2", "c3"]
    (victim,) = [c for c, name in header["clients"].items() if name == "c2"]

    # Safety mode classifies the killed consumer's partitions handed on after its session
    # expired, which a wire capture cannot see; each hand-over's class is checked against
    # the capture's own timestamps (c2's last Heartbeat, JoinGroup or SyncGroup request,
    # + the session timeout, against the response handing the partition on; 100 ms clock tolerance).
    report = validate_safety(str(capture.out), lines)
    assert report.error is None
    events = [json.loads(x) for x in lines[1:]]
    assert report.handovers, "the killed consumer's partitions were handed on"
    for h in report.handovers:
        assert (h["from"], h["from_name"], h["to_name"]) == (victim, "c2", "c3")
        last = max(
            e["ts"]
            for e in events[: h["line"] - 2]
            if e["payload"]["client"] == victim
            and e["payload"]["direction"] == "request"
            and e["payload"]["api"] in ("Heartbeat", "JoinGroup", "SyncGroup")
        )
        premature = h["ts"] + 100 < last + SESSION_MS
        assert h["classification"] == ("premature" if premature else "zombie-window"), h
    premature_lines = sorted(
        {h["line"] for h in report.handovers if h["classification"] == "premature"}
    )
    assert sorted({v.line for v in report.violations}) == premature_lines
    assert {v.property for v in report.violations} <= {"Observed.NoHandOverBeforeExpiry"}
    assert all("of c2 expired" in z.message for z in report.zombie_windows)
    assert main(["validate", "--mode", "safety", str(capture.out)]) == (1 if premature_lines else 0)


def _exchange(conn: int, api_key: int, request: dict[str, Any], response: dict[str, Any]) -> Any:
    from types import SimpleNamespace

    from groupcheck.capture.proxy import _Exchange

    return _Exchange(conn, api_key, SimpleNamespace(**request), SimpleNamespace(**response), (1, 2))


def test_one_protocol_per_trace_and_commits_held_until_it_is_known(tmp_path: Path) -> None:
    """No network: the first group API settles the header's protocol, an OffsetCommit seen
    before it is held and then written with topic names, and the other protocol's
    exchanges (and that member's commits) are skipped with one note each."""
    from types import SimpleNamespace

    from groupcheck.capture import decode as d
    from groupcheck.capture.proxy import Proxy, TraceWriter

    notes: list[str] = []
    trace = TraceWriter(tmp_path / "t.ndjson")
    proxy = Proxy("127.0.0.1", trace, notes.append, names={"foo": "f00-id"})
    trace.open()
    topic = SimpleNamespace(name="foo", partitions=(SimpleNamespace(partition_index=1),))
    part = SimpleNamespace(partition_index=1, error_code=0)
    commit = (
        {
            "group_id": "g",
            "member_id": "m1",
            "generation_id_or_member_epoch": 1,
            "topics": (topic,),
        },
        {"topics": (SimpleNamespace(name="foo", partitions=(part,)),)},
    )
    proxy._exchange(_exchange(1, d.OFFSET_COMMIT, *commit))
    assert trace.protocol is None  # held: OffsetCommit belongs to both protocols
    heartbeat = (
        {"group_id": "g", "member_id": "m1", "generation_id": 1, "group_instance_id": None},
        {"error_code": 0},
    )
    proxy._exchange(_exchange(1, d.HEARTBEAT, *heartbeat))
    cgh = (
        {"group_id": "g", "member_id": "k1", "member_epoch": 0},
        {"error_code": 0},
    )
    proxy._exchange(_exchange(2, d.CONSUMER_GROUP_HEARTBEAT, *cgh))  # skipped: consumer
    k_commit = ({**commit[0], "member_id": "k1"}, commit[1])
    proxy._exchange(_exchange(2, d.OFFSET_COMMIT, *k_commit))  # skipped: k1's protocol
    proxy._exchange(_exchange(3, d.HEARTBEAT, {**heartbeat[0], "group_id": "other"}, heartbeat[1]))
    trace.close()
    lines = (tmp_path / "t.ndjson").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["protocol"] == "classic"
    messages = _messages(tmp_path / "t.ndjson")
    assert [type(m.body).__name__ for _, m in messages] == [
        "OffsetCommitRequest",
        "OffsetCommitResponse",
        "HeartbeatRequest",
        "HeartbeatResponse",
    ]
    assert messages[0][1].body.topics == {("foo", 1)}  # a name, not the topic id
    assert {m.client for _, m in messages} == {"m1"}
    assert len(notes) == 3
    assert "ConsumerGroupHeartbeat" in notes[0]
    assert "other protocol" in notes[1]
    assert "'other'" in notes[2]
