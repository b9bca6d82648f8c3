"""A user's replacement of the reconciliation kernel (``--rules``, written against
``model/sets.py`` and wrapped by ``model.reconcile.kernel_rule``) is read by the symbolic
engines: ``explore --engine bmc`` and ``prove`` run it through the Z3 backend
(``invariants/z3/proof/z3sets.py``) in the KIP-848 relation. A rules file replacing
anything else is refused with one line (exit 2). Bounded by depth and by ``--only``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.mutants import MUTANTS
from invariants.z3.proof.state import SymState
from invariants.z3.proof.transition import KERNEL_VARIANTS, VARIANTS, Options, families
from invariants.z3.proof.z3sets import unreadable

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
    # The catalogue's revoke-without-waiting kernel restated (its variant is that kernel):
    # the same property at the same depth (tests/groupcheck/symbolic/test_bmc_mutants.py:
    # GroupStatusConsistent.Stable at depth 2).
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


# --------------------------------------------------------------------------- the catalogue's


def test_the_reconcile_mutants_with_a_variant_are_kernels() -> None:
    """Every catalogue mutant of ``Rules.reconcile`` with a symbolic variant is a kernel
    (``model.reconcile.kernel_rule``) that Z3 reads, and its variant is that kernel
    (``transition.KERNEL_VARIANTS``)."""
    of_reconcile = {m.name for m in MUTANTS.values() if m.field == "reconcile"}
    assert {n for n in of_reconcile if n in VARIANTS} == KERNEL_VARIANTS
    for name in KERNEL_VARIANTS:
        mutant = MUTANTS[name]
        assert mutant.kernel is not None
        assert mutant.kernel is getattr(mutant.function, "kernel", None)
        assert unreadable(mutant.kernel) is None
    assert all(m.kernel is None for m in MUTANTS.values() if m.field != "reconcile")


@pytest.mark.parametrize("name", sorted(KERNEL_VARIANTS))
def test_the_relation_of_a_kernel_variant_is_its_kernels(name: str) -> None:
    """No branch of the relation reads a kernel variant's name: the relation under the
    variant is the relation running its mutant's kernel (as a user's ``--rules`` kernel
    runs), family by family, term for term; and the kernel changes the heartbeat."""
    config = MUTANTS[name].mutated_config()
    pre, post = SymState.fresh("a"), SymState.fresh("b")
    named = families(pre, post, Options.of(config, name))
    unnamed = families(pre, post, Options.of(config))
    assert [f.name for f in named] == [f.name for f in unnamed]
    assert all(a.formula.eq(b.formula) for a, b in zip(named, unnamed, strict=True))
    reference = families(pre, post, Options.of(MUTANTS[name].config))
    assert not named[0].formula.eq(reference[0].formula)


def test_a_kernel_variant_needs_its_kernel() -> None:
    """A kernel variant without its kernel would be the reference relation under the
    mutant's name: refused."""
    with pytest.raises(ValueError, match="patch of the reconciliation kernel"):
        Options(variant="revoke-without-waiting")
    with pytest.raises(ValueError, match="patch of the reconciliation kernel"):
        Options.of(MUTANTS["ack-ignored"].config, "ack-ignored")


def test_a_config_running_a_kernel_mutant_pickles() -> None:
    """The Spark search ships its config to the workers pickled (``groupcheck.pipeline.bfs``):
    a kernel rule is a value naming its module-level kernel."""
    config = MUTANTS["revoke-without-waiting"].mutated_config()
    back = pickle.loads(pickle.dumps(config))
    assert back.rules.reconcile == config.rules.reconcile
    assert back.rules.reconcile.kernel is MUTANTS["revoke-without-waiting"].kernel
