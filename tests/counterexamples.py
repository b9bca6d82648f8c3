"""Counterexamples several tests read, pinned as encoded paths and replayed (a replay is
a fraction of a second; the BFS that finds them takes several)."""

from __future__ import annotations

from groupcheck.explore.minimise import first_violations
from model.path import Path
from model.presets import preset

UPGRADE_ONE_BOUNCE = "0111111111111111111111111111111111111111133"
"""The BFS counterexample of preset ``UPGRADE_ONE_BOUNCE`` (``Path.encode``);
tests/model/test_classic_protocol.py checks that the BFS still finds exactly this path."""


def upgrade_one_bounce() -> tuple[Path, str, str]:
    """``UPGRADE_ONE_BOUNCE``'s counterexample, replayed: (path, property, message) of the
    violation at its last step, and at no earlier step."""
    config = preset("UPGRADE_ONE_BOUNCE")
    path = Path.decode(config, UPGRADE_ONE_BOUNCE)
    found = first_violations(config, path.actions)
    assert found is not None
    violations, at = found
    assert at == len(path.actions)
    return path, violations[0].property, violations[0].message
