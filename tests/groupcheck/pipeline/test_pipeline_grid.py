"""Grid files: the plan they make, and one-line errors naming the file and what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.grid import load_grid, parse_grid
from groupcheck.pipeline.work import DEFAULT_PARTS, run_parts


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_toml_grid_makes_the_cross_product(tmp_path: Path) -> None:
    grid = write(
        tmp_path,
        "g.toml",
        """
presets = ["tiny", "SMALL"]
engines = ["walk", "hypothesis"]
mutants = ["none", "revoke-without-waiting"]
seed = 7
[options]
reorder = [false, true]
max_restarts = 0
[hypothesis]
examples = 3
""",
    )
    plan = load_grid(grid, runs=4)
    # 2 presets × 2 mutants × 2 reorder values × 2 engines
    assert len(plan.cells) == 16
    assert tuple(plan.seeds) == (7, 8, 9, 10)
    assert plan.total == 64
    assert plan.hypothesis_examples == 3
    assert plan.hypothesis_steps == 30
    first, last = plan.cells[0], plan.cells[-1]
    assert (first.preset, first.mutant, first.engine) == ("TINY", None, "walk")
    assert dict(first.options) == {"max_restarts": 0, "reorder": False}
    assert (last.preset, last.mutant, last.engine) == (
        "SMALL",
        "revoke-without-waiting",
        "hypothesis",
    )
    config = last.config()
    assert config.reorder is True
    assert config.max_restarts == 0
    assert config.name == "SMALL+revoke-without-waiting"
    # run i: cell i // seeds, seed seeds[i % seeds]
    assert plan.run(5) == (plan.cells[1], 8)
    assert len({c.label for c in plan.cells}) == 16


def test_json_grid_with_a_seed_list_equals_toml(tmp_path: Path) -> None:
    doc = {
        "presets": ["TINY"],
        "seeds": [3, 1, 2],
        "options": {"perturbations": [["Crash"], ["Leave", "Subscribe"]]},
    }
    plan = load_grid(write(tmp_path, "g.json", json.dumps(doc)), runs=None)
    assert plan.seeds == (3, 1, 2)
    assert [dict(c.options)["perturbations"] for c in plan.cells] == [
        ("Crash",),
        ("Leave", "Subscribe"),
    ]
    assert plan.cells[1].config().perturbations == frozenset({"Leave", "Subscribe"})
    assert load_grid(write(tmp_path, "g2.json", json.dumps(doc)), runs=2).seeds == (3, 1)
    same = write(
        tmp_path,
        "g.toml",
        (
            'presets = ["TINY"]\nseeds = [3, 1, 2]\n'
            '[options]\nperturbations = [["Crash"], ["Leave", "Subscribe"]]\n'
        ),
    )
    assert load_grid(same, runs=None).fingerprint() == plan.fingerprint()


def test_fingerprint_changes_with_the_plan() -> None:
    a = parse_grid({"presets": ["TINY"]}, 10)
    assert parse_grid({"presets": ["TINY"]}, 10).fingerprint() == a.fingerprint()
    assert parse_grid({"presets": ["TINY"]}, 11).fingerprint() != a.fingerprint()
    assert (
        parse_grid({"presets": ["TINY"], "walk": {"max_steps": 61}}, 10).fingerprint()
        != a.fingerprint()
    )


def test_parts_cover_every_run_once() -> None:
    for total, size in ((1, None), (10_000, None), (130, 7), (64, None), (65, None)):
        parts = run_parts(total, size)
        covered = [i for start, stop in parts for i in range(start, stop)]
        assert covered == list(range(total))
    assert len(run_parts(10_000)) == DEFAULT_PARTS == 32
    assert len(run_parts(1_000_000)) == 2000  # at most 500 runs per part


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("g.json", '{"presets": ["TINY"],', "g.json:1:22: malformed JSON grid"),
        ("g.toml", 'presets = ["TINY"\n', "g.toml: malformed TOML grid"),
        (
            "g.yaml",
            "presets: [TINY]",
            "g.yaml: unknown grid format; name the file *.json or *.toml",
        ),
        ("g.json", "[1, 2]", "g.json: a grid is a table/object of keys, got a list"),
        ("g.json", '{"engines": ["walk"]}', "g.json: missing key 'presets'"),
        ("g.json", '{"presets": ["HUGE"]}', "g.json: presets: unknown preset 'HUGE'"),
        ("g.json", '{"presets": ["TINY"], "engines": ["bfs"]}', "'bfs' is not a pipeline engine"),
        ("g.json", '{"presets": ["TINY"], "mutants": ["nope"]}', "mutants: unknown mutant 'nope'"),
        ("g.json", '{"presets": ["TINY"], "colour": 1}', "g.json: unknown key 'colour'"),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"reorder": [1]}}',
            "options.reorder: expected true or false, got a number (1)",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"speed": [1]}}',
            "options.speed: not a Config option",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"max_restarts": "2"}}',
            "options.max_restarts: expected an integer",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"perturbations": ["Flood"]}}',
            "unknown perturbation 'Flood'",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "walk": {"max_steps": 0}}',
            "walk.max_steps: expected an integer in 1..100,000, got a number (0)",
        ),
        ("g.json", '{"presets": ["TINY"], "seeds": [1, 1]}', "seeds: a seed is listed twice"),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"perturbations": [["TemporaryLeave"]]}}',
            "cell 'TINY walk perturbations=[\"TemporaryLeave\"]' is not a valid config",
        ),
    ],
)
def test_bad_grids_name_file_and_problem(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(PipelineError) as info:
        load_grid(path, runs=3)
    message = str(info.value)
    assert message.startswith(str(path))
    assert expected in message
    assert "\n" not in message


def test_missing_grid_and_missing_runs(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match=r"nope\.toml: no such grid file"):
        load_grid(tmp_path / "nope.toml", runs=1)
    grid = write(tmp_path, "g.toml", 'presets = ["TINY"]\n')
    with pytest.raises(PipelineError, match=r"give --runs N"):
        load_grid(grid, runs=None)
    seeds = write(tmp_path, "s.toml", 'presets = ["TINY"]\nseeds = [1, 2]\n')
    with pytest.raises(PipelineError, match=r"--runs 3 but the grid lists only 2 seeds"):
        load_grid(seeds, runs=3)


# --------------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "g.json",
            '{"presets": ["TINY"],\n "presets": ["SMALL"]}',
            "g.json:2:2: malformed JSON grid: key 'presets' given twice",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"reorder": [true], "reorder": [false]}}',
            "g.json:1:54: malformed JSON grid: key 'reorder' given twice",
        ),
        ("g.json", '{"presets": ["TINY"], "seed": NaN}', "g.json:1:31: malformed JSON grid: NaN"),
        (
            "g.toml",
            'presets = ["TINY"]\npresets = ["SMALL"]\n',
            "g.toml: malformed TOML grid: Cannot overwrite a value (at line 2, column 20)",
        ),
        (
            "g.toml",
            'presets = ["TINY"]\nseed = ' + "9" * 5000 + "\n",
            "g.toml: malformed TOML grid: an integer with more than 4300 digits",
        ),
        (
            "g.toml",
            'presets = ["TINY"]\nx = ' + "[" * 5000 + "\n",
            "g.toml: malformed TOML grid: nested too deeply",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"heartbeat_interval_ms": [-1]}}',
            "options.heartbeat_interval_ms: expected an integer in 1..2147483647, "
            "got a number (-1)",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"max_group_size": 1' + "0" * 30 + "}}",
            "options.max_group_size: expected an integer in 1..2147483647, "
            "got a number beyond 10**20 in size",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"max_restarts": [1000]}}',
            "options.max_restarts: expected an integer in 0..100, got a number (1000)",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"session_timeout_ms": [true]}}',
            "options.session_timeout_ms: expected an integer, got a boolean (true)",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "options": {"rebalance_timeout_ms": [1.5]}}',
            "options.rebalance_timeout_ms: expected an integer, got a number (1.5)",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "seeds": [9223372036854775808]}',
            "seeds: expected a non-empty list of integers in 0..9223372036854775807",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "seed": 9223372036854775807}',
            "seed: seeds 9223372036854775807 … 9223372036854775807 + 2 go beyond",
        ),
        (
            "g.json",
            '{"presets": ["TINY"], "hypothesis": {"steps": 1000000}}',
            "hypothesis.steps: expected an integer in 1..10,000, got a number (1000000)",
        ),
    ],
)
def test_grids_beyond_the_limits_are_one_line_errors(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(PipelineError) as info:
        load_grid(path, runs=3)
    message = str(info.value)
    assert message.startswith(f"{path}:")
    assert expected in message
    assert "\n" not in message
    assert len(message) < 400


def test_a_grid_with_too_many_cells_is_refused_before_building_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """9.6 million cells (2 presets × 400 × 100 × 120 option values): refused from the
    list lengths alone, before any cell exists."""
    from groupcheck.pipeline import grid

    def no_cells(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cell was built")

    monkeypatch.setattr(grid, "Cell", no_cells)
    doc = {
        "presets": ["TINY", "SMALL"],
        "options": {
            "max_perturbations": list(range(400)),
            "max_restarts": list(range(100)),
            "rebalance_timeout_ms": list(range(1, 121)),
        },
    }
    path = write(tmp_path, "big.json", json.dumps(doc))
    with pytest.raises(PipelineError) as info:
        load_grid(path, runs=1)
    assert str(info.value) == (
        f"{path}: the grid has 9,600,000 cells (presets × mutants × option values × engines); "
        "at most 100,000: split it into several grids"
    )
    doc["options"] = {"max_restarts": list(range(100))}  # 200 cells × 60,000 seeds
    path = write(tmp_path, "runs.json", json.dumps(doc))
    with pytest.raises(PipelineError) as info:
        load_grid(path, runs=60_000)
    assert str(info.value) == (
        f"{path}: 200 cells × 60,000 seeds are 12,000,000 runs; a plan has at most "
        "10,000,000: use fewer seeds or a smaller grid"
    )


def test_runs_and_grid_size_are_capped(tmp_path: Path) -> None:
    grid = write(tmp_path, "g.toml", 'presets = ["TINY"]\n')
    with pytest.raises(PipelineError) as info:
        load_grid(grid, runs=99999999999999999999)
    assert str(info.value) == (
        "--runs: at most 10,000,000 runs per cell, got 99,999,999,999,999,999,999"
    )
    plan = load_grid(grid, runs=10_000_000)  # the limit itself: seeds are a range, not a list
    assert plan.total == 10_000_000
    assert plan.to_json()["seeds"] == {"first": 0, "count": 10_000_000}
    big = write(tmp_path, "big.toml", 'presets = ["TINY"]\n' + "# padding\n" * 110_000)
    with pytest.raises(PipelineError, match=r"big\.toml: a grid file is at most 1048576 bytes"):
        load_grid(big, runs=1)


def test_config_ranges_hold_however_a_config_is_built() -> None:
    """``check_config`` runs for every Config (presets, replace, grids): Kafka's int
    settings are 1..2**31-1, the model's bounds small and non-negative, and the fields have
    their types."""
    from dataclasses import replace

    from model.config import Config
    from model.presets import TINY
    from model.status import ConfigError

    bad: list[tuple[dict[str, object], str]] = [
        ({"heartbeat_interval_ms": -1}, "heartbeat_interval_ms must be in 1..2147483647"),
        ({"session_timeout_ms": 0}, "session_timeout_ms must be in 1..2147483647"),
        ({"rebalance_timeout_ms": 2**31}, "rebalance_timeout_ms must be in 1..2147483647"),
        ({"max_group_size": 10**30}, "got a number beyond 10**20 in size"),
        ({"max_group_size": 0}, "max_group_size must be in 1..2147483647"),
        ({"max_restarts": -1}, "max_restarts must be in 0..100, got -1"),
        ({"max_partitions_per_topic": 10**6}, "max_partitions_per_topic must be in 0..1000"),
        ({"max_perturbations": 10**9}, "max_perturbations must be in 0..10000"),
        ({"max_restarts": True}, "max_restarts must be an integer, got True"),
        ({"heartbeat_interval_ms": 5.0}, "heartbeat_interval_ms must be an integer, got 5.0"),
        ({"reorder": 1}, "reorder must be true or false, got 1"),
        ({"topics": (("foo", "2"),)}, "topic 'foo' has '2' partitions; give an integer"),
    ]
    for change, message in bad:
        with pytest.raises(ConfigError) as info:
            replace(TINY, **change)  # type: ignore[arg-type]
        assert message in str(info.value), change
        assert str(info.value).startswith("config 'TINY': ")
    with pytest.raises(ConfigError, match="heartbeat_interval_ms must be in"):
        Config(name="x", topics=(("foo", 1),), clients=(), heartbeat_interval_ms=-5)
    edge = replace(
        TINY,
        heartbeat_interval_ms=1,
        session_timeout_ms=2**31 - 1,
        max_group_size=2**31 - 1,
        max_restarts=100,
    )
    assert edge.max_restarts == 100


LATE_ACK = Path(__file__).resolve().parents[2] / "data" / "late_ack_rules.py"


def test_a_grid_runs_rules_from_a_file_on_executors_elsewhere(tmp_path: Path) -> None:
    import pickle
    import subprocess
    import sys

    (tmp_path / "late_ack_rules.py").write_text(LATE_ACK.read_text())
    grid = tmp_path / "g.toml"
    grid.write_text('presets = ["MUT2"]\nrules = ["late_ack_rules.py:SLOW"]\n')
    plan = load_grid(grid, 2)
    assert [c.label for c in plan.cells] == ["MUT2 walk", "MUT2+rules-SLOW walk"]
    ruled = plan.cells[1]
    assert ruled.rules is not None
    assert ruled.to_json()["rules"]["file"] == str((tmp_path / "late_ack_rules.py").resolve())
    assert ruled.config().rules.client_build_heartbeat.__name__ == "late_ack"
    # The file's hash is part of the plan: a changed file is another plan.
    before = plan.fingerprint()
    (tmp_path / "late_ack_rules.py").write_text(LATE_ACK.read_text() + "\n# changed\n")
    assert load_grid(grid, 2).fingerprint() != before
    # An executor on another machine has neither the file nor its copy: the plan carries
    # the text. A fresh process with its own temp directory and the file gone builds it.
    (tmp_path / "late_ack_rules.py").unlink(missing_ok=True)
    pickled = tmp_path / "plan.pickle"
    pickled.write_bytes(pickle.dumps(plan))
    other_tmp = tmp_path / "executor-tmp"
    other_tmp.mkdir()
    code = (
        "import pickle, sys; plan = pickle.load(open(sys.argv[1], 'rb')); "
        "print(plan.cells[1].config().rules.client_build_heartbeat.__name__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(pickled)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "TMPDIR": str(other_tmp)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "late_ack"


def test_bad_rules_in_a_grid_are_one_line(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text('presets = ["MUT2"]\nrules = ["missing.py:X"]\n')
    with pytest.raises(PipelineError, match=r"g\.toml: rules: .*missing\.py: no such file"):
        load_grid(grid, 1)
    grid.write_text('presets = ["MUT2"]\nrules = ["nocolon"]\n')
    with pytest.raises(PipelineError, match=r"expected FILE\.py:NAME"):
        load_grid(grid, 1)
