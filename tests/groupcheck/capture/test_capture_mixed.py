"""Capture of a mixed group (KIP-848 "Online Migration": members of both protocols in
one group): a librdkafka consumer with ``group.protocol=classic`` and one with
``group.protocol=consumer``, the same group id, through ``groupcheck capture --mixed``.

librdkafka's mock cluster keeps a classic group and a consumer group of one id apart (it
has no online migration), so each consumer is alone in its own group and takes every
partition: the capture is a ``mixed`` trace (version 3) that safety mode reports as
``Observed.NoDoubleOwnership`` across protocols — what a broker without migration support
does to such a group, and what docs/capture.md says of the mock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_capture_classic import ALL, HERE, PARTITIONS, WAIT, ClassicCapture, _leave, _line

from groupcheck.cli import main
from groupcheck.validate import validate_safety

pytest.importorskip("confluent_kafka")


class MixedCapture(ClassicCapture):
    """A mock cluster, ``capture --mixed`` in front of it, consumers of either protocol."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.strategy = "range"
        self.procs = []
        self.mock = self.spawn(str(HERE / "mock_cluster.py"), "foo", str(PARTITIONS), "2000", "250")
        upstream = _line(self.mock, "stdout", r"[\d.]+:\d+")
        self.proxy = self.spawn(
            "-m", "groupcheck", "capture", "--mixed", "--listen", "127.0.0.1:0",
            "--upstream", upstream, "--out", str(out),
        )  # fmt: skip
        self.bootstrap = _line(self.proxy, "stderr", r"127\.0\.0\.1:\d+")

    def kip848(self, name: str) -> object:
        return self.spawn(str(HERE / "consumer.py"), self.bootstrap, name, str(WAIT * 3))


@pytest.fixture
def capture(tmp_path: Path) -> Iterator[MixedCapture]:
    c = MixedCapture(tmp_path / "capture.ndjson")
    try:
        yield c
    finally:
        c.close()


def test_the_mock_keeps_the_two_protocols_apart_and_safety_mode_says_so(
    capture: MixedCapture,
) -> None:
    c1 = capture.consumer("c1")  # classic, range
    _line(c1, "stdout", re.escape(ALL))
    c2 = capture.kip848("c2")
    _line(c2, "stdout", re.escape(ALL))  # the mock gave it every partition too
    _leave(c2)  # type: ignore[arg-type]
    _leave(c1)
    stderr = capture.finish()
    assert "skipped" not in stderr  # --mixed records both protocols
    lines = capture.out.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert (header["version"], header["protocol"]) == (3, "mixed")
    apis = {json.loads(x)["payload"]["api"] for x in lines[1:]}
    assert {"JoinGroup", "SyncGroup", "ConsumerGroupHeartbeat"} <= apis
    report = validate_safety(str(capture.out), lines)
    assert report.error is None
    assert report.protocol == "mixed"
    # c1's session (3 s, its JoinGroup's) had not expired: a premature hand-over.
    (finding,) = report.violations
    assert finding.property == "Observed.NoHandOverBeforeExpiry", finding
    (h,) = {(h["from_name"], h["to_name"], h["classification"]) for h in report.handovers}
    assert h == ("c1", "c2", "premature")
    assert main(["validate", "--mode", "safety", str(capture.out)]) == 1
    # Without timing, the same overlap is a plain double ownership across protocols.
    untimed = [json.dumps({k: v for k, v in header.items() if k != "session_timeout_ms"})]
    untimed += [json.dumps({**json.loads(x), "ts": None}) for x in lines[1:]]
    report = validate_safety(str(capture.out), untimed)
    (finding,) = report.violations
    assert finding.property == "Observed.NoDoubleOwnership", finding
    said = r"reaches c2 \(consumer protocol\) while c1 \(classic protocol"
    assert re.search(said, finding.message)
