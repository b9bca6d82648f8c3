"""Shared data for the pipeline tests: a small trace corpus with one bad file of each kind,
and a grid that finds a violation."""

from __future__ import annotations

from pathlib import Path as FsPath

import pytest
from tracelines import header as trace_header
from tracelines import heartbeat as _hb
from tracelines import progress_walk

from model.presets import TINY
from model.trace import path_lines

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
    """Trace files under ``tmp_path/corpus`` → the verdict each must get."""
    root = tmp_path / "corpus"
    (root / "nested").mkdir(parents=True)
    expected: dict[str, str] = {}
    for seed in range(6):
        name = root / ("nested" if seed % 2 else "") / f"valid-{seed}.ndjson"
        name.write_text(
            "\n".join(path_lines(progress_walk(TINY, seed, 60, idle="stop"))) + "\n",
            encoding="utf-8",
        )
        expected[str(name)] = "valid"
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
    expected[str(double)] = "violations"
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
