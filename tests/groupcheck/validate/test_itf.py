"""ITF export and import of state sequences, and ``groupcheck validate`` on ITF traces."""

from __future__ import annotations

import json
import random
from pathlib import Path as FsPath

import pytest

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.mutants import get_mutant
from groupcheck.validate import validate_itf
from invariants.expr import Snapshot
from invariants.itf import ItfError, from_itf, to_itf
from invariants.snapshot import project
from model import system
from model.presets import PRESETS


def system_walk(config: object, steps: int = 30) -> list[object]:
    """The states of a walk taking the first enabled progress action."""
    state = system.initial(config)  # type: ignore[arg-type]
    states = [state]
    for _ in range(steps):
        enabled = [a for a in system.enabled(state, config) if not a.PERTURBATION]  # type: ignore[arg-type]
        if not enabled:
            break
        state = system.step(state, enabled[0], config)  # type: ignore[arg-type]
        states.append(state)
    return states


def _norm(s: Snapshot) -> tuple[object, ...]:
    return (
        set(s.clients),
        set(s.members),
        set(s.partitions),
        {k: v for k, v in s.relations.items() if v},
        {k: dict(v) for k, v in s.functions.items() if v},
    )


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_round_trip(name: str) -> None:
    config, rng = PRESETS[name], random.Random(name)
    state = system.initial(config)
    snaps = [project(state)]
    for _ in range(40):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        state = system.step(state, enabled[rng.randrange(len(enabled))], config)
        snaps.append(project(state))
    doc = json.loads(json.dumps(to_itf(snaps, name)))
    assert doc["vars"][:3] == ["clients", "members", "partitions"]
    assert [_norm(s) for s in from_itf(doc)] == [_norm(s) for s in snaps]


def test_itf_validation_finds_the_violating_state() -> None:
    config = get_mutant("assignor-assigns-twice").mutated_config()
    result = bfs(config)
    assert result.path is not None
    snaps = [project(s) for s in result.path.states()]
    report = validate_itf("t.itf.json", to_itf(snaps, config.name))
    assert report.violations
    assert report.violations[0].line == len(snaps) - 1
    assert report.violations[0].property == "ValidTargetAssignment.Unique"
    clean = [project(s) for s in system_walk(PRESETS["TINY"])]
    assert validate_itf("c.itf.json", to_itf(clean, "TINY")).result == "ok"


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"states": "no"},
        {"states": [{"clients": {"#set": []}}]},
        {
            "states": [
                {
                    "clients": {"#set": []},
                    "members": {"#set": []},
                    "partitions": {"#set": []},
                    "group_epoch": {"#bigint": "x"},
                }
            ]
        },
        {"states": [{"clients": 3, "members": {"#set": []}, "partitions": {"#set": []}}]},
    ],
)
def test_malformed_itf_is_reported(doc: object) -> None:
    report = validate_itf("bad.itf.json", doc)
    assert report.result == "malformed"
    assert report.error is not None
    assert report.error.startswith("bad.itf.json: ")


def test_from_itf_rejects_non_traces() -> None:
    with pytest.raises(ItfError, match="no 'states'"):
        from_itf({})


def test_cli_validates_itf_files(tmp_path: FsPath, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.itf.json"
    good.write_text(json.dumps(to_itf([project(system.initial(PRESETS["TINY"]))], "TINY")))
    assert main(["validate", str(good)]) == 0
    broken = tmp_path / "broken.itf.json"
    broken.write_text("{")
    assert main(["validate", str(broken)]) == 2
    assert "broken.itf.json:1:2" in capsys.readouterr().err
