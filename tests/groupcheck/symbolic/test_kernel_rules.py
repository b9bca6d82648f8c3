"""A user's replacement of the reconciliation kernel (``--rules``, written against
``model/sets.py`` and wrapped by ``model.reconcile.kernel_rule``) is read by the symbolic
engines: ``explore --engine bmc`` and ``prove`` run it through the Z3 backend
(``invariants/z3/proof/z3sets.py``) in the KIP-848 relation. A rules file replacing
anything else is refused with one line (exit 2). Bounded by depth and by ``--only``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main

DATA = Path(__file__).resolve().parents[2] / "data" / "kernel_rules.py"


def rules(name: str) -> str:
    return f"{DATA}:{name}"


def bmc(name: str, tmp_path: Path) -> list[str]:
    return [
        "explore",
        "--engine",
        "bmc",
        "--preset",
        "MUT2",
        "--depth",
        "2",
        "--budget",
        "900",
        "--quiet",
        "--json",
        "--rules",
        rules(name),
        "--out",
        str(tmp_path / "runs"),
    ]


def test_bmc_finds_a_kernel_that_revokes_without_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The catalogue's revoke-without-waiting, written as a kernel: the same property at the
    # same depth (tests/groupcheck/symbolic/test_bmc_mutants.py: GroupStatusConsistent.Stable at
    # depth 2).
    assert main(bmc("EAGER", tmp_path)) == 1
    out = capsys.readouterr().out
    assert "GroupStatusConsistent.Stable" in out
    assert "violation" in out


def test_bmc_of_the_reference_kernel_restated_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(bmc("SAME", tmp_path)) == 0
    capsys.readouterr()


PROVE = ["prove", "--quiet", "--json", "--only", "GroupStatusConsistent.Stable"]


def test_prove_reads_the_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    # Under --only the other conjuncts are assumed: all proved is "inconclusive" (3).
    assert main([*PROVE, "--rules", rules("SAME")]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["failed"] == 0
    assert main([*PROVE, "--rules", rules("EAGER")]) == 1
    doc = json.loads(capsys.readouterr().out)
    failed = {ob["goal"] for ob in doc["obligations"] if ob["status"] == "failed"}
    assert failed == {"GroupStatusConsistent.Stable"}, failed


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("MIXED", "it replaces client_build_heartbeat"),
        ("PLAIN", "a plain function"),
        ("PYIF", "Z3 cannot read its kernel pyif"),
    ],
)
@pytest.mark.parametrize("command", ["bmc", "prove"])
def test_what_the_symbolic_engines_cannot_read_is_refused_in_one_line(
    name: str, why: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = bmc(name, tmp_path) if command == "bmc" else [*PROVE, "--rules", rules(name)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert why in err, err
    assert "kernel_rule" in err, err
