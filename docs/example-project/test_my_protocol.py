"""My protocol changes pass (or fail) the configs I care about; my traces validate.

Each check is bounded by the config (tiny.toml: two clients, one topic of two
partitions, one perturbation: about 3,000 states, a second or two a check)."""

from pathlib import Path

import pytest

from groupcheck import api

HERE = Path(__file__).parent
CONFIG = HERE / "tiny.toml"
RULES = HERE / "my_rules.py"


@pytest.mark.parametrize("engine", ["bfs", "walk"])
def test_late_ack_passes(groupcheck, engine):
    # Exhaustive (bfs) or 200 seeded walks; against the reference rules on the same
    # config, engine, seed and bounds.
    verdict = groupcheck.assert_passes(
        file=CONFIG, rules=f"{RULES}:LATE_ACK", engine=engine, walks=200
    )
    assert verdict.comparison == "neither"


def test_eager_handout_is_caught(groupcheck):
    verdict = groupcheck.check(file=CONFIG, rules=f"{RULES}:EAGER_HANDOUT")
    assert verdict.result == "violation"
    assert verdict.comparison == "introduces"  # the reference rules do not violate it
    assert verdict.violation.property == "OwnedPartitionsAreHeld"
    # The path code replays it: groupcheck replay --config tiny.toml --rules ... --path CODE
    assert verdict.violation.path


def test_my_traces_validate(groupcheck):
    for trace in sorted((HERE / "traces").glob("*.ndjson")):
        groupcheck.assert_valid(trace, settle=20)


def test_a_broken_trace_is_malformed_not_ok(tmp_path):
    broken = tmp_path / "broken.ndjson"
    broken.write_text((HERE / "traces" / "good.ndjson").read_text().splitlines()[0] + "\n{oops\n")
    verdict = api.validate(broken)
    assert verdict.result == "malformed"
    assert ":2:" in verdict.error  # FILE:LINE:COLUMN: why
