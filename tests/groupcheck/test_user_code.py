"""User code is the user's, and bounded (issue 42, issue 38): a rules or mutants file that
exits, raises, prints, returns the wrong type or never returns is reported as the user's
(exit 8, ``groupcheck.usercode``) or stopped by ``--budget`` (``groupcheck.budget``);
``--workers`` and ``--steps`` are capped. Work is bounded by TINY/MUT2 presets and small
state counts; the budget tests give the watchdog a budget of a few seconds only because
what they stop never ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groupcheck import exitcodes
from groupcheck.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


RAISES = """\
def bad(group, old, new, config):
    return helper()


def helper():
    raise ValueError("boom in my rule")


RULES = {"should_bump_group_epoch": bad}
"""


@pytest.mark.parametrize(
    ("body", "failure"),
    [
        ("import sys\nsys.exit(0)\n", "sys.exit(0)"),
        ("import os\nos._exit(0)\n", "os._exit(0)"),
        ("raise RuntimeError('at import')\n", "RuntimeError: at import"),
    ],
)
def test_a_file_that_exits_or_raises_while_loading_is_the_users_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, failure: str
) -> None:
    path = write(tmp_path, "exits.py", body)
    for argv in (
        ["explore", "--preset", "TINY", "--rules", f"{path}:RULES", "--out", str(tmp_path / "o")],
        ["replay", "--preset", "TINY", "--rules", f"{path}:RULES", "--path", "0"],
        ["simulate", "--preset", "TINY", "--rules", f"{path}:RULES", "--seed", "1"],
        ["mutants", "--from", str(path)],
    ):
        code, out, err = run(capsys, *argv)
        assert code == exitcodes.USER_CODE_ERROR, (argv, err)
        assert out == ""
        assert f"your file {path} failed while it was loaded" in err
        assert failure in err
        assert f'File "{path}", line' in err  # the user's frame, and only theirs
        assert "importlib" not in err


def test_a_rule_that_raises_is_named_with_its_step_path_and_frames(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "raises.py", RAISES)
    code, out, err = run(
        capsys,
        "explore",
        "--preset",
        "TINY",
        "--rules",
        f"{path}:RULES",
        "--json",
        "--quiet",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == exitcodes.USER_CODE_ERROR
    doc = json.loads(out)
    assert doc["rule"] == "should_bump_group_epoch"
    assert doc["function"] == "bad"
    assert doc["file"] == str(path.resolve())
    assert doc["failure"] == "it raised ValueError: boom in my rule"
    assert doc["step"] == len(doc["path"]) + 1
    assert doc["action"].startswith("DeliverMessage")
    frames = "".join(doc["traceback"])
    assert "in bad" in frames
    assert "in helper" in frames
    assert "model/" not in frames
    assert "groupcheck/" not in frames
    assert "your rule should_bump_group_epoch (bad in" in err
    assert "internal error" not in err
    # The path code replays to the failing step.
    code, _, err = run(
        capsys,
        "replay",
        "--preset",
        "TINY",
        "--rules",
        f"{path}:RULES",
        "--path",
        doc["path_code"] + "0",
    )
    assert code == exitcodes.USER_CODE_ERROR


def test_a_walk_records_the_path_it_was_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "raises.py", RAISES)
    code, out, _ = run(
        capsys,
        "explore",
        "--preset",
        "TINY",
        "--rules",
        f"{path}:RULES",
        "--engine",
        "walk",
        "--walks",
        "3",
        "--json",
        "--quiet",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == exitcodes.USER_CODE_ERROR
    assert json.loads(out)["step"] >= 2


@pytest.mark.parametrize(
    ("body", "failure"),
    [
        ("return 'yes'", "it returned str ('yes'); should_bump_group_epoch returns bool"),
        ("import sys; sys.exit(3)", "sys.exit(3)"),
        ("x = [0] * (10**13)", "it ran out of memory (MemoryError)"),
    ],
)
def test_wrong_types_exits_and_memory_are_the_rules_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, failure: str
) -> None:
    path = write(
        tmp_path,
        "bad.py",
        f"def bad(group, old, new, config):\n    {body}\n\n"
        "RULES = {'should_bump_group_epoch': bad}\n",
    )
    code, _, err = run(
        capsys, "replay", "--preset", "TINY", "--rules", f"{path}:RULES", "--path", "00"
    )
    assert code == exitcodes.USER_CODE_ERROR, err
    assert failure in err
    assert "at step 2" in err


def test_a_rules_print_goes_to_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "noisy.py",
        """\
        from model.consumer import coordinator

        print("loading my rules")


        def noisy(group, old, new, config):
            print("hello from my rule")
            return coordinator.should_bump_group_epoch(group, old, new, config)


        RULES = {"should_bump_group_epoch": noisy}
        """,
    )
    code, out, err = run(
        capsys, "replay", "--preset", "TINY", "--rules", f"{path}:RULES", "--path", "00", "--json"
    )
    assert code == 0
    assert json.loads(out)["result"] == "ok"  # stdout is one JSON document
    assert "hello from my rule" in err
    assert "loading my rules" in err


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "groupcheck", *argv],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_rule_that_never_returns_is_stopped_by_the_budget(tmp_path: Path, workers: str) -> None:
    path = write(
        tmp_path,
        "forever.py",
        "def bad(group, old, new, config):\n    while True:\n        pass\n\n"
        "RULES = {'should_bump_group_epoch': bad}\n",
    )
    done = cli(
        "explore",
        "--preset",
        "TINY",
        "--rules",
        f"{path}:RULES",
        "--budget",
        "4",
        "--workers",
        workers,
        "--quiet",
        "--out",
        str(tmp_path / "o"),
    )
    assert done.returncode == exitcodes.INCONCLUSIVE, done.stderr
    assert "ran out during your rule should_bump_group_epoch (bad in" in done.stderr


# A file that never finishes loading; it sleeps rather than spins, so that the budget is
# spent in the file even when the machine is loaded (the command's own start-up, slower
# under load, stays well inside the budget) and the test costs no CPU while it waits.
SLEEPS_FOREVER = "import time\n\nwhile True:\n    time.sleep(0.05)\n"


def test_a_file_that_loops_while_loading_is_stopped_by_the_budget(tmp_path: Path) -> None:
    path = write(tmp_path, "loop.py", SLEEPS_FOREVER)
    done = cli("mutants", "--from", str(path), "--budget", "4", "--quiet", "--json")
    assert done.returncode == exitcodes.INCONCLUSIVE, done.stderr
    assert f"ran out during loading your file {path}" in done.stderr
    assert json.loads(done.stdout)["result"] == "inconclusive"


@pytest.mark.parametrize(
    "command",
    [
        ("replay", "--preset", "TINY", "--path", "0"),
        ("simulate", "--preset", "TINY", "--seed", "0", "--steps", "3"),
    ],
    ids=["replay", "simulate"],
)
def test_replay_and_simulate_stop_a_looping_rules_file_at_their_budget(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Issue 42: ``replay`` and ``simulate`` take ``--budget`` as ``explore`` does: a
    rules file that never finishes loading is stopped there (exit 3, one line naming it)."""
    path = write(tmp_path, "loop.py", SLEEPS_FOREVER)
    done = cli(*command, "--rules", f"{path}:RULES", "--budget", "3", "--json")
    assert done.returncode == exitcodes.INCONCLUSIVE, done.stderr
    assert done.stderr.splitlines() == [
        f"groupcheck: inconclusive: the time budget (3 s) ran out during loading your file "
        f"{path}; stopped there"
    ]
    assert json.loads(done.stdout)["result"] == "inconclusive"


MUTANTS = """\
from helper_rules import assign_twice, boom

MUTANTS = [
    {"name": "mine-right", "field": "compute_target_assignment", "function": assign_twice,
     "scenario": "MUT2", "expected": "ValidTargetAssignment.Unique"},
    {"name": "mine-wrong", "field": "compute_target_assignment", "function": assign_twice,
     "scenario": "MUT2", "expected": "NoDoubleClientOwnership"},
    {"name": "mine-raises", "field": "should_bump_group_epoch", "function": boom,
     "scenario": "MUT2"},
]
"""

HELPER = """\
from dataclasses import replace

from model.consumer import target as tg


def assign_twice(group, topics, assignor):
    group = tg.compute_target_assignment(group, topics, assignor)
    targets = dict(group.target_assignment)
    members = sorted(targets)
    if len(members) >= 2:
        targets[members[0]] = targets[members[0]] | targets[members[1]]
    return replace(group, target_assignment=type(group.target_assignment)(targets))


def boom(group, old, new, config):
    raise KeyError("oops")
"""


def test_a_mutants_file_imports_beside_itself_and_its_expectations_count(tmp_path: Path) -> None:
    write(tmp_path, "helper_rules.py", HELPER)
    write(tmp_path, "my_mutants.py", MUTANTS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Run from another directory, without PYTHONPATH pointing at the file's.
    done = cli(
        "mutants", "--from", "../my_mutants.py", "--only", "mine-right", "--json", cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    (right,) = json.loads(done.stdout)["mutants"]
    assert right["result"] == "killed"
    assert right["as_expected"]
    done = cli("mutants", "--from", str(tmp_path / "my_mutants.py"), "--only", "mine-wrong")
    assert done.returncode == exitcodes.VIOLATION  # killed, but not by what it expects
    assert "expected NoDoubleClientOwnership" in done.stdout
    done = cli(
        "mutants", "--from", str(tmp_path / "my_mutants.py"), "--only", "mine-raises", "--json"
    )
    assert done.returncode == exitcodes.USER_CODE_ERROR
    (row,) = json.loads(done.stdout)["mutants"]
    assert row["result"] == "user code error"
    assert row["error"]["rule"] == "should_bump_group_epoch"
    assert row["error"]["failure"] == "it raised KeyError: 'oops'"


def test_the_reproduce_line_works_where_it_is_printed(tmp_path: Path) -> None:
    write(tmp_path, "helper_rules.py", HELPER)
    write(
        tmp_path,
        "my.py",
        "from helper_rules import assign_twice\n"
        "TWICE = {'compute_target_assignment': assign_twice}\n",
    )
    done = cli(
        "explore",
        "--preset",
        "MUT2",
        "--rules",
        "my.py:TWICE",
        "--quiet",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == exitcodes.VIOLATION, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "reproduce:" in x]
    argv = line.split("reproduce: groupcheck ", 1)[1].split()
    again = cli(*argv, cwd=tmp_path)
    assert again.returncode == exitcodes.VIOLATION, again.stderr
    assert "VIOLATION of ValidTargetAssignment.Unique" in again.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explore", "--preset", "TINY", "--workers", "10000"], "at most 128 worker processes"),
        (["simulate", "--preset", "TINY", "--seed", "1", "--steps", "1000001"], "at most 100000"),
        (["explore", "--preset", "TINY", "--engine", "walk", "--max-steps", "100001"], "at most"),
    ],
)
def test_workers_and_steps_are_capped(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == exitcodes.BAD_INPUT
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_the_workers_variable_is_capped_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GROUPCHECK_WORKERS", "500")
    code, _, err = run(capsys, "explore", "--preset", "TINY", "--out", str(tmp_path / "o"))
    assert code == exitcodes.BAD_INPUT
    assert "GROUPCHECK_WORKERS: expected at most 128" in err


LEAKS = """\
from model.rules import DEFAULT_RULES

_kept = []


def leaky(request, config):
    _kept.append(b"x" * (len(_kept) + 1) * 1048576)  # keeps a little more each call
    return DEFAULT_RULES.validate_heartbeat_request(request, config)


RULES = {"validate_heartbeat_request": leaky}
"""


def test_a_rule_that_keeps_taking_memory_is_stopped_as_the_users_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 42: a rule that keeps a little more memory each call (1 MB more each time) is
    stopped once it has grown groupcheck's resident memory by ``--user-memory`` MB (8 here,
    so the test is quick: four calls) and reported as the user's code failing (8, the rule
    named), not groupcheck's internal error or the machine's out-of-memory killer."""
    from groupcheck.usercode import DEFAULT_USER_MEMORY_MB, set_memory_limit

    path = write(tmp_path, "leaks.py", LEAKS)
    argv = ["explore", "--preset", "TINY", "--rules", f"{path}:RULES", "--quiet"]
    try:
        code, out, err = run(
            capsys, *argv, "--user-memory", "8", "--out", str(tmp_path / "o"), "--json"
        )
    finally:
        set_memory_limit(DEFAULT_USER_MEMORY_MB)
    assert code == exitcodes.USER_CODE_ERROR, err
    first = err.splitlines()[0]
    assert f"your rule validate_heartbeat_request (leaky in {path}) failed" in first
    assert "it kept taking memory" in first
    assert "past the limit of 8 MB (--user-memory)" in first
    assert "Traceback" not in err
    assert json.loads(out)["rule"] == "validate_heartbeat_request"
