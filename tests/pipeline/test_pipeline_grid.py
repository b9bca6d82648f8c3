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
    assert plan.seeds == (7, 8, 9, 10)
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
            "walk.max_steps: expected an integer >= 1",
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
