"""The TLA+ specification against the Python model: configuration files in sync, TLC's
results pinned in tla/manifest.json, reachable state sets equal, mutants found by both,
and Python counterexamples replayed in TLC."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path as FsPath
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.explore.run import explore
from groupcheck.mutants import get_mutant
from groupcheck.tla.configs import (
    CI_CONFIGS,
    CONFIGS,
    SPEC_MUTANTS,
    SPEC_PERTURBATIONS,
    STATE_INVARIANTS,
    STEP_PROPERTIES,
    TLA_DIR,
    cfg_text,
    check_in_scope,
    tla_name,
)
from groupcheck.tla.crosscheck import (
    TLA_MUTANTS,
    convergence_agreement,
    crosscheck,
    mutant_agreement,
    replay_in_tlc,
    to_tla,
)
from groupcheck.tla.tlc import run_tlc, with_mutant
from groupcheck.tla.values import EMPTY, Fn, Seq, ValueError_, fn, parse_value
from model.path import Path
from model.presets import STATIC, TOPICS
from model.status import ConfigError

MANIFEST = json.loads((TLA_DIR / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_cfg_file_is_generated_from_the_python_config(name: str) -> None:
    assert (TLA_DIR / f"{name}.cfg").read_text(encoding="utf-8") == cfg_text(CONFIGS[name])


@pytest.mark.parametrize("config", [STATIC, TOPICS])
def test_configs_outside_the_spec_are_refused(config: object) -> None:
    with pytest.raises(ConfigError, match="outside the TLA\\+ specification's scope"):
        check_in_scope(config)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"assignment_interval_ms": 1000},
        {"group_assignment_interval_ms": 500},
        {"assignor_offload": True, "epoch_layout": "kafka-4.3"},
    ],
)
def test_kip1263_configs_are_refused_with_the_reason(change: dict[str, object]) -> None:
    config = replace(CONFIGS["TINY1"], **change)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="no KIP-1263 assignment batching or assignor offload"):
        check_in_scope(config)


@pytest.mark.parametrize(
    "change",
    [
        {"perturbations": frozenset({"Subscribe", "DeleteGroup"})},
        {"delete_expired_groups": True},
    ],
)
def test_group_deletion_configs_are_refused_with_the_reason(change: dict[str, object]) -> None:
    config = replace(CONFIGS["TINY1"], **change)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="no group deletion"):
        check_in_scope(config)


def test_every_config_is_in_the_manifest() -> None:
    assert set(MANIFEST["configs"]) == set(CONFIGS)


def test_tlc_values_parse_and_print_back() -> None:
    text = "(A :> [epoch |-> 2, owned |-> {0, 1}, sent |-> <<[parts |-> <<>>]>>] @@ B :> <<>>)"
    value = parse_value(text)
    assert isinstance(value, Fn)
    assert dict(value.items)["B"] == EMPTY
    assert parse_value(to_tla(value)) == value
    assert parse_value('<<"x", -3, TRUE>>') == Seq(("x", -3, True))
    assert fn({}) == parse_value("<< >>")
    with pytest.raises(ValueError_):
        parse_value("[epoch |-> ]")


def _crosscheck_matches_the_manifest(name: str, doc: dict[str, Any]) -> None:
    """``crosscheck``'s TLC run is ``run_tlc(cfg_text(...))`` with ``-dump``: its verdict and
    TLC's own count are the manifest's (the check of each CI configuration: the TLC run is
    not repeated without the dump), and both sides reach the same states."""
    pinned = MANIFEST["configs"][name]
    assert pinned["expected"] == "ok"  # a violation would cut the crosscheck short
    assert doc["result"] == "ok", doc["reasons"]  # TLC complete, no violation, equal sets
    assert doc["tlc_complete"] is True
    assert doc["tlc_distinct_states"] == pinned["distinct_states"]
    assert doc["equal"], (doc["only_in_python"], doc["only_in_tlc"])
    assert doc["python_states"] == doc["tlc_states"] == pinned["distinct_states"]


@pytest.mark.parametrize("name", [n for n in CI_CONFIGS if n != "TINY1"])
def test_reachable_states_equal(name: str) -> None:
    """TINY1's through the command line: ``test_crosscheck_takes_a_config_file_and_rules``."""
    _crosscheck_matches_the_manifest(name, crosscheck(name))


@pytest.mark.parametrize("mutant", TLA_MUTANTS)
def test_mutant_found_by_both_at_the_same_depth_and_replayed_in_tlc(mutant: str) -> None:
    pinned = MANIFEST["mutants"][mutant]
    doc = mutant_agreement(mutant)
    assert doc["config"] == pinned["config"]
    assert doc["python_violated"] == doc["tlc_violated"] == pinned["violated"], doc
    assert doc["same_property"], doc
    assert doc["python_length"] == doc["tlc_length"] == pinned["trace_length"], doc
    assert doc["replayed_in_tlc"], doc


def test_every_mutant_with_a_tla_counterpart_is_in_the_manifest() -> None:
    assert set(MANIFEST["mutants"]) == set(TLA_MUTANTS)
    assert set(MANIFEST["liveness"]["mutants"]) | set(TLA_MUTANTS) <= set(SPEC_MUTANTS)


def test_a_mutant_counterexample_does_not_replay_in_the_correct_spec() -> None:
    m = get_mutant("revoke-without-waiting")
    outcome = explore(m.mutated_config(), engine="bfs", shortest=False)
    assert outcome.path is not None
    assert outcome.property is not None
    assert replay_in_tlc(outcome.path, outcome.property, m.name).result == "violation"
    assert replay_in_tlc(outcome.path, outcome.property, None).result == "ok"
    # A path cut short of the violation replays, but does not end in it.
    short = Path(outcome.path.config, outcome.path.actions[:-1])
    assert replay_in_tlc(short, outcome.property, m.name).result == "ok"


def test_cli_check_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tla", "check", "--config", "TINY1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "ok"
    assert doc["distinct_states"] == MANIFEST["configs"]["TINY1"]["distinct_states"]
    assert main(["tla", "check", "--config", "NOPE"]) == 2
    assert "unknown TLA+ configuration 'NOPE'" in capsys.readouterr().err
    assert main(["tla", "check", "--config", "TINY1", "--mutant", "no-such-rule"]) == 2
    assert "no-such-rule" in capsys.readouterr().err


def test_symmetry_only_for_interchangeable_clients() -> None:
    assert "SYMMETRY SymmetryAB" in cfg_text(CONFIGS["PAIR_LOSS1"], symmetry=True)
    with pytest.raises(ConfigError, match="no interchangeable clients"):
        cfg_text(CONFIGS["TINY1"], symmetry=True)


@pytest.mark.parametrize("name", CI_CONFIGS)
def test_python_bfs_counts_the_same_distinct_states_as_tlc(name: str) -> None:
    # BFS merges states that differ only in how channels interleave: exactly the states
    # the spec does not distinguish, so the counts agree with TLC's.
    from groupcheck.explore.bfs import bfs

    result = bfs(CONFIGS[name], check_convergence=False)
    assert result.property is None
    assert result.exhausted is True
    assert result.distinct_states == MANIFEST["configs"][name]["distinct_states"]


def test_channel_normal_form_keeps_each_channel_in_order() -> None:
    from groupcheck.explore.channels import channel_normal_form
    from model import system

    config = CONFIGS["PAIR_LOSS1"]
    state = system.initial(config)
    for client in ("B", "A"):
        state = system.step(
            state,
            next(a for a in system.enabled(state, config) if getattr(a, "client", None) == client),
            config,
        )
    normal = channel_normal_form(config)(state)
    assert [m.client for m in state.network] == ["B", "A"]
    assert [m.client for m in normal.network] == ["A", "B"]
    assert sorted(map(repr, normal.network)) == sorted(map(repr, state.network))
    assert channel_normal_form(config)(normal) is normal


# --------------------------------------------------------------------------- larger configs

LARGER_CI_CONFIGS = ("TINY", "MUT2", "MUT2_REJOIN")
"""Manifest configurations beyond CI_CONFIGS whose counts CI checks (TLC and the Python
BFS take under ten seconds each); PAIR_LOSS1's TLC count is checked by the symmetry test,
the rest by hand (tla/README.md)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGER_CI_CONFIGS)
def test_larger_configs_match_the_manifest_in_tlc(name: str) -> None:
    result = run_tlc(cfg_text(CONFIGS[name]))
    pinned = MANIFEST["configs"][name]
    assert result.result == pinned["expected"]
    assert result.distinct_states == pinned["distinct_states"]


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGER_CI_CONFIGS)
def test_larger_configs_match_the_manifest_in_python(name: str) -> None:
    from groupcheck.explore.bfs import bfs

    result = bfs(CONFIGS[name], check_convergence=False)
    pinned = MANIFEST["configs"][name]
    assert result.result == pinned["expected"]
    assert result.distinct_states == pinned["distinct_states"]


# --------------------------------------------------------------------------- convergence

LIVENESS_CASES = [
    *((name, None) for name, row in MANIFEST["liveness"]["configs"].items() if row["ci"]),
    *((row["config"], mutant) for mutant, row in MANIFEST["liveness"]["mutants"].items()),
]


@pytest.mark.parametrize(("name", "mutant"), LIVENESS_CASES)
def test_convergence_same_verdict_in_tlc_and_python(name: str, mutant: str | None) -> None:
    pinned = (
        MANIFEST["liveness"]["configs"][name]
        if mutant is None
        else MANIFEST["liveness"]["mutants"][mutant]
    )
    doc = convergence_agreement(name, mutant)
    assert doc["tlc_result"] == pinned["expected"], doc
    assert doc["tlc_violated"] == pinned["violated"], doc
    if mutant is None:
        assert doc["tlc_distinct_states"] == pinned["distinct_states"]
    assert doc["agree"], doc


# --------------------------------------------------------------------------- symmetry


def test_tlc_symmetry_reduces_the_states_with_the_same_result() -> None:
    # PAIR_LOSS1's two clients are interchangeable (same subscription, both joining).
    config = CONFIGS["PAIR_LOSS1"]
    pinned = MANIFEST["configs"]["PAIR_LOSS1"]
    full = run_tlc(cfg_text(config))
    reduced = run_tlc(cfg_text(config, symmetry=True))
    assert full.distinct_states == pinned["distinct_states"]
    assert reduced.result == full.result == pinned["expected"]
    assert reduced.distinct_states == pinned["symmetry_distinct_states"]
    assert reduced.distinct_states is not None
    assert full.distinct_states // 2 <= reduced.distinct_states < full.distinct_states


def test_tlc_symmetry_keeps_a_mutant_violation() -> None:
    config = CONFIGS["PAIR_LOSS1"]
    result = run_tlc(with_mutant(cfg_text(config, symmetry=True), "assignor-assigns-twice"))
    assert result.violated == "ValidTargetAssignment.Unique"


# --------------------------------------------------------------------------- vocabulary


def _definitions(module: str) -> dict[str, str]:
    """Top-level definitions of ``tla/<module>.tla``: name -> text up to the next one."""
    text = (TLA_DIR / f"{module}.tla").read_text(encoding="utf-8")
    heads = list(re.finditer(r"^(\w+)\s*(?:\([^)]*\))?\s*==", text, flags=re.M))
    ends = [m.start() for m in heads[1:]] + [len(text)]
    return {m.group(1): text[m.end() : end] for m, end in zip(heads, ends, strict=True)}


def _called(body: str) -> set[str]:
    return set(re.findall(r"\b([A-Z]\w*)\(", body))


SPEC_LEAVES_OUT = {
    "ComputeTargetAssignment": "the target is computed inside the heartbeat",
    "TemporaryLeave": "static members only",
    "Restart": "one incarnation per client",
    "ChangeSubscription": "every client subscribes to foo",
    "ChangeServerAssignor": "the uniform assignor only",
    "AddPartitions": "a fixed partition count",
    "RecreateTopic": "one topic id",
    "AbandonRequest": "no duplicated or reordered requests",
    "StallRevocation": "no live-client timers (live_timers off)",
    "CompleteCallback": "callbacks finish in the step that starts them (callback_steps off)",
    "Poll": "no poll timer",
    "PollTimerExpires": "no poll timer",
    "CoordinatorFailover": "one coordinator",
    "CoordinatorLoaded": "one coordinator",
    "CreateTopic": "one topic, always there",
    "DeleteTopic": "one topic, always there",
    "ResolveRegularExpressions": "no regular-expression subscriptions",
    "ChangePartitionRacks": "no racks",
    "ExpireOffsets": "no offset expiry (KIP-211)",
    "AssignmentIntervalElapses": "no KIP-1263 assignment batching (tla/README.md)",
    "CompleteAssignorRun": "no KIP-1263 assignor offload (tla/README.md)",
    "SendJoinGroup": "the classic protocol is not in the spec (tla/README.md)",
    "SendSyncGroup": "the classic protocol is not in the spec (tla/README.md)",
    "Bounce": "the classic protocol is not in the spec (tla/README.md)",
    "StallAssignment": "the classic protocol is not in the spec (tla/README.md)",
    "DeleteGroup": "no group deletion (tla/README.md)",
    "ChangeInstanceId": "the classic protocol is not in the spec (tla/README.md)",
}


def test_spec_actions_are_the_model_actions() -> None:
    from model.actions import ACTION_TYPES

    spec = _definitions("KIP848")
    progress, perturbation = _called(spec["Progress"]), _called(spec["Perturbation"])
    python = {t.__name__: getattr(t, "PERTURBATION", False) for t in ACTION_TYPES}
    assert progress == {n for n, p in python.items() if not p} - set(SPEC_LEAVES_OUT)
    assert perturbation == {n for n, p in python.items() if p} - set(SPEC_LEAVES_OUT)
    assert perturbation == SPEC_PERTURBATIONS
    assert set(SPEC_LEAVES_OUT) <= set(python)
    assert progress | perturbation <= set(spec)
    # Every progress action has weak fairness in FairSpec, and no perturbation has.
    props = _definitions("KIP848Properties")
    fair = _called(props["ProgressFairness"]) | _called(props["DeliveryFairness"])
    assert fair & set(python) == progress


def test_spec_properties_are_the_python_properties() -> None:
    from invariants.liveness import CONVERGENCE
    from invariants.properties import STATE_PROPERTIES
    from invariants.properties import STEP_PROPERTIES as PY_STEP

    props = _definitions("KIP848Properties")
    from groupcheck.tla.configs import PROPERTIES_LEFT_OUT

    def in_spec(p: object) -> bool:
        return "consumer" in p.families and p.name not in PROPERTIES_LEFT_OUT  # type: ignore[attr-defined]

    consumer_state = [p for p in STATE_PROPERTIES if in_spec(p)]
    consumer_step = [p for p in PY_STEP if in_spec(p)]
    assert set(PROPERTIES_LEFT_OUT) <= {p.name for p in (*STATE_PROPERTIES, *PY_STEP)}
    assert tuple(tla_name(p.name) for p in consumer_state) == STATE_INVARIANTS
    assert tuple(tla_name(p.name) for p in consumer_step) == STEP_PROPERTIES
    for name in STATE_INVARIANTS:
        assert name in props
    for name in STEP_PROPERTIES:
        assert props[name].split("\n", 1)[0].strip() == f"[][{name}_Step]_vars"
    assert CONVERGENCE.name in props


# --------------------------------------------------------------------------- results


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code = main(["tla", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def test_check_cut_short_by_the_state_bound_is_inconclusive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    states = MANIFEST["configs"]["TINY1"]["distinct_states"]
    code, doc, _ = _cli_json(capsys, "check", "--config", "TINY1", "--max-states", "100")
    assert (code, doc["result"]) == (3, "inconclusive")
    assert 100 <= doc["distinct_states"] < states
    (reason,) = doc["reasons"]
    assert reason.startswith("TLC stopped expanding states at the bound of 100 distinct states")
    # A bound the state space stays below does not change the result.
    bound = str(states + 1)
    code, doc, _ = _cli_json(capsys, "check", "--config", "TINY1", "--max-states", bound)
    assert (code, doc["result"], doc["reasons"]) == (0, "ok", [])
    assert doc["distinct_states"] == states
    # Exactly at the bound, TLC cannot tell it saw everything: inconclusive.
    code, doc, _ = _cli_json(capsys, "check", "--config", "TINY1", "--max-states", str(states))
    assert (code, doc["result"]) == (3, "inconclusive")


def test_a_violation_within_the_state_bound_is_a_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinned = MANIFEST["mutants"]["revoke-without-waiting"]
    argv = ["check", "--config", pinned["config"], "--mutant", "revoke-without-waiting"]
    code, doc, _ = _cli_json(capsys, *argv, "--max-states", "1000000")
    assert (code, doc["result"], doc["violated"]) == (1, "violation", pinned["violated"])
    assert doc["reasons"] == []


def test_tlc_that_cannot_run_is_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groupcheck.tla import tlc

    def no_java() -> str:
        raise tlc.TlcError("java not found on PATH; TLC needs a Java runtime (11 or newer)")

    monkeypatch.setattr(tlc, "java", no_java)
    code, doc, err = _cli_json(capsys, "check", "--config", "TINY1")
    assert (code, doc) == (4, {})
    assert err == (
        "groupcheck: internal error: java not found on PATH; TLC needs a Java runtime "
        "(11 or newer)\n"
    )
    monkeypatch.setattr(tlc, "java", lambda: "false")  # "java" that exits 1 and says nothing
    for argv in (["check", "--config", "TINY1"], ["crosscheck", "--config", "TINY1"]):
        code, doc, err = _cli_json(capsys, *argv)
        assert (code, doc) == (4, {})
        assert err.splitlines()[-1] == "groupcheck: internal error: TLC failed (exit 1): no output"
    # Bad input stays exit status 2.
    assert _cli_json(capsys, "check", "--config", "NOPE")[0] == 2
    code, _, err = _cli_json(
        capsys, "check", "--config", "TINY1", "--liveness", "--max-states", "9"
    )
    assert code == 2
    assert err.startswith("groupcheck: error: --max-states cannot bound a liveness check")
    assert _cli_json(capsys, "check", "--config", "TINY1", "--workers", "0")[0] == 2
    assert _cli_json(capsys, "mutants", "no-such-mutant")[0] == 2


def test_a_spec_that_does_not_parse_is_named_in_the_error() -> None:
    from groupcheck.tla import tlc

    broken = "---- MODULE MC ----\nEXTENDS Naturals\nInit == x' =\n====\n"
    with pytest.raises(tlc.TlcError) as caught:
        run_tlc("INIT Init\n", workers=1, extra_modules={"MC.tla": broken})
    message = str(caught.value)
    assert "AbortException" not in message, message
    assert re.search(r"Parse Error|Lexical error|Semantic error|Could not parse", message)


def test_each_tlc_run_extracts_the_standard_modules_into_its_own_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TLC copies Naturals.tla and friends into java.io.tmpdir, truncating them as it goes:
    two runs sharing /tmp failed to parse ("AbortException") when their copies crossed."""
    import subprocess
    import tempfile

    from groupcheck.tla import tlc

    seen: list[tuple[FsPath, bool]] = []

    def record(cmd: list[str], **kwargs: object) -> None:
        flag = [arg for arg in cmd if arg.startswith("-Djava.io.tmpdir=")]
        assert len(flag) == 1, cmd
        where = FsPath(flag[0].split("=", 1)[1])
        seen.append((where, where.is_dir()))
        raise OSError("recorded")

    monkeypatch.setattr(subprocess, "Popen", record)
    for _ in range(2):
        with pytest.raises(tlc.TlcError):
            run_tlc("INIT Init\n", workers=1)
    (first, first_made), (second, second_made) = seen
    assert first_made
    assert second_made
    assert first != second
    assert FsPath(tempfile.gettempdir()) not in (first, second)
    assert first.parent.name.startswith("groupcheck-tlc-")


def test_crosscheck_results(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, doc, _ = _cli_json(capsys, "crosscheck", "--config", "TINY1", "--max-states", "300")
    assert (code, doc["result"]) == (3, "inconclusive")
    assert (doc["python_complete"], doc["tlc_complete"]) == (False, False)
    assert doc["only_in_python_count"] == 0  # every state Python saw is one TLC reaches
    assert doc["reasons"][0] == (
        "the Python search stopped at the bound of 300 model states: the state space may be larger"
    )
    assert doc["reasons"][1].startswith("TLC stopped expanding states at the bound of 300")

    # A model that differs from the spec: both searches complete, the sets differ.
    from groupcheck.tla import configs
    from model.consumer import coordinator
    from model.rules import DEFAULT_RULES

    def no_bump_for_new_members(group, old, new, config):  # type: ignore[no-untyped-def]
        return old is not None and coordinator.should_bump_group_epoch(group, old, new, config)

    rules = replace(DEFAULT_RULES, should_bump_group_epoch=no_bump_for_new_members)
    monkeypatch.setitem(configs.CONFIGS, "TINY1", replace(CONFIGS["TINY1"], rules=rules))
    # The cross-check reports the difference with examples, not only the sizes (this run
    # was also test_a_model_that_differs_from_the_spec_is_caught's, through crosscheck()).
    code, doc, err = _cli_json(capsys, "crosscheck", "--config", "TINY1", "--examples", "1")
    assert (code, doc.get("result"), doc.get("reasons")) == (1, "violation", []), err
    assert not doc["equal"]
    assert doc["only_in_python_count"] > 0
    assert len(doc["only_in_python"]) == 1
    assert "groupEpoch" in doc["only_in_python"][0]


def test_mutants_disagreement_is_a_violation_and_a_cut_search_inconclusive(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groupcheck.explore import run as run_module

    pinned = MANIFEST["mutants"]["revoke-without-waiting"]

    def python_found(prop: str | None, exhausted: bool):  # type: ignore[no-untyped-def]
        def fake(config, **kwargs):  # type: ignore[no-untyped-def]
            result = "violation" if prop else "ok"
            return run_module.Outcome("bfs", result, property=prop, exhausted=exhausted)

        return fake

    # The Python engine names another property than TLC: a disagreement.
    monkeypatch.setattr(run_module, "explore", python_found("NoServerError", True))
    code, doc, _ = _cli_json(capsys, "mutants", "revoke-without-waiting")
    (row,) = doc["mutants"]
    assert (code, doc["result"], doc["agree"], row["result"]) == (
        1,
        "violation",
        False,
        "violation",
    )
    assert (row["python_violated"], row["tlc_violated"]) == ("NoServerError", pinned["violated"])
    # The Python search ran out of budget before finding anything: not a disagreement.
    monkeypatch.setattr(run_module, "explore", python_found(None, False))
    code, doc, _ = _cli_json(capsys, "mutants", "revoke-without-waiting")
    assert (code, doc["result"], doc["agree"]) == (3, "inconclusive", False)
    assert doc["reasons"] == [
        "revoke-without-waiting: the Python BFS stopped at its budget (120 s) without a violation"
    ]


def test_crosscheck_takes_a_config_file_and_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: FsPath
) -> None:
    from model.settings import config_to_toml

    config = tmp_path / "tiny1.toml"
    config.write_text(config_to_toml(CONFIGS["TINY1"]))
    # TINY1 from a file is TINY1: its cross-check is the manifest's (the run
    # test_cli_crosscheck_json and test_reachable_states_equal[TINY1] made by name; a
    # named --config: test_crosscheck_results).
    assert main(["tla", "crosscheck", "--config", str(config), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("python_states", "tlc_states", "equal", "only_in_python", "only_in_tlc"):
        assert key in doc
    assert doc["equal"] is True
    assert doc["config"] == "TINY1"
    _crosscheck_matches_the_manifest("TINY1", doc)
    rules = FsPath(__file__).resolve().parents[2] / "data" / "late_ack_rules.py"
    argv = ["tla", "crosscheck", "--config", str(config), "--rules", f"{rules}:SLOW", "--json"]
    assert main(argv) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"] == "TINY1+rules-SLOW"
    assert doc["only_in_python_count"] > 0  # the late acknowledgement adds states
