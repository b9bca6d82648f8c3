"""How many cores this process may really use.

``os.sched_getaffinity`` counts the CPUs the scheduler may place the process on; a
container limited by a CPU quota (``docker --cpus=2``, a Kubernetes CPU limit) still sees
every CPU of its host there. Starting one worker per host CPU under a two-core quota
multiplies the memory by the host's CPU count and gains nothing, so the quota of the
process's cgroup (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``) caps the
count as well.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
OWN_CGROUP = Path("/proc/self/cgroup")


def usable_cores(root: Path = CGROUP_ROOT, own: Path = OWN_CGROUP) -> int:
    """The cores this process may run on, capped by its cgroup's CPU quota (at least 1)."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        count = os.cpu_count() or 1
    quota = cgroup_quota(root, own)
    if quota is not None:
        count = min(count, quota)
    return max(count, 1)


def cgroup_quota(root: Path = CGROUP_ROOT, own: Path = OWN_CGROUP) -> int | None:
    """The tightest CPU quota on the way from this process's cgroup up to the root, in
    whole cores (rounded up), or None when there is none or it cannot be read."""
    found: list[int] = []
    for controllers, relative in _own_cgroups(own):
        for directory in _ancestors(relative):
            if controllers == "":
                quota = _quota_v2(root / directory / "cpu.max")
            else:
                quota = _quota_v1(root / controllers / directory)
            if quota is not None:
                found.append(quota)
    return min(found) if found else None


def _own_cgroups(own: Path) -> list[tuple[str, str]]:
    """``(controllers, path)`` of the process's v2 cgroup (controllers ``""``) and of its
    v1 cpu controller, from ``/proc/self/cgroup`` (``own``); the root cgroup when unreadable."""
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return [("", "/")]
    found: list[tuple[str, str]] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "" or "cpu" in parts[1].split(","):
            found.append((parts[1], parts[2] or "/"))
    return found or [("", "/")]


def _ancestors(relative: str) -> list[str]:
    """``a/b/c`` → ``a/b/c``, ``a/b``, ``a``, ``""``: a limit set on a parent applies too
    (and inside a cgroup namespace the path is ``/`` and only the root is read)."""
    parts = [part for part in relative.split("/") if part]
    return ["/".join(parts[:n]) for n in range(len(parts), -1, -1)]


def _quota_v2(path: Path) -> int | None:
    """``cpu.max`` holds ``"<quota> <period>"`` or ``"max <period>"``."""
    try:
        fields = path.read_text().split()
    except OSError:
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _cores(fields[0], fields[1])


def _quota_v1(directory: Path) -> int | None:
    """v1 keeps it in two files; a quota of ``-1`` means none."""
    try:
        quota = (directory / "cpu.cfs_quota_us").read_text().strip()
        period = (directory / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return _cores(quota, period)


def _cores(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return max(math.ceil(q / p), 1)
