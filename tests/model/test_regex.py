"""Regular-expression subscriptions (KIP-848 ``SubscribedTopicRegex``): the coordinator
resolves a member's expression against the topics, again when topics are created or
deleted, and a changed resolution bumps the group epoch
(``GroupMetadataManager.maybeUpdateRegularExpressions``, ``handleRegularExpressionsResult``;
docs/fidelity.md, row 22)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from groupcheck.explore.bfs import bfs
from invariants.liveness import converged
from model import system
from model.actions import CreateTopic, DeleteTopic, ResolveRegularExpressions, SendHeartbeat
from model.config import ClientSpec, Config, check_config
from model.consumer.coordinator import regex_matches, regexes_stale, subscribed_topics
from model.path import Path
from model.scenario import Script
from model.status import ConfigError
from model.trace.codec import path_lines, read_path

CONFIG = Config(
    kafka_version="4.2",
    name="regex",
    topics=(("foo", 1), ("bar", 1)),
    absent_topics=(("foo2", 1),),
    clients=(ClientSpec("A", (), regex="foo.*"),),
    max_perturbations=2,
    perturbations=frozenset({"CreateTopic", "DeleteTopic"}),
    max_restarts=0,
)


def test_a_regex_matches_whole_topic_names() -> None:
    assert regex_matches("foo.*", ["foo", "foo2", "bar", "xfoo"]) == {"foo", "foo2"}
    assert regex_matches("foo", ["foo", "foo2"]) == {"foo"}


def joined() -> Script:
    """A joined with its regex; the coordinator resolved it; A reconciled."""
    script = Script(CONFIG)
    script.heartbeat("A")
    member = script.state.group.members[script.state.client("A").member_id]
    assert member.subscribed_topic_regex == "foo.*"
    assert subscribed_topics(member, script.state.group) == frozenset()  # not resolved yet
    assert ResolveRegularExpressions() in system.enabled(script.state, CONFIG)
    epoch = script.state.group.group_epoch
    script.do(ResolveRegularExpressions())
    assert script.state.group.resolved_regexes == {"foo.*": frozenset({"foo"})}
    assert script.state.group.group_epoch == epoch + 1  # a new resolution rebalances
    script.heartbeat("A")
    script.reconcile("A")
    script.heartbeat("A")
    return script


def test_join_resolve_and_consume() -> None:
    script = joined()
    a = script.state.client("A")
    assert a.owned == {("foo", 0)}
    assert converged(script.state)


def test_heartbeats_carry_the_regex() -> None:
    script = Script(CONFIG)
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert req.subscribed_topic_regex == "foo.*"  # type: ignore[union-attr]
    script.deliver("A", to_coordinator=True)
    lines = path_lines(Path(CONFIG, tuple(script.actions)))
    line = next(line for line in lines if "SubscribedTopicRegex" in line)
    decoded = read_path(CONFIG, path_lines(Path(CONFIG, tuple(script.actions))))
    assert decoded.actions == tuple(script.actions)
    assert json.loads(line)["payload"]["body"]["SubscribedTopicRegex"] == "foo.*"


def test_a_created_topic_that_matches_is_resolved_and_assigned() -> None:
    script = joined()
    script.do(CreateTopic("foo2", partitions=1))
    assert regexes_stale(script.state.group, script.state.topics)
    assert not converged(script.state)  # a refresh is due
    script.do(ResolveRegularExpressions())
    assert script.state.group.resolved_regexes["foo.*"] == {"foo", "foo2"}
    script.heartbeat("A")
    script.reconcile("A")
    script.heartbeat("A")
    owned = script.state.client("A").owned
    assert {tp[0] for tp in owned} == {"foo", "foo2~1"}  # foo2's topic id
    assert converged(script.state)


def test_a_deleted_topic_leaves_the_resolution() -> None:
    script = joined()
    script.do(DeleteTopic("foo"))
    script.do(ResolveRegularExpressions())
    assert script.state.group.resolved_regexes["foo.*"] == frozenset()


def test_config_errors_name_the_client() -> None:
    with pytest.raises(ConfigError, match="client A regex"):
        check_config(replace(CONFIG, clients=(ClientSpec("A", (), regex="foo("),)))
    with pytest.raises(ConfigError, match="names and a regex"):
        check_config(replace(CONFIG, clients=(ClientSpec("A", ("foo",), regex="foo"),)))


def test_small_regex_config_is_exhausted_with_its_witness() -> None:
    config = replace(
        CONFIG,
        max_perturbations=1,
        perturbations=frozenset({"CreateTopic"}),
        required_witnesses=("RegexSubscriptionResolved", "GroupConverges"),
    )
    result = bfs(config)
    assert result.exhausted
    assert result.result == "ok", (result.property, result.message, result.reasons)
