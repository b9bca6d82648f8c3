"""``groupcheck validate``: conformance replay and safety checks on traces."""

from __future__ import annotations

import json
from pathlib import Path as FsPath

import pytest
from tracelines import header, progress_walk
from tracelines import heartbeat as hb

from groupcheck.cli import main
from groupcheck.mutants import get_mutant
from groupcheck.validate import validate_conformance, validate_safety
from model import system
from model.presets import TINY
from model.trace import path_lines


def test_model_trace_is_valid_in_both_modes() -> None:
    lines = list(path_lines(progress_walk(TINY, 1)))
    conformance = validate_conformance("t", lines)
    assert conformance.result == "valid", conformance.violations
    assert conformance.events == len(lines) - 1
    assert validate_safety("t", lines).result == "valid"


def first_divergence(seed: int) -> tuple[list[str], int] | None:
    """A trace produced by the revoke-without-waiting coordinator that goes on past a
    response the reference coordinator would not have sent."""
    mutant = get_mutant("revoke-without-waiting")
    path = progress_walk(mutant.mutated_config(), seed, 120, perturb=True)
    reference = mutant.config
    state = system.initial(reference)
    for i, action in enumerate(path.actions):
        if action not in system.enabled(state, reference):
            return list(path_lines(path, reference.name)), i + 2  # line of the event
        state = system.step(state, action, reference)
    return None


def test_conformance_reports_the_first_divergent_event() -> None:
    found = next(d for d in (first_divergence(s) for s in range(40)) if d is not None)
    lines, line_no = found
    report = validate_conformance("mutant.ndjson", lines)
    assert report.result == "violations"
    (finding,) = [v for v in report.violations if v.property == "Conformance"]
    assert finding.line == line_no
    assert "enabled:" in finding.message


def parts(*ps: int) -> list[dict[str, object]]:
    return [{"TopicId": "foo", "Partitions": list(ps)}]


def ok(member: str, epoch: int, assignment: list[dict[str, object]] | None) -> dict[str, object]:
    body: dict[str, object] = {
        "ErrorCode": 0,
        "MemberId": member,
        "MemberEpoch": epoch,
        "HeartbeatIntervalMs": 5000,
    }
    if assignment is not None:
        body["Assignment"] = {"TopicPartitions": assignment}
    return body


def test_safety_reports_a_partition_given_before_it_was_released() -> None:
    lines = [
        header(),
        hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("A", ok("A", 1, parts(0, 1)), False),
        hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}, True),
        hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("B", ok("B", 2, parts(1)), False),  # line 6: A still owns foo-1
    ]
    report = validate_safety("edited.ndjson", lines)
    (finding,) = report.violations
    assert (finding.line, finding.property) == (6, "NoDoubleClientOwnership")
    assert "foo-1" in finding.message
    assert "A" in finding.message


def test_safety_accepts_the_same_hand_out_after_release() -> None:
    lines = [
        header(),
        hb("A", ok("A", 1, parts(0, 1)), False),
        hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0)}, True),
        hb("B", ok("B", 2, parts(1)), False),
    ]
    assert validate_safety("t", lines).result == "valid"


def test_safety_epoch_regression_and_fencing() -> None:
    lines = [
        header(),
        hb("A", ok("A", 3, None), False),
        hb("A", ok("A", 2, None), False),  # line 3: epoch went backwards
        hb(
            "A",
            {"ErrorCode": 110, "MemberId": None, "MemberEpoch": 0, "HeartbeatIntervalMs": 0},
            False,
        ),
        hb("A", {"MemberId": "A", "MemberEpoch": 2}, True),  # line 5: ignores the fencing
    ]
    props = [(v.line, v.property) for v in validate_safety("t", lines).violations]
    assert props == [(3, "MemberEpochMonotone"), (5, "FencingRespected")]


def test_cli_exit_codes_and_json(tmp_path: FsPath, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.ndjson"
    good.write_text("\n".join(path_lines(progress_walk(TINY, 2))) + "\n")
    assert main(["validate", str(good)]) == 0
    bad = tmp_path / "bad.ndjson"
    bad.write_text(
        header()
        + "\n"
        + hb("B", ok("B", 2, parts(1)), False)
        + "\n"
        + hb("A", ok("A", 2, parts(1)), False)
        + "\n"
    )
    capsys.readouterr()
    assert main(["validate", "--json", str(good), str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "violations"
    assert doc["violations"][0]["file"] == str(bad)
    assert doc["violations"][0]["line"] == 3
    broken = tmp_path / "broken.ndjson"
    broken.write_bytes(b'{"format": "groupcheck-trace", "version": 1}\n\xff\xfe\n')
    assert main(["validate", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "broken.ndjson" in err
    assert "Traceback" not in err
    assert main(["validate", str(tmp_path / "missing.ndjson")]) == 2


def test_safety_convergence_holds_on_a_settled_model_trace() -> None:
    path = progress_walk(TINY, 3, steps=300)
    report = validate_safety("t", list(path_lines(path)), settle=50)
    assert report.result == "valid"
    assert report.notes == []


def test_safety_reports_non_convergence_after_the_last_perturbation() -> None:
    lines = [
        header(),
        hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("A", ok("A", 1, parts(0, 1)), False),
        hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("B", ok("B", 2, []), False),
    ]
    quiet = [hb("B", {"MemberId": "B", "MemberEpoch": 2}, True), hb("B", ok("B", 2, None), False)]
    report = validate_safety("t", lines + quiet * 10, settle=20)
    (finding,) = report.violations
    assert finding.property == "Convergence"
    assert "A=1" in finding.message
    assert "B=2" in finding.message
    short = validate_safety("t", lines + quiet, settle=20)
    assert short.violations == []
    assert short.notes
    assert "inconclusive" in short.notes[0]
