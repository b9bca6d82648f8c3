"""Every preset's expected verdict under the reference rules (``model.presets.EXPECTED``,
docs/presets.md): declared for every preset, the docs table current, the cheap ones run
here (bfs within their state bound, which reaches the full verdict; the declared walks),
and the reproducers of docs/findings.md F2 and F3 replayed exactly as the docs print them.

Work is bounded by states and walks: about 20 CPU s in all."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from groupcheck import exitcodes
from groupcheck.cli import main
from groupcheck.expected import BEGIN, END, check, in_ci, table
from invariants.liveness import CONVERGENCE, fair_schedule
from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES
from model import system
from model.path import Path as ModelPath
from model.presets import BENCHMARK_PRESETS, EXPECTED, PRESETS, Expected
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, State

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
PROPERTIES = {p.name for p in (*STATE_PROPERTIES, *STEP_PROPERTIES)} | {CONVERGENCE.name}

CI = [(name, e) for name, es in EXPECTED.items() for e in es if in_ci(e)]


def test_every_preset_declares_its_expected_verdicts() -> None:
    assert set(EXPECTED) == set(PRESETS) | set(BENCHMARK_PRESETS)
    for name, es in EXPECTED.items():
        assert es, name
        for e in es:
            assert e.engine in {"bfs", "walk"}, name
            assert e.verdict in {"ok", "violation", "inconclusive"}, name
            # A bounded expectation, and only it, is inconclusive: a bfs to a depth.
            assert (e.verdict == "inconclusive") == (e.depth is not None), name
            if e.depth is not None:
                assert e.engine == "bfs", name
                assert e.property is None, name
                assert e.states is not None, name  # what the bounded check visits
                continue
            if e.verdict == "ok":
                assert e.property is None, name
                assert e.finding is None, name
                continue
            assert e.property in PROPERTIES, (name, e.property)
            assert e.finding, name
            if re.fullmatch(r"F\d+", e.finding):
                assert f"## {e.finding} " in FINDINGS, (name, e.finding)


def test_no_preset_is_declared_ok_without_a_complete_check() -> None:
    """An "ok" bfs expectation is exhausted in CI (``ci_max_states``), checked by the test
    file named, or records a complete run (``states``); else it is a bounded expectation."""
    for name, es in EXPECTED.items():
        for e in es:
            if e.verdict == "ok" and e.engine == "bfs" and e.checked_by is None:
                assert e.ci_max_states is not None or e.states is not None, name
    assert "no complete run recorded yet" not in table()


def _baseline_depths() -> dict[str, int]:
    """The depth tests/quality/test_mutants.py checks each mutant scenario clean to:
    ``BASELINE_DEPTH`` of groupcheck/mutants/catalogue.py."""
    from groupcheck.mutants.catalogue import BASELINE_DEPTH

    return dict(BASELINE_DEPTH)


def _depth_checked(checked_by: str | None) -> int | None:
    """The depth a CI check named by ``checked_by`` is bounded by (a mutant scenario's
    baseline, or a test file's "to depth N"); None when it is not bounded by depth."""
    if checked_by is None:
        return None
    found = re.search(r"\bto depth (\d+)", checked_by)
    if checked_by.startswith("tests/quality/test_mutants.py"):
        assert found is not None, checked_by  # the row names the depth it is checked to
    return int(found.group(1)) if found else None


def test_no_row_says_ok_on_a_depth_bounded_check_alone() -> None:
    """A row whose CI check is bounded by depth says "ok" only with a complete run
    recorded (its states; for a mutant scenario also the run); else it is a bounded
    expectation, to exactly the depth checked. A mutant scenario's depth is its
    ``BASELINE_DEPTH``, the depth tests/quality/test_mutants.py checks it clean to."""
    depths = _baseline_depths()
    bounded = 0
    for name, es in EXPECTED.items():
        for e in es:
            depth = _depth_checked(e.checked_by)
            if depth is None:
                continue
            bounded += 1
            assert e.checked_by is not None
            if e.checked_by.startswith("tests/quality/test_mutants.py"):
                assert depth == depths[name], (name, depth, depths[name])
                if e.verdict == "ok":
                    assert e.run is not None, name
                    assert "exhausted" in e.run, name
            if e.verdict == "ok":
                assert e.states is not None, f"{name}: ok on a check to depth {depth} alone"
            else:
                assert e.verdict == "inconclusive", name
                assert e.depth == depth, (name, e.depth, depth)
    assert bounded >= 20  # the mutant scenarios are among them
    rows = table().splitlines()
    for row in rows:
        cells = [c.strip() for c in row.split("|")]
        if len(cells) > 6 and re.search(r"\bto depth \d+", cells[5]) and cells[3] == "ok":
            assert re.search(r"; [\d,]+ states", cells[6]), row  # a complete run's states


def test_a_bounded_expectation_fails_on_a_violation_within_its_depth() -> None:
    """LOSSY's shortest F1 counterexample is 9 steps long: a bounded expectation holds to
    depth 8 and fails at 9."""
    got = check("LOSSY", Expected(verdict="inconclusive", depth=8, states=0))
    assert got.matches, got.found
    assert got.found.startswith("within 8 steps: inconclusive")
    got = check("LOSSY", Expected(verdict="inconclusive", depth=9, states=0))
    assert not got.matches
    assert got.found.startswith("within 9 steps: violation of OwnedPartitionsAreHeld")


def test_a_test_named_as_checking_a_verdict_names_the_preset() -> None:
    from groupcheck.mutants import MUTANTS

    scenarios = {m.config.name for m in MUTANTS.values()}
    for name, es in EXPECTED.items():
        for e in es:
            if e.checked_by is None:
                continue
            if e.checked_by.startswith("tests/quality/test_mutants.py"):
                assert name in scenarios, name  # its baseline is checked clean there
                continue
            text = (ROOT / e.checked_by.split(" ")[0]).read_text(encoding="utf-8")
            assert name in text, (name, e.checked_by)


def test_the_docs_table_is_current() -> None:
    doc = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")
    block = doc.split(BEGIN, 1)[1].split(END, 1)[0]
    assert block == "\n" + table(), "run: groupcheck presets table --into docs/presets.md"


@pytest.mark.parametrize(
    ("name", "expected"), CI, ids=[f"{n}-{e.engine}-{e.only or 'all'}" for n, e in CI]
)
def test_the_cheap_presets_verdicts(name: str, expected: Expected) -> None:
    got = check(name, expected, max_states=expected.ci_max_states)
    assert got.matches, f"{name}: expected {expected.verdict} {expected.property}; {got.found}"
    if expected.verdict in {"ok", "inconclusive"} and expected.states is not None:
        # exhausted within the bound, or every state within the depth
        assert f", {expected.states} states" in got.found


def _documented_replay(finding: str) -> str:
    """The path code of the ``groupcheck replay --preset LOSSY`` line of a finding."""
    section = FINDINGS.split(f"## {finding} ", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"`groupcheck replay --preset LOSSY --path (\w+)`", section)
    assert found is not None, f"{finding}: no replay reproducer"
    return found.group(1)


def _replay(code: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["replay", "--preset", "LOSSY", "--path", code, "--json"]) == exitcodes.VIOLATION
    doc: dict[str, object] = json.loads(capsys.readouterr().out)
    return doc


def test_f2_reproducer_is_a_delayed_leave_fencing_the_rejoin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = _documented_replay("F2")
    doc = _replay(code, capsys)
    assert doc["result"] == "violation"
    assert doc["step"] == doc["length"] == 19
    assert [v["property"] for v in doc["violations"]] == ["OwnedPartitionsAreHeld"]  # type: ignore[attr-defined]
    path = ModelPath.decode(PRESETS["LOSSY"], code)
    last = path.actions[-1].message  # type: ignore[attr-defined]
    assert isinstance(last.body, ConsumerGroupHeartbeatRequest)
    assert last.body.member_epoch == -1
    # The rejoin at epoch 0 on a newer connection was answered before the leave arrived.
    rejoins = [
        i
        for i, a in enumerate(path.actions)
        if getattr(a, "message", None) is not None
        and a.message.client == last.client  # type: ignore[attr-defined]
        and isinstance(a.message.body, ConsumerGroupHeartbeatRequest)  # type: ignore[attr-defined]
        and a.message.body.member_epoch == 0  # type: ignore[attr-defined]
        and a.message.connection > last.connection  # type: ignore[attr-defined]
    ]
    assert rejoins
    assert rejoins[0] < len(path.actions) - 1


def test_f3_reproducer_leaves_an_assignment_on_a_closed_connection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = _documented_replay("F3")
    doc = _replay(code, capsys)
    assert doc["result"] == "violation"
    assert doc["step"] == doc["length"] == 21
    assert [v["property"] for v in doc["violations"]] == ["Convergence"]  # type: ignore[attr-defined]
    config = PRESETS["LOSSY"]
    state = ModelPath.decode(config, code).final()
    # The answer with B's new assignment is addressed to the connection B abandoned.
    b = state.client("B")
    stale = [
        m
        for m in state.network
        if m.client == "B"
        and isinstance(m.body, ConsumerGroupHeartbeatResponse)
        and m.body.assignment
    ]
    assert stale
    assert all(m.connection < b.connection for m in stale)
    _, last, converged = fair_schedule(state, config, 400)
    assert not converged
    assert isinstance(last, State)
    member, client = last.group.members["B"], last.client("B")
    assert ("foo", 1) in member.assigned_partitions
    assert client.member_epoch == member.member_epoch
    assert not client.owned
    assert system.enabled(last, config)  # the schedule loops; it is not stuck
