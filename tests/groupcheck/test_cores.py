"""The core count the parallel engines start: affinity capped by the cgroup's CPU quota."""

from __future__ import annotations

import os
from pathlib import Path

from groupcheck.cores import cgroup_quota, usable_cores


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_v2_quota_of_the_own_cgroup_rounds_up(tmp_path: Path) -> None:
    own = tmp_path / "self-cgroup"
    _write(own, "0::/ci/job\n")
    _write(tmp_path / "root" / "ci" / "job" / "cpu.max", "150000 100000\n")
    assert cgroup_quota(tmp_path / "root", own) == 2


def test_v2_limit_on_a_parent_applies_and_the_tightest_wins(tmp_path: Path) -> None:
    own = tmp_path / "self-cgroup"
    _write(own, "0::/ci/job\n")
    _write(tmp_path / "root" / "ci" / "job" / "cpu.max", "max 100000\n")
    _write(tmp_path / "root" / "ci" / "cpu.max", "300000 100000\n")
    _write(tmp_path / "root" / "cpu.max", "100000 100000\n")
    assert cgroup_quota(tmp_path / "root", own) == 1


def test_v1_quota_and_unlimited(tmp_path: Path) -> None:
    own = tmp_path / "self-cgroup"
    _write(own, "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    base = tmp_path / "root" / "cpu,cpuacct" / "docker" / "abc"
    _write(base / "cpu.cfs_quota_us", "200000\n")
    _write(base / "cpu.cfs_period_us", "100000\n")
    assert cgroup_quota(tmp_path / "root", own) == 2
    _write(base / "cpu.cfs_quota_us", "-1\n")
    assert cgroup_quota(tmp_path / "root", own) is None


def test_no_quota_or_unreadable_files_leave_the_affinity(tmp_path: Path) -> None:
    affinity = len(os.sched_getaffinity(0))
    assert usable_cores(tmp_path / "none", tmp_path / "missing") == affinity
    own = tmp_path / "self-cgroup"
    _write(own, "0::/\n")
    _write(tmp_path / "root" / "cpu.max", "garbage\n")
    assert usable_cores(tmp_path / "root", own) == affinity


def test_a_quota_caps_the_affinity(tmp_path: Path) -> None:
    own = tmp_path / "self-cgroup"
    _write(own, "0::/\n")
    _write(tmp_path / "root" / "cpu.max", "50000 100000\n")
    assert usable_cores(tmp_path / "root", own) == 1
