"""Every violated property, known findings as expected, and a change judged against the
reference rules on the same config, engine, seed and bounds (issues 38 and 43).

The changes here are written in the style of the mutant catalogue
(``groupcheck/mutants/catalogue.py``): one ``Rules`` field replaced. Every run is bounded
by walks (``walks``, ``max_steps``), never by seconds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.explore.run import explore, reference_reproduces
from model.config import Config
from model.consumer import reconcile as rc
from model.ids import Assignment
from model.presets import MUT2, STATIC
from model.records import Member
from model.rules import DEFAULT_RULES
from model.status import MemberState

F1 = ["NoDoubleClientOwnership", "OwnedPartitionsAreHeld", "RevokedBeforeReassigned"]
"""What the reference rules violate on STATIC's walks: finding F1 (docs/findings.md) and
what follows from it."""

WALKS = 300


def unreleased_never_rechecked(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Any,
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """A member from its third epoch on that waits on unreleased partitions is never
    looked at again (``CurrentAssignmentBuilder``'s UNRELEASED_PARTITIONS case dropped for
    later epochs): it never gets the partitions once they are released, and the group
    never converges."""
    if member.state is MemberState.UNRELEASED_PARTITIONS and member.member_epoch >= 3:
        return member
    return rc.reconcile(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )


def same_reconcile(member: Member, **kwargs: Any) -> Member:
    """The reference rule behind another function object: a change that changes nothing."""
    return rc.reconcile(member, **kwargs)


def report_pending(client: Any, config: Config) -> Any:
    """The client-side fix for F1 as a rule change: the heartbeat reports the partitions the
    client is about to add (``Config.report_pending_additions``)."""
    return DEFAULT_RULES.client_build_heartbeat(
        client, replace(config, report_pending_additions=True)
    )


def changed(config: Config, name: str, **rules: Any) -> Config:
    return replace(config, rules=replace(DEFAULT_RULES, **rules), name=f"{config.name}+{name}")


STUCK = changed(STATIC, "stuck", reconcile=unreleased_never_rechecked)


def _walk(config: Config, walks: int = WALKS, **kwargs: Any) -> Any:
    return explore(config, engine="walk", walks=walks, minimise=False, shortest=False, **kwargs)


def test_a_convergence_breaker_hidden_by_f1_is_reported() -> None:
    before = _walk(STUCK)  # as every run stopped before: at its first violation
    assert before.property == "OwnedPartitionsAreHeld"
    now = _walk(STUCK, expected=F1)
    assert now.result == "violation"
    assert now.property == "Convergence"
    found = {f.property for f in now.violations}
    assert found == {"Convergence", *F1}
    # Without the change, the expected findings are all there is: the run passes.
    plain = _walk(STATIC, expected=F1)
    assert plain.result == "ok"
    assert {f.property for f in plain.violations} == set(F1)


def test_every_property_reports_the_shortest_of_each_in_bfs() -> None:
    out = explore(STUCK, engine="bfs", max_states=40_000, every_property=True, shortest=False)
    lengths = {f.property: len(f.path.actions) for f in out.violations}
    assert "Convergence" in lengths
    assert "OwnedPartitionsAreHeld" in lengths
    # BFS order: F1's shortest path is 11 steps on STATIC (docs/findings.md).
    assert lengths["OwnedPartitionsAreHeld"] == 11


def test_introduces() -> None:
    out = _walk(STUCK, baseline=True)
    assert out.baseline is not None
    assert out.baseline["comparison"] == "introduces"
    assert out.result == "violation"
    assert out.property == "Convergence"
    assert out.path is not None
    assert not reference_reproduces(out.path, "Convergence")
    rows = {r["property"]: r["outcome"] for r in out.baseline["properties"]}
    assert rows == {"Convergence": "introduced", **dict.fromkeys(F1, "both")}


def test_both() -> None:
    out = _walk(changed(STATIC, "same", reconcile=same_reconcile), baseline=True)
    assert out.baseline is not None
    assert out.baseline["comparison"] == "both"
    assert out.result == "ok"
    assert out.property is None
    assert {r["outcome"] for r in out.baseline["properties"]} == {"both"}


def test_removes() -> None:
    out = _walk(changed(STATIC, "fix", client_build_heartbeat=report_pending), baseline=True)
    assert out.baseline is not None
    assert out.baseline["comparison"] == "removes"
    assert out.result == "ok"
    assert not out.violations
    assert {r["property"]: r["outcome"] for r in out.baseline["properties"]} == dict.fromkeys(
        F1, "removed"
    )


def test_neither() -> None:
    out = _walk(changed(MUT2, "same", reconcile=same_reconcile), walks=100, baseline=True)
    assert out.baseline is not None
    assert out.baseline["comparison"] == "neither"
    assert out.baseline["properties"] == []
    assert not out.violations
    # Nothing violated: the verdict is the search's own (100 walks miss a witness).
    assert out.result == out.search_result != "violation"
    assert out.property is None


RULES_FILE = """
from model.consumer import reconcile as rc
from model.status import MemberState


def unreleased_never_rechecked(member, **kw):
    if member.state is MemberState.UNRELEASED_PARTITIONS and member.member_epoch >= 3:
        return member
    return rc.reconcile(member, **kw)


STUCK = {"reconcile": unreleased_never_rechecked}
"""


def test_a_second_change_reads_the_reference_run_of_the_first() -> None:
    """The reference rules' run is a pure function of the config and the search: a second
    change on the same config and walks reads the first one's (one run kept, the same
    reference reported); a run the time budget cut short is never kept."""
    from groupcheck.explore import run

    run._REFERENCE_RUNS.clear()
    first = _walk(changed(MUT2, "same", reconcile=same_reconcile), walks=20, baseline=True)
    second = _walk(changed(MUT2, "other", reconcile=same_reconcile), walks=20, baseline=True)
    assert len(run._REFERENCE_RUNS) == 1
    assert first.baseline is not None
    assert second.baseline is not None
    one, other = first.baseline["reference"], second.baseline["reference"]
    assert (one.pop("config"), other.pop("config")) == (
        "MUT2+same-reference",
        "MUT2+other-reference",
    )
    assert one == other
    run._REFERENCE_RUNS.clear()
    cut = _walk(
        changed(MUT2, "same", reconcile=same_reconcile),
        walks=20,
        baseline=True,
        budget_seconds=1e-9,
    )
    assert cut.baseline is not None
    assert "time budget" in " ".join(cut.baseline["reference"]["reasons"])
    assert not run._REFERENCE_RUNS


@pytest.mark.parametrize("expect", [False, True])
def test_cli_json_carries_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expect: bool
) -> None:
    rules = tmp_path / "stuck.py"
    rules.write_text(RULES_FILE)
    argv = ["explore", "--preset", "STATIC", "--rules", f"{rules}:STUCK", "--engine", "walk"]
    argv += ["--walks", str(WALKS), "--quiet", "--json", "--out", str(tmp_path / "runs")]
    argv += ["--budget", "3600"]  # bounded by walks, never cut by a loaded machine's clock
    if expect:
        argv += ["--expect", "OwnedPartitionsAreHeld"]
    assert main(argv) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["property"] == "Convergence"
    base = doc["baseline"]
    assert base["comparison"] == "introduces"
    assert base["reference"]["violated"] == F1
    assert {v["property"] for v in doc["violations"]} == {"Convergence", *F1}
    expected = [v["property"] for v in doc["violations"] if v["expected"]]
    assert expected == (["OwnedPartitionsAreHeld"] if expect else [])


def test_cli_expect_passes_a_preset_with_its_known_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explore", "--preset", "STATIC", "--engine", "walk", "--walks", str(WALKS)]
    argv += ["--budget", "3600"]  # bounded by walks, never cut by a loaded machine's clock
    argv += ["--quiet", "--out", str(tmp_path / "runs")]
    assert main([*argv, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["property"] == "OwnedPartitionsAreHeld"
    code = main([*argv, *(x for name in F1 for x in ("--expect", name))])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "expected: OwnedPartitionsAreHeld" in out


def test_cli_unknown_expected_property_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--preset", "TINY", "--expect", "Nope"]) == 2
    assert "no such property" in capsys.readouterr().err
