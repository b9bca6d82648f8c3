"""groupcheck.api and the pytest plugin (docs/json.md, "From Python and pytest"), and
the example project in docs/example-project/ that uses them, run as its user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck import api
from groupcheck.pytest_plugin import GroupcheckFixture
from model.status import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "example-project"
CONFIG = EXAMPLE / "tiny.toml"
RULES = EXAMPLE / "my_rules.py"


def test_check_gives_a_typed_verdict() -> None:
    verdict = api.check("TINY", max_depth=3)
    assert verdict.result == "inconclusive"  # a depth bound misses witnesses: not ok
    assert not verdict.ok
    assert verdict.exit_code == 3
    assert verdict.checked.startswith("every state within 3 steps")
    assert verdict.reasons
    assert verdict.comparison is None  # the reference rules: no baseline
    assert "Convergence" in verdict.properties


def test_check_a_change_against_the_reference_rules() -> None:
    verdict = api.check(file=CONFIG, rules=f"{RULES}:EAGER_HANDOUT")
    assert verdict.result == "violation"
    assert verdict.exit_code == 1
    assert verdict.comparison == "introduces"
    assert verdict.violation is not None
    assert verdict.violation.property in {v.property for v in verdict.violations}
    assert verdict.violation.path in verdict.explain()
    with pytest.raises(pytest.fail.Exception, match="OwnedPartitionsAreHeld"):
        GroupcheckFixture().assert_passes(file=CONFIG, rules=f"{RULES}:EAGER_HANDOUT")


def test_validate_gives_a_typed_verdict(tmp_path: Path) -> None:
    good = EXAMPLE / "traces" / "good.ndjson"
    verdict = api.validate(good, settle=20)
    assert verdict.ok
    assert verdict.events == 60
    short = api.validate(good)  # fewer than 100 events after the last perturbation
    assert short.result == "inconclusive"
    with pytest.raises(pytest.fail.Exception, match="inconclusive"):
        GroupcheckFixture().assert_valid(good)
    missing = api.validate(tmp_path / "none.ndjson")
    assert missing.result == "malformed"
    assert missing.exit_code == 2


def test_bad_input_raises_config_error() -> None:
    with pytest.raises(ConfigError):
        api.check("NO_SUCH_PRESET")
    with pytest.raises(ConfigError):
        api.config()


def test_the_example_project_passes_as_its_user_runs_it() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def _schema_valid(command: str, doc: dict[str, object]) -> None:
    """``doc`` (an api verdict's ``document``) is what ``COMMAND --json`` prints, by its
    JSON Schema (docs/json/)."""
    import json

    import jsonschema

    from groupcheck.jsonout import document

    schema = json.loads((ROOT / "docs" / "json" / f"{command}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document(command, doc))


def test_mutants_gives_a_typed_verdict() -> None:
    """One small mutant (MUT2, its counterexample within about 600 states)."""
    verdict = api.mutants(["revoke-without-waiting"])
    assert verdict.result == "ok"
    assert verdict.ok
    assert verdict.exit_code == 0
    assert verdict.killed == 1
    assert verdict.checked == "1 mutants, 1 killed"
    (row,) = verdict.rows
    assert row == verdict.row("revoke-without-waiting")
    assert (row.result, row.killed, row.kill, row.scenario) == ("killed", True, "violation", "MUT2")
    assert row.property == "OwnedPartitionsAreHeld"
    assert row.as_expected
    assert row.code is not None
    assert row.length is not None
    assert row.checked.startswith("bfs: ")
    assert "revoke-without-waiting (MUT2): killed OwnedPartitionsAreHeld" in verdict.explain()
    _schema_valid("mutants", verdict.document)
    with pytest.raises(KeyError):
        verdict.row("ack-ignored")
    with pytest.raises(ConfigError, match="unknown mutant"):
        api.mutants(["no-such-mutant"])
