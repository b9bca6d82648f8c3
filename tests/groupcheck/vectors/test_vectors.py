"""Kafka's unit tests as conformance vectors (issue 41, docs/vectors.md)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.vectors.load import (
    Vector,
    VectorFile,
    VectorFileError,
    load_dir,
    load_explained,
    load_file,
)
from groupcheck.vectors.run import (
    DIFFER,
    EXPLAINED,
    PASS,
    ClassResult,
    explanation_key,
    run_files,
    run_vector,
    tie_break_problems,
)
from model.consumer.reconcile import reconcile
from model.records import Member
from model.rules import DEFAULT_RULES

VECTORS = Path(__file__).resolve().parents[3] / "vectors"

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _results(rules: object = DEFAULT_RULES) -> list[ClassResult]:
    return run_files(load_dir(VECTORS), load_explained(VECTORS), rules)  # type: ignore[arg-type]


def _differences(rules: object = DEFAULT_RULES) -> set[str]:
    return {o.vector.id for r in _results(rules) for o in r.outcomes if o.status == DIFFER}


def test_every_difference_is_explained() -> None:
    assert _differences() == set()


def test_every_explanation_names_a_vector_that_differs_and_a_fidelity_row() -> None:
    explained = load_explained(VECTORS)
    outcomes = {
        explanation_key(r.file.name, o.vector.id): o for r in _results() for o in r.outcomes
    }
    fidelity = (DOCS / "fidelity.md").read_text(encoding="utf-8")
    for key, explanation in explained.items():
        assert key in outcomes, key
        assert outcomes[key].status == EXPLAINED, key
        assert f"| {explanation.fidelity} |" in fidelity, key


def test_an_explained_tie_break_is_still_checked() -> None:
    """An explained assignor difference stays explained only while the model's answer is
    valid, balanced and sticky like Kafka's: a model that keeps nothing of the current
    target (or leaves a partition out) differs again."""
    f = load_dir(VECTORS, "UniformHomogeneousAssignmentBuilderTest")[0]
    vid = "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics"
    vector = next(v for v in f.vectors if v.id == vid)
    key = explanation_key(f.name, vid)
    explained = load_explained(VECTORS)
    assert run_vector(vector, explained, file_name=f.name).status == EXPLAINED
    kafka = vector.expected["assignment"]
    swapped = {"A": kafka["B"], "B": kafka["A"]}  # balanced, valid, nothing kept
    assert tie_break_problems(vector, {"assignment": swapped}) == [
        "keeps 0 partitions where Kafka's answer keeps 4"
    ]
    short = {"A": kafka["A"], "B": {}}
    assert "assigns other partitions than Kafka's answer" in tie_break_problems(
        vector, {"assignment": short}
    )
    assert key in explained


def test_fidelity_table_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/fidelity.md carries ``groupcheck vectors run --markdown`` between its markers."""
    main(["vectors", "run", "--markdown"])
    table = capsys.readouterr().out.strip()
    text = (DOCS / "fidelity.md").read_text(encoding="utf-8")
    begin, end = "<!-- vectors-table:begin -->\n", "\n<!-- vectors-table:end -->"
    current = text[text.index(begin) + len(begin) : text.index(end)]
    assert current == table, "paste `groupcheck vectors run --markdown` into docs/fidelity.md"


def test_every_vector_file_follows_the_documented_schema() -> None:
    """docs/vectors.schema.json describes every file (an expected ``steps`` included)."""
    from jsonschema import Draft202012Validator

    schema = json.loads((DOCS / "vectors.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    for path in sorted(VECTORS.glob("*.json")):
        if path.name == "explained.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, (path.name, errors[:3])


def test_every_file_names_its_kafka_version_and_artifact() -> None:
    for f in load_dir(VECTORS):
        assert f.kafka_version == "4.3.0"
        assert f.artifact.endswith(":4.3.0:test-sources")
        assert f.vectors


def test_a_broken_reconciliation_fails_vectors() -> None:
    def never_revokes(member: Member, /, **kwargs: object) -> Member:
        new = reconcile(member, **kwargs)  # type: ignore[arg-type]
        if new.partitions_pending_revocation and not member.partitions_pending_revocation:
            return member
        return new

    broken = replace(DEFAULT_RULES, reconcile=never_revokes)
    assert _differences(broken)


def test_cli_run_reports_counts(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["vectors", "run", "--json"])
    doc = json.loads(capsys.readouterr().out)
    total = doc["summary"]
    assert total["vectors"] == total["pass"] + total["differ"] + total["not_expressible"]
    assert total["differ"] == total["explained"]
    assert status == 0
    assert doc["result"] == "ok"


def test_cli_run_one_class(capsys: pytest.CaptureFixture[str]) -> None:
    main(["vectors", "run", "--class", "CurrentAssignmentBuilderTest"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("CurrentAssignmentBuilderTest.json")
    assert out[-1].endswith("not expressible")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{", ":1:2:"),
        ('{"schema": "x"}', "$.schema"),
        (
            '{"schema": "groupcheck-vectors", "version": 1, "kafka_version": "4.3.0", '
            '"source": {"class": "C", "artifact": "a"}, "vectors": [{"id": "t"}]}',
            "$.vectors[0]",
        ),
        (
            '{"schema": "groupcheck-vectors", "version": 1, "kafka_version": "4.3.0", '
            '"source": {"class": "C", "artifact": "a"}, "vectors": [{"id": "t", "method": "t", '
            '"kind": "nope", "input": {}, "expected": {}}]}',
            "$.vectors[0].kind",
        ),
    ],
)
def test_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    bad = tmp_path / "Bad.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(VectorFileError, match=r"Bad\.json"):
        load_file(bad)
    assert main(["vectors", "run", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "Bad.json" in err[0]
    assert where in err[0]


def test_export_writes_answers_and_refuses_foreign_dir(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["vectors", "export", str(out)]) == 0
    doc = json.loads((out / "CurrentAssignmentBuilderTest.json").read_text(encoding="utf-8"))
    assert doc["answers"]["testStableToStable"]["member"]["member_epoch"] == 11
    assert load_file(out / "CurrentAssignmentBuilderTest.json").vectors
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("x")
    assert main(["vectors", "export", str(foreign)]) == 2
    assert (foreign / "mine.txt").read_text() == "x"


def test_passing_vectors_pass() -> None:
    results = run_files(load_dir(VECTORS, "CurrentAssignmentBuilderTest"), {})
    assert sum(o.status == PASS for r in results for o in r.outcomes) >= 25


def _heartbeat_vector(vid: str) -> tuple[object, str]:
    f = load_dir(VECTORS, "GroupMetadataManagerTest")[0]
    return next(v for v in f.vectors if v.id == vid), f.name


def test_consumer_heartbeat_vectors_compare_what_they_expect() -> None:
    """A heartbeat vector passes on the model, and differs when one expected response
    field or one expected group field is changed."""
    vector, name = _heartbeat_vector("testMemberJoinsEmptyConsumerGroup")
    assert run_vector(vector, {}, file_name=name).status == PASS  # type: ignore[arg-type]
    wrong_epoch = json.loads(json.dumps(vector.expected))  # type: ignore[attr-defined]
    wrong_epoch["responses"][0]["member_epoch"] = 3
    outcome = run_vector(replace(vector, expected=wrong_epoch), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert "responses[0].member_epoch" in outcome.detail
    wrong_state = json.loads(json.dumps(vector.expected))  # type: ignore[attr-defined]
    wrong_state["group"]["members"]["memberId"]["state"] = "UNREVOKED_PARTITIONS"
    outcome = run_vector(replace(vector, expected=wrong_state), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert "group.members.memberId.state" in outcome.detail


def test_consumer_heartbeat_vectors_follow_the_kafka_version() -> None:
    """4.3's epoch layout gives a new group's first member epoch 2; run with 4.2's rules,
    the same vector differs (epoch 1)."""
    vector, name = _heartbeat_vector("testMemberJoinsEmptyConsumerGroup")
    assert run_vector(vector, {}, file_name=name, kafka_version="4.3.0").status == PASS  # type: ignore[arg-type]
    outcome = run_vector(vector, {}, file_name=name, kafka_version="4.2")  # type: ignore[arg-type]
    assert outcome.status == DIFFER
    assert "member_epoch" in outcome.detail


def test_mutants_table_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/vectors.md carries ``groupcheck vectors mutants --markdown``; the fence mutant
    fails the leave and timeout vectors."""
    main(["vectors", "mutants", "--markdown"])
    table = capsys.readouterr().out.strip()
    text = (DOCS / "vectors.md").read_text(encoding="utf-8")
    begin, end = "<!-- vectors-mutants:begin -->\n", "\n<!-- vectors-mutants:end -->"
    assert text[text.index(begin) + len(begin) : text.index(end)] == table
    row = next(line for line in table.splitlines() if "`no-epoch-bump-on-fence`" in line)
    assert "testSessionTimeoutExpiration" in row or int(row.split("|")[2]) >= 3


def test_unknown_kafka_version_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "run", "--kafka-version", "9.9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--kafka-version" in err[0]


def test_bad_heartbeat_step_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((VECTORS / "GroupMetadataManagerTest.json").read_text(encoding="utf-8"))
    vector = next(v for v in doc["vectors"] if v.get("expressible", True) and v["input"]["steps"])
    vector["input"]["steps"][0]["session_timeout"] = "x"  # a request and a timer in one step
    doc["vectors"] = [vector]
    (tmp_path / "GroupMetadataManagerTest.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["vectors", "run", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "steps[0]: one request or one timer per step" in err[0]


def test_nothing_run_is_inconclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory with no vectors runs nothing: one line, exit 3, never ok."""
    assert main(["vectors", "run", str(tmp_path)]) == 3
    captured = capsys.readouterr()
    assert captured.out.strip() == "0 vectors: 0 pass, 0 differ (0 explained), 0 not expressible"
    err = captured.err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("inconclusive: no vector run")
    assert main(["vectors", "run", "--json", str(tmp_path)]) == 3
    assert json.loads(capsys.readouterr().out)["result"] == "inconclusive"


def test_consumer_membership_vectors_catch_a_client_that_leaves_after_being_fenced() -> None:
    """The release before a leave that ends after a fence sends no leave heartbeat
    (docs/fidelity.md V8): a client that still leaves fails the vector."""
    from model.consumer import client as cl

    def leaves_anyway(client: object, config: object) -> object:
        if getattr(client, "callback", None) == cl.RELEASE_ASSIGNMENT:
            return cl.release_assignment(replace(client, callback=None))  # type: ignore[type-var]
        return cl.complete_callback(client, config)  # type: ignore[arg-type]

    files = load_dir(VECTORS, "ConsumerMembershipManagerTest")
    vector = next(
        v for v in files[0].vectors if v.id == "testFatalFailureWhenStateIsPrepareLeaving"
    )
    assert run_vector(vector, {}, file_name=files[0].name).status == PASS
    broken = replace(DEFAULT_RULES, client_complete_callback=leaves_anyway)
    outcome = run_vector(vector, {}, broken, files[0].name)  # type: ignore[arg-type]
    assert outcome.status == DIFFER
    assert '"LEAVING"' in outcome.detail


def test_consumer_membership_step_is_checked_on_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((VECTORS / "ConsumerMembershipManagerTest.json").read_text(encoding="utf-8"))
    vector = next(v for v in doc["vectors"] if v.get("expressible", True))
    vector["input"]["steps"][0] = {"join": True, "heartbeat": True}
    doc["vectors"] = [vector]
    (tmp_path / "ConsumerMembershipManagerTest.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["vectors", "run", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "steps[0]: must be one action" in err[0]


def test_classic_group_vectors_compare_what_they_expect() -> None:
    """A classic vector passes; a wrong generation in a JoinGroup response, a missing held
    response, or a wrong group after a downgrade each make it differ."""
    vector, name = _heartbeat_vector("testValidLeaveGroup")
    assert run_vector(vector, {}, file_name=name).status == PASS  # type: ignore[arg-type]
    wrong = json.loads(json.dumps(vector.expected))  # type: ignore[attr-defined]
    wrong["steps"][1]["responses"][0]["generation_id"] = 2
    outcome = run_vector(replace(vector, expected=wrong), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert "steps[1].responses[A#0].generation_id" in outcome.detail
    held = json.loads(json.dumps(vector.expected))  # type: ignore[attr-defined]
    held["steps"][1]["responses"] = []
    outcome = run_vector(replace(vector, expected=held), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert "steps[1].responses to A" in outcome.detail
    down, _ = _heartbeat_vector("testLastConsumerProtocolMemberLeavingConsumerGroup")
    assert run_vector(down, {}, file_name=name).status == PASS  # type: ignore[arg-type]
    stays = json.loads(json.dumps(down.expected))  # type: ignore[attr-defined]
    stays["group"]["type"] = "consumer"
    outcome = run_vector(replace(down, expected=stays), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert "group.type" in outcome.detail


def test_classic_group_vectors_catch_a_coordinator_that_skips_the_downgrade() -> None:
    """Under the policy ``upgrade`` (no downgrade) the group stays a consumer group when
    its last consumer-protocol member leaves: the downgrade vector differs."""
    vector, name = _heartbeat_vector("testLastConsumerProtocolMemberLeavingConsumerGroup")
    inp = json.loads(json.dumps(vector.input))  # type: ignore[attr-defined]
    inp["config"]["migration_policy"] = "upgrade"
    outcome = run_vector(replace(vector, input=inp), {}, file_name=name)  # type: ignore[type-var]
    assert outcome.status == DIFFER
    assert 'group.type: expected "classic", model "consumer"' in outcome.detail


def test_classic_group_step_is_checked_on_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((VECTORS / "GroupMetadataManagerTest.json").read_text(encoding="utf-8"))
    vector = next(v for v in doc["vectors"] if v["id"] == "testValidHeartbeat")
    vector["input"]["steps"][0] = {"client": "A", "heartbeat": {}, "leave": []}
    doc["vectors"] = [vector]
    (tmp_path / "GroupMetadataManagerTest.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["vectors", "run", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "steps[0]: one request or one timer per step" in err[0]


def _client_vector(name: str, vid: str) -> tuple[VectorFile, Vector]:
    f = load_dir(VECTORS, name)[0]
    return f, next(v for v in f.vectors if v.id == vid)


def test_client_assignor_vectors_run_the_leader_step() -> None:
    """The ``client-assignor`` runner calls ``Rules.classic_leader_assignment``: a leader
    step that honours only the highest generation's claims, or that fails the rebalance,
    makes a generation vector differ that passes under the reference rules."""
    from groupcheck.mutants.catalogue import highest_generation_claims_only

    f, v = _client_vector(
        "AbstractStickyAssignorTest", "testNoReassignmentOnCurrentMembers[NO_BROKER_RACK]"
    )
    assert run_vector(v, {}, DEFAULT_RULES, f.name).status == PASS
    mutant = replace(DEFAULT_RULES, classic_leader_assignment=highest_generation_claims_only)
    assert run_vector(v, {}, mutant, f.name).status == DIFFER
    failing = replace(DEFAULT_RULES, classic_leader_assignment=lambda *a: None)
    outcome = run_vector(v, {}, failing, f.name)
    assert outcome.status == DIFFER
    assert "validateCooperativeAssignment" in outcome.detail


def test_client_assignor_bounds_and_settled_are_compared() -> None:
    """``bounds`` and ``settled`` are checked: a bound the answer breaks, or a settled
    assignment other than the one after the follow-up rebalances, is a difference."""
    f, v = _client_vector(
        "CooperativeStickyAssignorTest",
        "testPartitionsTransferringOwnershipIncludeThePartition"
        "ClaimedByMultipleConsumersInSameGeneration[NO_BROKER_RACK]",
    )
    assert run_vector(v, {}, DEFAULT_RULES, f.name).status == PASS
    wrong = dict(v.expected, settled={"consumer1": {"topic": [0]}})
    outcome = run_vector(replace(v, expected=wrong), {}, DEFAULT_RULES, f.name)
    assert outcome.status == DIFFER
    assert "settled" in outcome.detail
    bounds = {"consumer3": {"size": 1, "disjoint": {"topic": [0]}}}
    outcome = run_vector(replace(v, expected=dict(v.expected, bounds=bounds)), {}, DEFAULT_RULES)
    assert outcome.status == DIFFER
    assert "consumer3 has 0 partitions, not 1" in outcome.detail


def test_client_assignor_later_rounds_are_run_and_checked() -> None:
    """``input.rounds`` run after the first round, each member owning its earlier answer
    (``owned_from``), and ``expected.rounds`` is checked against each: a bound on an
    earlier round's answer that round 2 breaks is a difference of round 2."""
    f, v = _client_vector(
        "StickyAssignorTest", "testAssignmentWithMultipleGenerations2[NO_BROKER_RACK, false]"
    )
    assert run_vector(v, {}, DEFAULT_RULES, f.name).status == PASS
    rounds = [dict(v.expected["rounds"][0]), v.expected["rounds"][1]]
    rounds[0]["bounds"] = {"consumer2": {"disjoint": {"round": 1, "member": "consumer2"}}}
    outcome = run_vector(replace(v, expected=dict(v.expected, rounds=rounds)), {}, DEFAULT_RULES)
    assert outcome.status == DIFFER
    assert outcome.detail.startswith("round 2: bounds: consumer2 is given some of")
