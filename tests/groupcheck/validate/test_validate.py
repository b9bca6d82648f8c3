"""``groupcheck validate``: conformance replay and safety checks on traces."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import tempfile
import tracemalloc
from pathlib import Path as FsPath

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tracelines import event, header, progress_walk
from tracelines import heartbeat as hb

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.mutants import get_mutant
from groupcheck.validate import validate_conformance, validate_safety
from invariants.check import Checker
from model import system
from model.actions import Action
from model.config import Config
from model.path import Path
from model.presets import PRESETS, TINY
from model.trace import path_lines


def test_model_trace_is_valid_in_both_modes() -> None:
    lines = list(path_lines(progress_walk(TINY, 1)))
    conformance = validate_conformance("t", lines)
    assert conformance.result == "ok", conformance.violations
    assert conformance.events == len(lines) - 1
    # 80 events: convergence needs --settle quiet events, fewer here than the default 100.
    assert validate_safety("t", lines).result == "inconclusive"
    assert validate_safety("t", lines, settle=10).result == "ok"


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
    assert report.result == "violation"
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
    assert (finding.line, finding.property) == (6, "Observed.NoDoubleOwnership")
    assert "foo-1" in finding.message
    assert "A" in finding.message


def test_safety_accepts_the_same_hand_out_after_release() -> None:
    lines = [
        header(),
        hb("A", ok("A", 1, parts(0, 1)), False),
        hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0)}, True),
        hb("B", ok("B", 2, parts(1)), False),
    ]
    report = validate_safety("t", lines)
    assert report.violations == []
    assert report.result == "inconclusive"  # B has not acknowledged foo-1 yet


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
    assert props == [(3, "Observed.MemberEpochMonotone"), (5, "Observed.FencingRespected")]


def test_cli_exit_codes_and_json(tmp_path: FsPath, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.ndjson"
    good.write_text("\n".join(path_lines(progress_walk(TINY, 2))) + "\n")
    assert main(["validate", "--settle", "10", str(good)]) == 0
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
    assert main(["validate", "--settle", "10", "--json", str(good), str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "violation"
    assert doc["violations"][0]["file"] == str(bad)
    assert doc["violations"][0]["line"] == 3
    assert [f["result"] for f in doc["files"]] == ["ok", "violation"]
    broken = tmp_path / "broken.ndjson"
    broken.write_bytes(b'{"format": "groupcheck-trace", "version": 1}\n\xff\xfe\n')
    assert main(["validate", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "broken.ndjson" in err
    assert "Traceback" not in err
    assert main(["validate", str(tmp_path / "missing.ndjson")]) == 2


def test_cli_results_ok_violation_inconclusive_malformed(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file and the run are ok, violation, inconclusive or malformed; the exit status
    is the worst (groupcheck.exitcodes), and text output says which and why."""
    short = tmp_path / "short.ndjson"  # 80 events: fewer than --settle 100 after a join
    short.write_text("\n".join(path_lines(progress_walk(TINY, 2))) + "\n")
    assert main(["validate", str(short)]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"inconclusive: {short}: Observed.Convergence not checked: only ")
    assert out[-1].startswith("inconclusive: nothing violated, but not everything could be")
    assert main(["validate", "--json", str(short)]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "inconclusive"
    (file,) = doc["files"]
    assert file["result"] == "inconclusive"
    assert file["reasons"][0].startswith("Observed.Convergence not checked")
    assert doc["reasons"] == [f"{short}: {file['reasons'][0]}"]
    assert file["events"] == 80
    assert file["violations"] == file["notes"] == []
    broken = tmp_path / "broken.ndjson"
    broken.write_text(header() + '\n{"seq": 1, "kind": \n')
    double = tmp_path / "double.ndjson"
    double.write_text(
        "\n".join(
            [header(), hb("B", ok("B", 2, parts(1)), False), hb("A", ok("A", 2, parts(1)), False)]
        )
    )
    # Malformed input does not stop the other files; a violation outranks it.
    assert main(["validate", "--json", str(broken), str(short)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], [f["result"] for f in doc["files"]]) == (
        "malformed",
        ["malformed", "inconclusive"],
    )
    assert doc["files"][1]["events"] == 80
    assert main(["validate", "--json", str(broken), str(short), str(double)]) == 1
    assert json.loads(capsys.readouterr().out)["result"] == "violation"
    assert main(["validate", "--settle", "10", str(short)]) == 0
    convergence, last = capsys.readouterr().out.splitlines()
    assert convergence.startswith(f"convergence: {short}: checked: 1 quiet window(s) checked")
    assert last.startswith("ok: nothing violated (80 events in 1 file(s)")


def test_stdin_in_both_modes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-`` reads the trace from standard input, named <stdin> in messages."""
    lines = list(path_lines(progress_walk(TINY, 2)))
    text = ("\n".join(lines) + "\n").encode()
    for mode in ("safety", "conformance"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))
        assert main(["validate", "--mode", mode, "--settle", "10", "--json", "-"]) == 0
        (file,) = json.loads(capsys.readouterr().out)["files"]
        assert (file["file"], file["result"], file["events"]) == ("<stdin>", "ok", 80)
    broken = text.replace(b'"seq": 3', b'"seq": 3, "seq": 3', 1)
    for mode in ("safety", "conformance"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(broken)))
        assert main(["validate", "--mode", mode, "-"]) == 2
        (message,) = capsys.readouterr().err.splitlines()
        assert re.fullmatch(r"groupcheck: error: <stdin>:4:\d+: key 'seq' given twice", message)


def test_safety_convergence_holds_on_a_settled_model_trace() -> None:
    path = progress_walk(TINY, 3, steps=300)
    report = validate_safety("t", list(path_lines(path)), settle=50)
    assert report.result == "ok"
    assert report.notes == report.reasons == []


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
    assert finding.property == "Observed.Convergence"
    assert "A=1" in finding.message
    assert "B=2" in finding.message
    short = validate_safety("t", lines + quiet, settle=20)
    assert short.violations == []
    assert short.result == "inconclusive"
    (reason,) = short.reasons
    assert reason == (
        "Observed.Convergence not checked: only 3 events follow the last perturbation "
        "(line 4), and --settle asks for 20"
    )


def test_safety_reports_a_member_reporting_a_partition_another_still_owns() -> None:
    """A client that starts on a partition nobody gave it since its owner last held it
    (e.g. applying a stale target) shows in its next heartbeat's TopicPartitions."""
    lines = [
        header(),
        hb("A", ok("A", 1, parts(0)), False),
        hb("B", ok("B", 1, parts(1)), False),
        hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}, True),
    ]
    (finding,) = validate_safety("t", lines).violations
    assert (finding.line, finding.property) == (4, "Observed.NoDoubleOwnership")
    assert finding.message == "A reports owning foo-1 while B has not released it"


def test_safety_follows_process_events_of_model_traces() -> None:
    """A response read by nobody (its process crashed, or its connection was closed by a
    request timeout) gives nothing to consume; an expiry is no fencing the client saw."""
    joined = [
        header(),
        hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("A", ok("A", 1, parts(0, 1)), False),
    ]
    b_takes_over = [
        event("SessionTimeout", "coordinator", {"member_id": "A"}),
        hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True),
        hb("B", ok("B", 3, parts(0, 1)), False),
    ]
    crashed = [*joined, event("Crash", "client:A", {"client": "A"}), *b_takes_over]
    assert validate_safety("t", crashed).violations == []
    alive = [*joined, *b_takes_over]  # a zombie: A still consumes behind an expired session
    assert [v.property for v in validate_safety("t", alive).violations] == [
        "Observed.NoDoubleOwnership"
    ]
    # A's join response arrives on a connection A closed after a request timeout: unread.
    unread = [
        header(),
        hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True),
        event("RequestTimeout", "client:A", {"client": "A"}),
        hb("A", ok("A", 1, parts(0, 1)), False),
        *b_takes_over,
    ]
    assert validate_safety("t", unread).violations == []
    # A request sent before the expiry and delivered after it is no fencing ignored.
    late = [*joined, b_takes_over[0], hb("A", {"MemberId": "A", "MemberEpoch": 1}, True)]
    assert [v.property for v in validate_safety("t", late).violations] == []


def _walk_with_verdict(config: Config, seed: int, steps: int) -> tuple[list[str], bool]:
    """A random walk over every enabled action, cut at the model's first violated state
    property; its trace lines and whether the model saw a violation."""
    path, checker = progress_walk(config, seed, steps, perturb=True), Checker()
    for i, state in enumerate(path.states()):
        if i and checker.check_state(state):
            return list(path_lines(Path(config, path.actions[:i]))), True
    return list(path_lines(path)), False


@pytest.mark.parametrize("name", ["TINY", "SMALL", "LOSSY", "STATIC"])
def test_safety_mode_has_no_false_alarms_on_the_models_own_traces(name: str) -> None:
    """Crashes, restarts, request timeouts, leaves and session expiries: where the model
    sees no violated property, safety mode reports none either."""
    config = PRESETS[name]
    clean = 0
    for seed in range(600):
        lines, violated = _walk_with_verdict(config, seed, 60)
        if violated:
            continue
        clean += 1
        report = validate_safety(f"{name}-{seed}", lines, settle=10**6)
        assert report.violations == [], (seed, report.violations[0])
    assert clean > 500


@pytest.mark.parametrize("mutant", ["revoke-without-waiting", "bookkeeping-drops-pending"])
def test_safety_mode_finds_the_double_ownership_a_mutant_coordinator_causes(mutant: str) -> None:
    """The model's shortest path to two clients consuming one partition, as a trace: safety
    mode reports the hand-out that caused it, from the heartbeats alone."""
    config = get_mutant(mutant).mutated_config()
    found = bfs(config, check_convergence=False, stop_on="NoDoubleClientOwnership")
    assert found.path is not None
    lines = list(path_lines(found.path, get_mutant(mutant).config.name))
    props = [v.property for v in validate_safety("t", lines, settle=10**6).violations]
    assert props[:1] == ["Observed.NoDoubleOwnership"]


def test_round_trip_path_trace_conformance_path() -> None:
    """A model path → its trace → conformance replay → the same path."""
    path = progress_walk(PRESETS["SMALL"], 5, steps=120, perturb=True)
    replayed: list[Action] = []
    report = validate_conformance("t", path_lines(path), on_step=replayed.append)
    assert report.result == "ok"
    assert tuple(replayed) == path.actions


def test_invalid_utf8_is_reported_at_its_line_and_column(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = list(path_lines(progress_walk(TINY, 2)))
    raw = [line.encode() for line in lines]
    raw[3] = raw[3][:10] + b"\xff" + raw[3][10:]
    bad = tmp_path / "bad.ndjson"
    bad.write_bytes(b"\n".join(raw) + b"\n")
    for mode in ("safety", "conformance"):
        assert main(["validate", "--mode", mode, str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"groupcheck: error: {bad}:4:11: not UTF-8")
        assert err.count("\n") == 1


def test_millisecond_timestamps_are_accepted() -> None:
    """``ts`` and ``seq`` are int64: a Unix-epoch millisecond timestamp is a valid ``ts``."""
    line = json.loads(hb("A", ok("A", 1, parts(0)), False))
    line["ts"], line["seq"] = 1_795_000_000_000, 2**40
    report = validate_safety("t", [header(), json.dumps(line)])
    assert (report.error, report.violations) == (None, [])
    line["ts"] = 2**63
    report = validate_safety("t", [header(), json.dumps(line)])
    assert report.error is not None
    assert "'ts' out of the int64 range" in report.error
    epoch = hb("A", ok("A", 2**31, parts(0)), False)  # Kafka's MemberEpoch is an int32
    report = validate_safety("t", [header(), epoch])
    assert report.error is not None
    assert "'MemberEpoch' out of the int32 range" in report.error


_FUZZ_BASE = [line.encode() for line in path_lines(progress_walk(TINY, 4, steps=30))]


@given(st.data())
def test_fuzzed_files_through_the_cli(data: st.DataObject) -> None:
    """``groupcheck validate`` on a damaged file, in both modes: truncated lines, invalid
    UTF-8, unknown kinds, wrong versions, wrong types, huge numbers, junk — exit 0, 1 or 2;
    on 2 exactly one ``FILE:LINE:COLUMN: reason`` line on stderr, and never a traceback."""
    lines = list(_FUZZ_BASE)
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    how = data.draw(
        st.sampled_from(["truncate", "utf8", "kind", "version", "retype", "number", "junk"])
    )
    line = lines[i]
    if how == "truncate":
        line = line[: data.draw(st.integers(0, len(line) - 1))]
    elif how == "utf8":
        at = data.draw(st.integers(0, len(line)))
        bad = data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88"]))
        line = line[:at] + bad + line[at:]
    elif how == "kind":
        line = line.replace(b'"kind": "', b'"kind": "X', 1) if i else line
    elif how == "version":
        line = line.replace(b'"version": 1', b'"version": 7', 1)
    elif how == "retype":
        obj = json.loads(line)
        key = data.draw(st.sampled_from(sorted(obj)))
        obj[key] = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=4)))
        line = json.dumps(obj).encode()
    elif how == "number":
        big = data.draw(st.integers(-(2**80), 2**80))
        line = line.replace(b"0", str(big).encode(), 1)
    else:
        line = data.draw(st.binary(max_size=60))
    lines[i] = line
    mode = data.draw(st.sampled_from(["safety", "conformance"]))
    with tempfile.TemporaryDirectory() as tmp:
        trace = FsPath(tmp) / "fuzzed.ndjson"
        trace.write_bytes(b"\n".join(lines) + b"\n")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", "--mode", mode, str(trace)])
    assert code in (0, 1, 2, 3)
    assert "Traceback" not in err.getvalue()
    if code == 2:
        (message,) = err.getvalue().splitlines()
        assert re.match(rf"groupcheck: error: {re.escape(str(trace))}:\d+:\d+: \S", message)
        assert "validator failed" not in message


def _one_error(err: str) -> str:
    (line,) = err.splitlines()
    assert "Traceback" not in line
    return line


@pytest.mark.parametrize("mode", ["safety", "conformance"])
def test_an_endless_line_is_one_error_in_bounded_memory(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``/dev/zero`` is one line that never ends: refused after 16 MiB, not read to the end
    of memory."""
    tracemalloc.start()
    try:
        assert main(["validate", "--mode", mode, "/dev/zero"]) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _one_error(capsys.readouterr().err) == (
        "groupcheck: error: /dev/zero:1: line longer than 16 MiB"
    )
    assert peak < 48 * 2**20


def test_bom_is_accepted_and_bad_json_is_one_line_with_its_position(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = list(path_lines(progress_walk(TINY, 2)))
    trace = tmp_path / "bom.ndjson"
    trace.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    for mode in ("safety", "conformance"):
        assert main(["validate", "--mode", mode, "--settle", "10", str(trace)]) == 0
    capsys.readouterr()
    seq, member = lines[2].index('"seq": 2'), lines[2].index('"MemberId": "A"')
    cases = {
        # a 5,001-digit integer: was "validator failed: ValueError", without a position
        "digits": (
            lines[2].replace('"seq": 2', '"seq": 2' + "0" * 5000),
            f":3:{seq + 8}: number with more than 4300 digits",
        ),
        "surrogate": (  # in a member id: was accepted, and crashed the text output
            lines[2].replace('"MemberId": "A"', '"MemberId": "A\\ud800"'),
            f":3:{member + 15}: lone surrogate escape",
        ),
        "twice": (
            lines[2].replace('"seq": 2,', '"seq": 2, "seq": 2,'),
            f":3:{seq + 11}: key 'seq' given twice",
        ),
    }
    for name, (line, needle) in cases.items():
        bad = tmp_path / f"{name}.ndjson"
        bad.write_text("\n".join([lines[0], lines[1], line, *lines[3:]]) + "\n")
        for mode in ("safety", "conformance"):
            assert main(["validate", "--mode", mode, str(bad)]) == 2, name
            message = _one_error(capsys.readouterr().err)
            assert message.startswith(f"groupcheck: error: {bad}:3:"), message
            assert needle in message, message


def test_itf_size_cap_nesting_and_strict_json(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "deep.itf.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["validate", str(deep)]) == 2
    assert _one_error(capsys.readouterr().err) == (
        f"groupcheck: error: {deep}:1:1: JSON nested too deeply"
    )
    twice = tmp_path / "twice.itf.json"
    twice.write_text('{\n  "states": [],\n  "states": []\n}')
    assert main(["validate", str(twice)]) == 2
    assert _one_error(capsys.readouterr().err) == (
        f"groupcheck: error: {twice}:3:3: key 'states' given twice"
    )
    monkeypatch.setattr("groupcheck.validate.files.MAX_ITF_BYTES", 10)
    assert main(["validate", "--format", "itf", str(twice)]) == 2
    assert _one_error(capsys.readouterr().err) == (
        f"groupcheck: error: {twice}: larger than 0 MiB, the most an ITF document may be"
    )


def test_a_failing_validator_is_an_internal_error_not_malformed_input(
    tmp_path: FsPath,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in a validator is exit 4 with the traceback saved, never "malformed" (2);
    ``validate_file`` (many files: the pipeline) marks it as an internal error."""
    from groupcheck.validate import validate_file

    trace = tmp_path / "t.ndjson"
    trace.write_text("\n".join(path_lines(progress_walk(TINY, 2))) + "\n")
    monkeypatch.setenv("GROUPCHECK_CRASH_DIR", str(tmp_path / "crashes"))

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a bug")

    monkeypatch.setattr("groupcheck.validate.files.validate_safety", broken)
    assert main(["validate", str(trace)]) == 4
    message = _one_error(capsys.readouterr().err)
    assert message.startswith("groupcheck: internal error: ValueError: a bug (traceback saved to ")
    assert len(list((tmp_path / "crashes").iterdir())) == 1
    report = validate_file(str(trace), "safety")
    assert (report.result, report.error) == ("internal-error", None)
    assert report.internal_error == "ValueError: a bug"


# --------------------------------------------------------------------------- own counterexamples


def _explored(tmp_path: FsPath, *argv: str) -> FsPath:
    """The trace of the counterexample ``groupcheck explore *argv`` writes."""
    from groupcheck.cli import main as cli_main

    out = tmp_path / "runs"
    assert cli_main(["explore", *argv, "--quiet", "--out", str(out), "--json"]) == 1
    return next(out.glob("*/trace.ndjson"))


def test_a_mutants_counterexample_replays_under_the_mutant(tmp_path: Path) -> None:
    from groupcheck.validate.files import validate_path

    trace = _explored(tmp_path, "--mutant", "assignor-assigns-twice", "--no-baseline")
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["mutant"] == "assignor-assigns-twice"
    assert header["settings"]["name"].startswith("MUT2")
    report = validate_path(str(trace), "conformance")
    assert report.result == "violation"
    assert [v.property for v in report.violations] == ["ValidTargetAssignment.Unique"]
    # Under the reference rules the same events are a legal run that violates nothing:
    # the mutant differs only in the target the coordinator computed, which no event of
    # this short trace delivers yet — why a counterexample must replay under its mutant.
    reference = validate_path(str(trace), "conformance", reference=True)
    assert reference.result == "ok"


def test_a_shrunk_configs_trace_replays_from_its_settings(tmp_path: Path) -> None:
    from groupcheck.validate.files import validate_path

    trace = _explored(
        tmp_path, "--mutant", "no-bump-on-metadata-change", "--no-baseline", "--shrink-config"
    )
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["settings"]["clients"]  # the shrunk config, not a preset
    report = validate_path(str(trace), "conformance")
    assert report.error is None, report.error
    assert report.result == "violation"


def test_a_rules_file_counterexample_replays_and_a_changed_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from groupcheck.cli import main as cli_main

    rules = tmp_path / "twice.py"
    rules.write_text(
        "from dataclasses import replace\n"
        "from model.consumer import target as tg\n"
        "def twice(group, topics, assignor):\n"
        "    group = tg.compute_target_assignment(group, topics, assignor)\n"
        "    t = dict(group.target_assignment)\n"
        "    ms = sorted(t)\n"
        "    if len(ms) >= 2:\n"
        "        t[ms[0]] = t[ms[0]] | t[ms[1]]\n"
        "    return replace(group, target_assignment=type(group.target_assignment)(t))\n"
        "TWICE = {'compute_target_assignment': twice}\n"
    )
    trace = _explored(tmp_path, "--preset", "MUT2", "--rules", f"{rules}:TWICE")
    capsys.readouterr()
    assert cli_main(["validate", "--mode", "conformance", str(trace)]) == 1
    assert "ValidTargetAssignment.Unique" in capsys.readouterr().out
    rules.write_text(rules.read_text() + "# edited\n")
    assert cli_main(["validate", "--mode", "conformance", str(trace)]) == 2
    assert "changed since the trace was written" in capsys.readouterr().err


def test_safety_mode_has_no_false_alarms_when_a_client_changes_its_instance_id() -> None:
    """``ChangeInstanceId`` of a consumer-protocol client (it gives up its partitions and
    joins at epoch 0 with its member id and another instance id): the model's own traces
    raise no alarm in safety mode."""

    static = PRESETS["STATIC"]
    config = dataclasses.replace(
        static,
        name="STATIC_RENAME",
        clients=(
            dataclasses.replace(static.clients[0], alt_instance_id="a2"),
            *static.clients[1:],
        ),
        max_perturbations=1,
        perturbations=frozenset({"ChangeInstanceId"}),
    )
    changed = 0
    for seed in range(60):
        lines, violated = _walk_with_verdict(config, seed, 80)
        assert not violated, seed
        changed += any('"kind": "ChangeInstanceId"' in line for line in lines)
        report = validate_safety(f"rename-{seed}", lines, settle=10**6)
        assert report.violations == [], (seed, report.violations[0])
    assert changed > 30


# --------------------------------------------------------------------------- issue 42


def _at(line: str, ts: int) -> str:
    doc = json.loads(line)
    doc["ts"] = ts
    return json.dumps(doc)


@pytest.mark.parametrize("mode", ["safety", "conformance"])
def test_a_trace_without_events_is_inconclusive_not_ok(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    trace = tmp_path / "header-only.ndjson"
    model_header = next(iter(path_lines(progress_walk(TINY, 1))))  # names its config
    trace.write_text(model_header + "\n\n")
    assert main(["validate", "--mode", mode, str(trace)]) == 3
    out = capsys.readouterr().out
    assert (
        f"inconclusive: {trace}: the trace has no events after its header: nothing was "
        "checked" in out
    )
    assert main(["validate", "--mode", mode, "--json", str(trace)]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], doc["events"]) == ("inconclusive", 0)


def test_time_running_backwards_is_malformed_at_its_line(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str]
) -> None:
    join = hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True)
    answer = hb("A", ok("A", 1, parts(0, 1)), False)
    again = hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}, True)
    trace = tmp_path / "t.ndjson"
    # A response stamped before the response above it.
    trace.write_text(
        "\n".join([header(), _at(join, 100), _at(answer, 200), _at(again, 300), _at(answer, 150)])
        + "\n"
    )
    argv = ["validate", "--mode", "safety", "--session-timeout-ms", "45000", str(trace)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    column = _at(answer, 150).find('"ts"') + 1
    assert err == (
        f"groupcheck: error: {trace}:5:{column}: ts 150 is before ts 200 of the response at "
        "line 3 on the same connection: time runs backwards\n"
    )
    # A request stamped before the request above it on its connection.
    trace.write_text("\n".join([header(), _at(join, 100), _at(answer, 200), _at(again, 50)]) + "\n")
    assert main(argv) == 2
    assert "ts 50 is before ts 100 of the request at line 2" in capsys.readouterr().err
    # A response stamped before its own request.
    trace.write_text("\n".join([header(), _at(join, 100), _at(answer, 90)]) + "\n")
    assert main(argv) == 2
    assert "ts 90 is before ts 100 of its client's request at line 2" in capsys.readouterr().err


def test_a_capture_writing_overlapping_exchanges_is_not_time_running_backwards() -> None:
    """A capture writes each exchange when its response arrives, request first: B's
    exchange (sent at 100, answered at 400) ends after A's (sent at 200, answered at 300),
    so B's request comes after A's response and is stamped before it — as the real
    captures under tests/ are."""
    lines = [
        header(),
        _at(hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True), 200),
        _at(hb("A", ok("A", 1, parts(0, 1)), False), 300),
        _at(hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True), 100),
        _at(hb("B", ok("B", 1, []), False), 400),
    ]
    report = validate_safety("c.ndjson", lines, settle=1)
    assert report.error is None


def test_exchanges_in_request_order_are_not_time_running_backwards() -> None:
    """A capture writes exchanges in the order their requests were forwarded (the order
    the coordinator handled them): A's leave (sent at 100, answered at 400) before B's
    heartbeat (sent at 200, answered at 300), which was given the partitions A released,
    so B's response is stamped before A's — on other connections, which is no time running
    backwards, and no hand-over before a release."""
    lines = [
        header(),
        _at(hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True), 10),
        _at(hb("A", ok("A", 1, parts(0, 1)), False), 20),
        _at(hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}, True), 30),
        _at(hb("A", ok("A", 1, None), False), 40),
        _at(hb("A", {"MemberId": "A", "MemberEpoch": -1}, True), 100),
        _at(hb("A", {**ok("A", -1, None), "HeartbeatIntervalMs": 0}, False), 400),
        _at(hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True), 200),
        _at(hb("B", ok("B", 2, parts(0, 1)), False), 300),
    ]
    report = validate_safety("c.ndjson", lines, settle=1)
    assert report.error is None
    assert [v.property for v in report.violations] == ["Observed.Convergence"]  # B's ack: not yet


def test_a_member_epoch_below_minus_two_is_malformed_at_its_line(
    tmp_path: FsPath, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = hb("A", {"MemberId": "A", "MemberEpoch": -3, "TopicPartitions": []}, True)
    trace = tmp_path / "t.ndjson"
    trace.write_text("\n".join([header(), bad]) + "\n")
    assert main(["validate", "--mode", "safety", str(trace)]) == 2
    column = bad.find('"MemberEpoch"') + 1
    assert capsys.readouterr().err == (
        f"groupcheck: error: {trace}:2:{column}: member epoch -3 is below -2, the lowest a "
        "ConsumerGroupHeartbeat carries\n"
    )
    static_leave = hb("A", {"MemberId": "A", "MemberEpoch": -2, "InstanceId": "i"}, True)
    assert validate_safety("t", [header(), static_leave]).error is None


# ---------------------------------------------------- exchanges handled in either order


def _given_away(a_request: dict[str, object], a_at: tuple[int, int]) -> list[str]:
    """A owns foo-0, foo-1; B's heartbeat (sent at 200, answered at 300) is given them,
    written before A's exchange ``a_request`` (sent and answered at ``a_at``)."""
    a_join = {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}
    a_ack = {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}
    return [
        header(),
        _at(hb("A", a_join, True), 10),
        _at(hb("A", ok("A", 1, parts(0, 1)), False), 20),
        _at(hb("A", a_ack, True), 30),
        _at(hb("A", ok("A", 1, None), False), 40),
        _at(hb("B", {"MemberId": "B", "MemberEpoch": 0, "TopicPartitions": []}, True), 200),
        _at(hb("B", ok("B", 2, parts(0, 1)), False), 300),
        _at(hb("A", a_request, True), a_at[0]),
        _at(hb("A", {**ok("A", a_request["MemberEpoch"], None)}, False), a_at[1]),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(
    ("a_request", "a_at", "handed_over"),
    [
        # A leaves while B's heartbeat is in flight: the coordinator may have handled the
        # leave first, so the hand-over is not a violation.
        ({"MemberId": "A", "MemberEpoch": -1}, (250, 310), False),
        # A acknowledges the revocation of both while B's heartbeat is in flight: the same.
        ({"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": []}, (250, 310), False),
        # A's leave went out after B's response came back: the coordinator gave B the
        # partitions first, which is a hand-over before their release.
        ({"MemberId": "A", "MemberEpoch": -1}, (301, 310), True),
    ],
)
def test_a_release_overlapping_a_hand_over_may_have_come_first(
    a_request: dict[str, object], a_at: tuple[int, int], handed_over: bool
) -> None:
    report = validate_safety("c.ndjson", _given_away(a_request, a_at), settle=100)
    assert report.error is None
    properties = [v.property for v in report.violations]
    assert properties == (["Observed.NoDoubleOwnership"] if handed_over else [])


def test_a_request_that_claims_a_partition_is_not_moved() -> None:
    """A stale acknowledgement (F1's shape) claims what another member was just given: it
    is no release, so overlapping that member's exchange in time does not move it, and it
    is reported as the claim it is."""
    lines = _given_away(
        {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1, 2)}, (250, 310)
    )
    lines[6] = _at(hb("B", ok("B", 2, parts(2)), False), 300)  # B is given foo-2 only
    report = validate_safety("c.ndjson", lines, settle=100)
    assert report.error is None
    assert [v.message for v in report.violations] == [
        "A reports owning foo-2 while B has not released it"
    ]


def test_a_trace_whose_quiet_windows_were_all_too_short_is_inconclusive(
    capsys: pytest.CaptureFixture[str], tmp_path: FsPath
) -> None:
    """Members join, settle for a few events and leave: no quiet window holds --settle
    events, so convergence was never checked — inconclusive, with the reason, not ok; the
    JSON and the text say whether convergence was checked."""
    join = hb("A", {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": []}, True)
    given = hb("A", ok("A", 1, parts(0, 1)), False)
    acked = hb("A", {"MemberId": "A", "MemberEpoch": 1, "TopicPartitions": parts(0, 1)}, True)
    leave = hb("A", {"MemberId": "A", "MemberEpoch": -1}, True)
    lines = [header(), join, given, acked, leave]
    report = validate_safety("t", lines, settle=100)
    assert report.result == "inconclusive"
    (reason,) = report.reasons
    assert reason.startswith("Observed.Convergence not checked: no quiet window was long enough")
    assert "1 with members in the group, the longest lines 3-4, 2 events" in reason
    assert report.convergence == {
        "checked": False,
        "windows_checked": 0,
        "windows_unchecked": 1,
        "settle": 100,
        "settle_ms": 0,
    }
    checked = validate_safety("t", lines, settle=2)
    assert checked.result == "ok"
    assert checked.convergence is not None
    assert checked.convergence["checked"]
    trace = tmp_path / "t.ndjson"
    trace.write_text("\n".join(lines) + "\n")
    assert main(["validate", str(trace)]) == 3
    out = capsys.readouterr().out.splitlines()
    assert f"convergence: {trace}: not checked (see inconclusive): 0 quiet window(s)" in out[1]
    assert main(["validate", "--json", str(trace)]) == 3
    (file,) = json.loads(capsys.readouterr().out)["files"]
    assert file["convergence"]["checked"] is False
