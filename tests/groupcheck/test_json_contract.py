"""The ``--json`` contract (docs/json.md): real outputs of ``explore``, ``validate``,
``prove`` and ``mutants`` validate against their JSON Schemas in docs/json/, bad input
prints the error document on stdout (and its line on stderr), ``checked`` is never empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from groupcheck import exitcodes, jsonout
from groupcheck.cli import main

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "json"


def schema(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return doc


def conforms(command: str, doc: dict[str, Any]) -> None:
    """``doc`` validates against ``command``'s schema (and, an error, the error schema)."""
    jsonschema.Draft202012Validator(schema(command)).validate(doc)
    if doc["schema"] == jsonout.ERROR_SCHEMA:
        jsonschema.Draft202012Validator(schema("error")).validate(doc)
        assert doc["command"] == command
    else:
        assert doc["schema"] == f"groupcheck-{command}"
        assert doc["checked"].strip()
    assert doc["version"] == jsonout.VERSION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_schemas_are_valid_and_share_one_error_document() -> None:
    error = schema("error")
    jsonschema.Draft202012Validator.check_schema(error)
    shared = {k: v for k, v in error.items() if k not in ("$schema", "$id", "title")}
    for command in jsonout.COMMANDS:
        doc = schema(command)
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$id"] == jsonout.schema_name(command)
        assert doc["$defs"]["error"] == shared, f"{command}: its copy of error.schema.json"
        assert {"$ref": "#/$defs/error"} in doc["oneOf"]


def test_a_document_that_breaks_the_contract_is_refused() -> None:
    """The schemas can fail: an empty ``checked``, a wrong version, a missing field."""
    good = {
        "schema": "groupcheck-mutants",
        "version": 1,
        "result": "ok",
        "checked": "0 mutants, 0 killed",
        "killed": 0,
        "mutants": [],
    }
    conforms("mutants", good)
    for broken in (
        {**good, "checked": ""},
        {**good, "version": 2},
        {k: v for k, v in good.items() if k != "killed"},
        {**good, "result": "maybe"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            conforms("mutants", broken)


def explore(tmp_path: Path, *extra: str) -> list[str]:
    return ["explore", "--json", "--quiet", "--workers", "1", "--out", str(tmp_path), *extra]


def test_explore_ok_inconclusive_and_walk(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, doc, _ = run(capsys, *explore(tmp_path, "--preset", "TINY", "--depth", "4"))
    assert code == exitcodes.INCONCLUSIVE
    assert doc["result"] == "inconclusive"
    conforms("explore", doc)
    code, doc, _ = run(
        capsys, *explore(tmp_path, "--preset", "TINY", "--engine", "walk", "--walks", "5")
    )
    conforms("explore", doc)
    assert doc["checked"].startswith("5 walks")


@pytest.mark.parametrize("engine", ["bfs", "walk"])
def test_explore_violation_says_what_was_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """A search that stops at its first violation still says what it searched."""
    argv = explore(
        tmp_path, "--mutant", "ignore-partition-epochs", "--no-baseline", "--engine", engine
    )
    code, doc, _ = run(capsys, *argv, "--walks", "200")
    assert code == exitcodes.VIOLATION
    conforms("explore", doc)
    assert doc["checked"].endswith("up to the first violation")


def test_explore_change_with_baseline_and_rebalance_per_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = explore(tmp_path, "--preset", "TINY", "--mutant", "revoke-without-waiting")
    code, doc, _ = run(capsys, *base, "--depth", "10")
    assert code == exitcodes.VIOLATION
    conforms("explore", doc)
    assert doc["baseline"]["comparison"] == "introduces"
    assert doc["violations"]
    assert doc["every_property"]
    code, doc, _ = run(capsys, *base, "--depth", "8", "--rebalance-time")
    conforms("explore", doc)
    assert doc["rebalance"]["per_start"]["verdict"] == "not slower"


def test_explore_expect_and_bmc(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, doc, _ = run(
        capsys,
        *explore(
            tmp_path, "--mutant", "ignore-partition-epochs", "--no-baseline", "--every-property"
        ),
        "--expect",
        "NoDoubleClientOwnership",
        "--depth",
        "6",
    )
    conforms("explore", doc)
    assert doc["expected"] == ["NoDoubleClientOwnership"]
    code, doc, _ = run(
        capsys, *explore(tmp_path, "--preset", "TINY", "--engine", "bmc"), "--depth", "1"
    )
    assert code == exitcodes.OK
    conforms("explore", doc)
    assert doc["engine"] == "bmc"


RAISES = """\
def bad(group, old, new, config):
    raise ValueError("boom")


RULES = {"should_bump_group_epoch": bad}
"""


def test_a_failing_user_rule_is_the_error_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rules = tmp_path / "bad.py"
    rules.write_text(RAISES)
    argv = explore(tmp_path / "o", "--preset", "TINY", "--rules", f"{rules}:RULES")
    code, doc, err = run(capsys, *argv)
    assert code == exitcodes.USER_CODE_ERROR
    conforms("explore", doc)
    assert doc["result"] == "user code error"
    assert doc["exit"] == 8
    assert doc["rule"] == "should_bump_group_epoch"
    assert doc["error"] in err


@pytest.mark.parametrize(
    "argv",
    [
        ["explore", "--preset", "NOPE", "--json"],
        ["explore", "--engine", "dfs", "--json"],
        ["explore", "--preset", "TINY", "--budget", "0", "--js"],
        ["validate", "--mode", "nope", "--json", "x.ndjson"],
        ["validate", "--json"],
        ["prove", "--walks", "3", "--json"],
        ["prove", "--agreement", "--json"],
        ["mutants", "--only", "nope", "--json"],
        ["mutants", "--budget", "-1", "--json"],
    ],
)
def test_bad_input_prints_the_error_document(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, doc, err = run(capsys, *argv)
    assert code == exitcodes.BAD_INPUT
    conforms(argv[0], doc)
    assert doc["result"] == "malformed"
    assert doc["exit"] == 2
    assert len(err.strip().splitlines()) == 1  # the one line on stderr stays
    assert doc["error"].split(" (see")[0] in err


def test_bad_input_without_json_prints_nothing_on_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explore", "--preset", "NOPE"]) == exitcodes.BAD_INPUT
    assert capsys.readouterr().out == ""


def test_validate_ok_violation_and_malformed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "t.ndjson"
    assert (
        main(["simulate", "--timed", "--preset", "TINY", "--seed", "1", "--trace", str(trace)]) == 0
    )
    capsys.readouterr()
    code, doc, _ = run(capsys, "validate", "--json", "--settle", "20", str(trace))
    assert code == exitcodes.OK
    conforms("validate", doc)
    broken = tmp_path / "broken.ndjson"
    broken.write_text("{not json\n")
    code, doc, _ = run(capsys, "validate", "--json", str(trace), str(broken))
    assert code == exitcodes.BAD_INPUT
    assert doc["result"] == "malformed"
    conforms("validate", doc)
    code, doc, _ = run(
        capsys,
        *explore(tmp_path / "o", "--mutant", "ignore-partition-epochs", "--no-baseline"),
    )
    code, doc, _ = run(capsys, "validate", "--json", "--mode", "conformance", doc["trace"])
    conforms("validate", doc)


def test_prove_and_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = run(capsys, "prove", "--json", "--quiet", "--only", "NoDoubleMemberAssignment")
    assert code == exitcodes.INCONCLUSIVE
    conforms("prove", doc)
    assert doc["result"] == "inconclusive"  # the other conjuncts were assumed, not checked
    _code, doc, _ = run(
        capsys,
        "prove",
        "--agreement",
        "--preset",
        "TINY",
        "--walks",
        "2",
        "--length",
        "6",
        "--bfs",
        "0",
        "--json",
        "--quiet",
    )
    conforms("prove", doc)
    assert doc["configs"][0]["config"] == "TINY"


def test_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = run(capsys, "mutants", "--only", "assignor-assigns-twice", "--json", "--quiet")
    assert code == exitcodes.OK
    conforms("mutants", doc)
    (row,) = doc["mutants"]
    assert row["killed"]
    assert row["checked"].startswith("bfs: ")


def test_requested_reads_json_from_an_unparsed_command_line() -> None:
    assert jsonout.requested(["explore", "--preset", "X", "--json"]) == "explore"
    assert jsonout.requested(["validate", "--js", "f"]) == "validate"
    assert jsonout.requested(["explore", "--", "--json"]) is None
    assert jsonout.requested(["replay", "--json"]) is None
    assert jsonout.requested(["explore", "--preset", "X"]) is None


def test_an_internal_error_and_the_budget_are_error_documents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from groupcheck import cli
    from groupcheck.budget import BudgetExpired

    def broken(args: object) -> int:
        raise RuntimeError("model crashed\nwith a second line")

    monkeypatch.setitem(cli.COMMANDS, "explore", broken)
    monkeypatch.setenv("GROUPCHECK_CRASH_DIR", str(tmp_path))
    code, doc, err = run(capsys, "explore", "--json")
    assert code == exitcodes.INTERNAL_ERROR
    conforms("explore", doc)
    assert doc["result"] == "internal-error"
    assert "model crashed" in doc["error"]
    assert len(err.strip().splitlines()) == 1
    args = argparse.Namespace(command="mutants", json=True)
    assert cli._budget_expired(BudgetExpired(5.0, "the bfs search"), args) == 3
    out = capsys.readouterr().out
    doc = json.loads(out)
    conforms("mutants", doc)
    assert doc["result"] == "inconclusive"
    assert "the bfs search" in doc["reasons"][0]
