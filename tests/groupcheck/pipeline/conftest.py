"""Shared data for the pipeline tests: a small trace corpus with one bad file of each kind,
a grid that finds a violation, and the Spark tests' one local session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

import pytest
from tracelines import header as trace_header
from tracelines import heartbeat as _hb
from tracelines import progress_walk

from model.presets import TINY
from model.trace import path_lines

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GRID = """\
presets = ["TINY"]
mutants = ["none", "revoke-without-waiting"]
engines = ["walk", "hypothesis"]
seed = 0

[hypothesis]
examples = 3
steps = 12
"""
"""4 cells; the mutant's walks find a violation within a few seeds."""


def _ok(member: str, epoch: int, partitions: list[int]) -> dict[str, object]:
    return {
        "ErrorCode": 0,
        "MemberId": member,
        "MemberEpoch": epoch,
        "HeartbeatIntervalMs": 5000,
        "Assignment": {"TopicPartitions": [{"TopicId": "foo", "Partitions": partitions}]},
    }


def _owns(member: str, epoch: int, partitions: list[int]) -> dict[str, object]:
    return {
        "MemberId": member,
        "MemberEpoch": epoch,
        "TopicPartitions": [{"TopicId": "foo", "Partitions": partitions}] if partitions else [],
    }


@pytest.fixture
def corpus(tmp_path: FsPath) -> dict[str, str]:
    """Trace files under ``tmp_path/corpus`` → the verdict each must get (the spelling of
    ``groupcheck.pipeline.verdict.trace_verdict``)."""
    root = tmp_path / "corpus"
    (root / "nested").mkdir(parents=True)
    expected: dict[str, str] = {}
    for seed in range(6):
        name = root / ("nested" if seed % 2 else "") / f"valid-{seed}.ndjson"
        name.write_text(
            "\n".join(path_lines(progress_walk(TINY, seed, 160, idle="stop"))) + "\n",
            encoding="utf-8",
        )
        # 160 events and no perturbation: enough for --settle's 100, so convergence is
        # checked (and holds).
        expected[str(name)] = "ok"
    header = trace_header()
    double = root / "double.ndjson"
    double.write_text(
        "\n".join(
            [
                header,
                _hb("A", _owns("A", 0, []), True),
                _hb("A", _ok("A", 1, [0, 1]), False),
                _hb("A", _owns("A", 1, [0, 1]), True),
                _hb("B", _owns("B", 0, []), True),
                _hb("B", _ok("B", 2, [1]), False),  # line 6: A still owns foo-1
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    expected[str(double)] = "violation"
    broken = root / "broken.ndjson"
    broken.write_text(header + '\n{"seq": 1, "kind": \n', encoding="utf-8")
    expected[str(broken)] = "malformed"
    latin = root / "latin1.ndjson"
    latin.write_bytes(header.encode() + b"\n\xff\xfe\n")
    expected[str(latin)] = "malformed"
    (root / "dir.ndjson").mkdir()
    expected[str(root / "dir.ndjson")] = "malformed"
    (root / "dangling.ndjson").symlink_to(root / "gone.ndjson")
    expected[str(root / "dangling.ndjson")] = "malformed"
    return expected


@pytest.fixture
def grid_file(tmp_path: FsPath) -> FsPath:
    path = tmp_path / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    return path


class LocalSpark:
    """The Spark tests' one ``local[2]`` session (UI off, 2 shuffle partitions, C1-only JIT),
    started when a test first asks for it. A test that needs the process without a
    SparkContext (Spark runs one per process) stops it through ``no_local_spark``; the next
    test that asks for it gets a new one, so no test depends on the order they run in."""

    def __init__(self) -> None:
        self._stack: ExitStack | None = None
        self._session: SparkSession | None = None
        self.starts = 0

    def get(self) -> SparkSession:
        from pyspark.sql import SparkSession

        from groupcheck.pipeline.spark import session

        if self._session is not None and SparkSession.getActiveSession() is self._session:
            return self._session
        self.stop()
        stack = ExitStack()
        self._session = stack.enter_context(
            session(
                "local[2]",
                fast_start=True,
                conf=[("spark.default.parallelism", "2"), ("spark.sql.shuffle.partitions", "2")],
            )
        )
        self._stack = stack
        self.starts += 1
        return self._session

    def stop(self) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            stack.close()


_STARTED: list[LocalSpark] = []
"""The session's ``LocalSpark`` once a test asked for it (for the teardown hook below)."""


@pytest.fixture(scope="session")
def local_spark() -> Iterator[LocalSpark]:
    shared = LocalSpark()
    _STARTED.append(shared)
    try:
        yield shared
    finally:
        shared.stop()
        _STARTED.remove(shared)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared session after the last Spark test of a run of them: the xdist worker
    that ran them goes on with other tests, which should not share the machine with an
    idle JVM (a later Spark test would start it again)."""
    if nextitem is not None and nextitem.get_closest_marker("spark"):
        return
    if item.get_closest_marker("spark"):
        for shared in _STARTED:
            shared.stop()


@pytest.fixture
def spark(local_spark: LocalSpark) -> SparkSession:
    """The shared local session (started again if a test stopped it)."""
    return local_spark.get()


@pytest.fixture
def no_local_spark(local_spark: LocalSpark) -> None:
    """No SparkContext in this process while the test runs (it starts its own)."""
    local_spark.stop()
