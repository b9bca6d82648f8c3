"""``groupcheck simulate``: the KIP case-study layout, determinism, JSON, bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from groupcheck.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_prints_kip_layout_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", "--preset", "SMALL", "--seed", "1", "--steps", "12")
    assert code == 0, err
    assert out.count("\nstep ") == 12
    for heading in ("Group (epoch=", "Target Assignment (epoch=", "Member Assignment", "Clients: "):
        assert out.count(heading) == 13  # the initial state and every step
    assert "pending-partitions=" in out or "• Empty" in out


def test_simulate_is_deterministic_and_seed_matters(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys, "simulate", "--preset", "SMALL", "--seed", "3", "--steps", "30")[1]
    again = run(capsys, "simulate", "--preset", "SMALL", "--seed", "3", "--steps", "30")[1]
    other = run(capsys, "simulate", "--preset", "SMALL", "--seed", "4", "--steps", "30")[1]
    assert first == again
    assert first != other


def test_simulate_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "simulate", "--preset", "TINY", "--seed", "2", "--steps", "10", "--json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["preset"] == "TINY"
    assert doc["seed"] == 2
    assert 1 <= len(doc["steps"]) <= 10
    step = doc["steps"][0]
    assert {"step", "action", "kind", "group"} <= set(step)
    group = step["group"]
    assert {"group_epoch", "status", "target_assignment", "members", "clients"} <= set(group)
    assert group["target_assignment"]["epoch"] <= group["group_epoch"]


def test_simulate_reaches_a_stable_group(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "simulate",
        "--preset",
        "KIP848_CASE_STUDY",
        "--seed",
        "0",
        "--steps",
        "120",
        "--json",
    )
    assert code == 0
    statuses = [s["group"]["status"] for s in json.loads(out)["steps"]]
    assert "STABLE" in statuses


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["simulate", "--preset", "NOPE", "--seed", "1"], "unknown preset 'NOPE'"),
        (["simulate", "--preset", "SMALL", "--seed", "-1"], "expected an integer >= 0, got -1"),
        (["simulate", "--preset", "SMALL", "--seed", "x"], "expected an integer"),
        (["simulate", "--seed", "1"], "--preset"),
        (
            ["simulate", "--preset", "SMALL", "--seed", "1", "--steps", "-5"],
            "expected an integer >= 0, got -5",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_console_entry_point_runs() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "groupcheck",
            "simulate",
            "--preset",
            "TINY",
            "--seed",
            "1",
            "--steps",
            "3",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "step 3:" in proc.stdout
