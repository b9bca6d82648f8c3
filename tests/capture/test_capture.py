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
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.validate import validate_safety

HERE = Path(__file__).resolve().parent
SESSION_MS = 2000
INTERVAL_MS = 250

pytest.importorskip("confluent_kafka")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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

    def __init__(self, out: Path) -> None:
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
        )
        self.bootstrap = _line(self.proxy, "stderr", r"127\.0\.0\.1:\d+")

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        proc = _spawn(*args)
        self.procs.append(proc)
        return proc

    def consumer(self, name: str, seconds: float) -> subprocess.Popen[str]:
        return self.spawn(str(HERE / "consumer.py"), self.bootstrap, name, str(seconds))

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
    c = Capture(tmp_path / "capture.ndjson")
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
    report = validate_safety(str(capture.out), capture.out.read_text().splitlines(), settle=5)
    assert report.error is None
    assert report.violations == []

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
    report = validate_safety(str(edited), lines, settle=5)
    assert report.violations, "the edited capture must be reported"
    assert report.violations[0].line == edited_line


def test_a_killed_consumer(capture: Capture, tmp_path: Path) -> None:
    survivors = [capture.consumer("c1", 9.0), capture.consumer("c2", 9.0)]
    victim = capture.consumer("c3", 30.0)
    _line(victim, "stdout", "assigned", timeout=30)
    time.sleep(0.5)
    os.kill(victim.pid, signal.SIGKILL)
    for c in survivors:
        assert c.wait(timeout=60) == 0
    capture.finish()
    events = _events(capture.out)
    joined, left = _requests(events, 0), _requests(events, -1)
    assert len(joined) == 3
    (victim_member,) = joined - left  # the killed process never sent a leave heartbeat
    report = validate_safety(str(capture.out), capture.out.read_text().splitlines(), settle=5)
    assert report.error is None
    # docs/capture.md explains this report: the coordinator expired the killed member's
    # session and handed its partitions on, and a wire capture cannot see the expiry.
    assert {v.property for v in report.violations} == {"Observed.NoDoubleOwnership"}
    for v in report.violations:
        assert f"while {victim_member} has not released it" in v.message


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
