"""A user's replacement of the reconciliation kernel (``--rules``, written against
``model/sets.py`` and wrapped by ``model.consumer.reconcile.kernel_rule``) is read by the symbolic
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
from invariants.z3.proof.transition import (
    COMMIT_KERNEL_VARIANTS,
    KERNEL_VARIANTS,
    VARIANTS,
    Options,
    families,
)
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


def test_bmc_and_prove_read_a_replacement_of_the_offset_commit_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """STALE (the catalogue's accept-stale-commit-epoch restated as a user's kernel of the
    offset-commit check): BMC finds OffsetCommitAtValidEpoch violated at the variant's
    depth on its scenario, and ``prove`` fails that goal at the OffsetCommit."""
    argv = bmc("STALE", tmp_path)
    argv[argv.index("MUT2")] = "MUT2_COMMIT"
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "OffsetCommitAtValidEpoch" in out
    assert "violation" in out
    only = ["prove", "--quiet", "--json", "--only", "OffsetCommitAtValidEpoch"]
    assert main([*only, "--rules", rules("STALE")]) == 1
    doc = json.loads(capsys.readouterr().out)
    failed = {(ob["goal"], ob["family"]) for ob in doc["obligations"] if ob["status"] == "failed"}
    assert failed == {("OffsetCommitAtValidEpoch", "DeliverMessage.offset_commit")}, failed


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
    (``model.consumer.reconcile.kernel_rule``) that Z3 reads, and its variant is that kernel
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


# ------------------------------------------------------------------- the offset-commit check

COMMIT_MUTANTS = sorted(COMMIT_KERNEL_VARIANTS)


def _restated(
    name: str | None, *, epoch: int, member: int | None, nobody: bool, held: bool
) -> bool:
    """Whether the commit is accepted, as the check and its mutants read before they were
    kernels (``coordinator.validate_offset_commit`` and the catalogue's functions)."""
    if epoch < 0 and nobody:
        return True
    if member is None:
        return name == "accept-commit-from-unknown-member"
    if name == "accept-stale-commit-epoch" or epoch == member:
        return True
    return epoch < member and held and name != "strict-commit-epoch"


def _cases() -> list[tuple[int, int | None, bool, bool]]:
    return [
        (epoch, member, member is None and nobody, held)
        for epoch in (-2, -1, 0, 1, 2, 3)
        for member in (None, 0, 1, 2)
        for nobody in (False, True)
        for held in (False, True)
    ]


@pytest.mark.parametrize("name", [None, *COMMIT_MUTANTS])
def test_the_commit_kernels_run_on_both_backends_as_the_check_they_replaced(
    name: str | None,
) -> None:
    """The offset-commit check (``coordinator.validate_offset_commit_kernel``) and its
    mutants' kernels accept what the functions they replaced accepted, with frozensets;
    with Z3, on the same values, the term they build simplifies to the same truth value."""
    import z3

    from invariants.z3.proof.z3sets import Z3SETS
    from model.consumer.coordinator import validate_offset_commit_kernel
    from model.sets import FROZENSETS

    kernel = validate_offset_commit_kernel if name is None else MUTANTS[name].commit_kernel
    assert kernel is not None
    for epoch, member, nobody, held in _cases():
        inputs = {"known": member is not None, "nobody": nobody, "held": held}
        want = _restated(name, epoch=epoch, member=member, nobody=nobody, held=held)
        got = kernel(FROZENSETS, epoch=epoch, member_epoch=member or 0, **inputs)
        assert got is want, (epoch, member, nobody, held)
        term = kernel(
            Z3SETS,
            epoch=z3.IntVal(epoch),
            member_epoch=z3.IntVal(member or 0),
            **{k: z3.BoolVal(v) for k, v in inputs.items()},
        )
        assert z3.is_true(z3.simplify(term)) is want, (epoch, member, nobody, held)


def test_the_commit_mutants_with_a_variant_are_kernels() -> None:
    """Every catalogue mutant of ``Rules.validate_offset_commit`` with a symbolic variant
    is a kernel (``model.consumer.coordinator.commit_kernel_rule``), and its variant is that kernel
    (``transition.COMMIT_KERNEL_VARIANTS``)."""
    of_check = {m.name for m in MUTANTS.values() if m.field == "validate_offset_commit"}
    assert {n for n in of_check if n in VARIANTS} == COMMIT_KERNEL_VARIANTS
    for name in COMMIT_KERNEL_VARIANTS:
        mutant = MUTANTS[name]
        assert mutant.commit_kernel is not None
        assert mutant.commit_kernel is getattr(mutant.function, "kernel", None)
        assert mutant.kernel is None
    assert all(
        m.commit_kernel is None for m in MUTANTS.values() if m.field != "validate_offset_commit"
    )


@pytest.mark.parametrize("name", COMMIT_MUTANTS)
def test_the_relation_of_a_commit_kernel_variant_is_its_kernels(name: str) -> None:
    """No branch of the relation reads a commit-kernel variant's name: the relation under
    the variant is the relation running its mutant's kernel, family by family, term for
    term; and the kernel changes the OffsetCommit."""
    config = MUTANTS[name].mutated_config()
    epochs = config.assignment_epochs
    pre, post = SymState.fresh("a", epochs=epochs), SymState.fresh("b", epochs=epochs)
    named = families(pre, post, Options.of(config, name))
    unnamed = families(pre, post, Options.of(config))
    assert [f.name for f in named] == [f.name for f in unnamed]
    assert all(a.formula.eq(b.formula) for a, b in zip(named, unnamed, strict=True))
    reference = families(pre, post, Options.of(MUTANTS[name].config))
    differ = [a.name for a, b in zip(named, reference, strict=True) if not a.formula.eq(b.formula)]
    assert differ == ["DeliverMessage.offset_commit"]


def test_a_commit_kernel_variant_needs_its_kernel() -> None:
    with pytest.raises(ValueError, match="patch of the offset-commit check"):
        Options(variant="accept-stale-commit-epoch")
    with pytest.raises(ValueError, match="patch of the offset-commit check"):
        Options.of(MUTANTS["strict-commit-epoch"].config, "strict-commit-epoch")


def test_a_config_running_a_commit_kernel_mutant_pickles() -> None:
    config = MUTANTS["accept-stale-commit-epoch"].mutated_config()
    back = pickle.loads(pickle.dumps(config))
    assert back.rules.validate_offset_commit == config.rules.validate_offset_commit
    assert (
        back.rules.validate_offset_commit.kernel
        is MUTANTS["accept-stale-commit-epoch"].commit_kernel
    )
