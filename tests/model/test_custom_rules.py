"""A protocol change of your own, from the command line: ``--rules FILE.py:NAME``,
``groupcheck mutants --from FILE``, mutant scenarios as presets, ``--only``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groupcheck.cli import main

RULES = textwrap.dedent(
    """\
    from dataclasses import replace

    from model.consumer import target as tg
    from model.rules import DEFAULT_RULES


    def assign_twice(group, topics, assignor):
        # Like the uniform assignor, then the first member also gets the second's
        # partitions: two members own one partition in the target.
        group = tg.compute_target_assignment(group, topics, assignor)
        targets = dict(group.target_assignment)
        members = sorted(targets)
        if len(members) >= 2:
            first, second = members[0], members[1]
            targets[first] = targets[first] | targets[second]
        return replace(group, target_assignment=type(group.target_assignment)(targets))


    TWICE = {"compute_target_assignment": assign_twice}
    AS_RULES = replace(DEFAULT_RULES, compute_target_assignment=assign_twice)


    def wrong_arity(group, topics):
        return group


    BAD = {"compute_target_assignment": wrong_arity}
    NOT_A_FIELD = {"compute_everything": assign_twice}

    MUTANTS = [
        {
            "name": "user-assigns-twice",
            "field": "compute_target_assignment",
            "function": assign_twice,
            "scenario": "MUT2",
            "expected": "ValidTargetAssignment.Unique",
            "summary": "the first member also gets the second's partitions",
        }
    ]
    """
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_rules.py"
    path.write_text(RULES)
    return path


@pytest.mark.parametrize("name", ["TWICE", "AS_RULES"])
def test_rules_from_a_file_are_explored_and_replayed(
    capsys: pytest.CaptureFixture[str], rules_file: Path, tmp_path: Path, name: str
) -> None:
    out_dir = tmp_path / "runs"
    code, out, err = run(
        capsys,
        "explore",
        "--preset",
        "MUT2",
        "--rules",
        f"{rules_file}:{name}",
        "--out",
        str(out_dir),
        "--json",
    )
    assert code == 1, err
    doc = json.loads(out)
    assert doc["property"] == "ValidTargetAssignment.Unique"
    run_dir = Path(doc["trace"]).parent
    assert run_dir.name == f"MUT2-rules-{name}-bfs-seed0"
    ce = json.loads((run_dir / "counterexample.json").read_text())
    assert ce["rules"]["file"] == str(rules_file.resolve())
    assert ce["rules"]["fields"] == ["compute_target_assignment"]
    assert len(ce["rules"]["sha256"]) == 64
    assert (run_dir / "rules.py").read_text() == RULES
    # The printed reproducer and the run directory's scripts replay the same violation.
    # The printed line names the user's own file, so that it works where it is printed
    # (issue 38); the run directory's scripts use its copy.
    assert f"--rules {rules_file.resolve()}:{name}" in doc["reproduce"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    shell = subprocess.run(
        ["sh", str(run_dir / "reproduce.sh")], capture_output=True, text=True, env=env, check=False
    )
    assert shell.returncode == 1, shell.stderr
    assert "VIOLATION of ValidTargetAssignment.Unique" in shell.stdout
    python = subprocess.run(
        [sys.executable, str(run_dir / "reproduce.py")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert python.returncode == 0, python.stderr
    assert "ValidTargetAssignment.Unique" in python.stdout


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("{file}:BAD", "wrong_arity(group, topics) cannot replace compute_target_assignment"),
        ("{file}:NOT_A_FIELD", "'compute_everything' is not a Rules field"),
        ("{file}:NOPE", "no name 'NOPE'; it defines: AS_RULES, BAD, NOT_A_FIELD, TWICE"),
        ("{file}", "expected FILE.py:NAME"),
        ("{missing}:X", "no such file"),
        ("{broken}:X", ":2: syntax error"),
    ],
)
def test_bad_rules_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], rules_file: Path, tmp_path: Path, spec: str, needle: str
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("X = 1\ndef (:\n")
    arg = spec.format(file=rules_file, missing=tmp_path / "missing.py", broken=broken)
    code, out, err = run(capsys, "explore", "--preset", "MUT2", "--rules", arg)
    assert code == 2
    assert out == ""
    assert needle in err, err
    assert len(err.strip().splitlines()) == 1


def test_rules_and_mutant_are_exclusive(
    capsys: pytest.CaptureFixture[str], rules_file: Path
) -> None:
    code, _, err = run(
        capsys, "explore", "--mutant", "ack-ignored", "--rules", f"{rules_file}:TWICE"
    )
    assert code == 2
    assert "give one of them" in err


def test_simulate_and_replay_take_rules(
    capsys: pytest.CaptureFixture[str], rules_file: Path
) -> None:
    code, out, _ = run(
        capsys, "simulate", "--preset", "MUT2", "--rules", f"{rules_file}:TWICE", "--seed", "1"
    )
    assert code == 0
    assert "step 1:" in out


def test_a_users_mutant_joins_the_kill_matrix(
    capsys: pytest.CaptureFixture[str], rules_file: Path
) -> None:
    code, out, err = run(
        capsys,
        "mutants",
        "--from",
        str(rules_file),
        "--only",
        "user-assigns-twice",
        "assignor-assigns-twice",
        "--json",
    )
    assert code == 0, err
    rows = {r["mutant"]: r for r in json.loads(out)["mutants"]}
    mine = rows["user-assigns-twice"]
    assert mine["result"] == "killed"
    assert mine["property"] == "ValidTargetAssignment.Unique"
    assert mine["expected"] == "ValidTargetAssignment.Unique"
    assert mine["as_expected"] is True
    assert mine["source"] == str(rules_file.resolve())
    assert rows["assignor-assigns-twice"]["source"] is None


def test_a_mutants_file_is_checked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad_mutants.py"
    bad.write_text(
        "def f(group):\n    return group\n"
        "MUTANTS = [{'name': 'm', 'field': 'session_timeout', 'function': f, "
        "'scenario': 'MUT2'}]\n"
    )
    code, _, err = run(capsys, "mutants", "--from", str(bad))
    assert code == 2
    assert "cannot replace session_timeout" in err
    dup = tmp_path / "dup.py"
    dup.write_text(RULES.replace('"user-assigns-twice"', '"ack-ignored"'))
    code, _, err = run(capsys, "mutants", "--from", str(dup))
    assert code == 2
    assert "'ack-ignored': the name is empty or taken" in err


def test_a_users_mutant_may_replace_two_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "two.py"
    path.write_text(
        "from groupcheck.mutants.catalogue import generation_of_last_assignment as g\n"
        "from groupcheck.mutants.catalogue import validate_stale_claims as v\n"
        "MUTANTS = [{'name': 'loop', 'field': 'classic_leader_assignment', 'function': v,\n"
        "            'also': {'classic_join_group': g}, 'scenario': 'MUTC_LATE_SYNC',\n"
        "            'expected': 'Convergence'}]\n"
    )
    code, out, err = run(capsys, "mutants", "--from", str(path), "--only", "loop", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["mutants"]
    assert row["result"] == "killed"
    assert row["as_expected"] is True
    assert row["fields"] == ["classic_leader_assignment", "classic_join_group"]
    path.write_text(path.read_text().replace("'classic_join_group': g", "'classic_join_group': v"))
    code, _, err = run(capsys, "mutants", "--from", str(path))
    assert code == 2
    assert "cannot replace classic_join_group" in err


def test_mutant_scenarios_are_presets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from groupcheck.mutants import MUTANTS
    from model.presets import PRESETS

    assert {m.config.name for m in MUTANTS.values()} <= set(PRESETS)
    code, out, _ = run(
        capsys,
        "explore",
        "--preset",
        "MUT2",
        "--mutant",
        "revoke-without-waiting",
        "--no-baseline",
        "--max-states",
        "300000",
        "--budget",
        "3600",
        "--quiet",
        "--out",
        str(tmp_path),
        "--json",
    )
    assert code == 1
    assert json.loads(out)["property"] == "OwnedPartitionsAreHeld"


def test_only_checks_the_named_properties(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = [
        "explore",
        "--mutant",
        "assignor-assigns-twice",
        "--no-baseline",
        "--out",
        str(tmp_path),
        "--json",
    ]
    code, out, _ = run(capsys, *base, "--only", "ValidTargetAssignment")
    assert code == 1
    doc = json.loads(out)
    assert doc["property"] == "ValidTargetAssignment.Unique"
    assert set(doc["properties"]) == {
        "ValidTargetAssignment.Unique",
        "ValidTargetAssignment.OnlySubscribed",
        "ValidTargetAssignment.Covers",
        "ValidTargetAssignment.OnlyMembers",
    }
    # Without the property that fails, the same search finds another one or none.
    code, out, _ = run(capsys, *base, "--only", "MemberEpochMonotone", "--depth", "8")
    doc = json.loads(out)
    assert doc["properties"] == ["MemberEpochMonotone"]
    assert doc["property"] in (None, "MemberEpochMonotone")
    code, _, err = run(capsys, *base, "--only", "Nope")
    assert code == 2
    assert "--only 'Nope': no such property" in err
