"""Safety mode's verdict does not depend on the order of concurrent responses.

Two responses to different clients, delivered one after the other with nothing between
them, were both in flight before either was read: the protocol does not fix which client
reads first, and the model could have delivered them the other way round. Swapping them
gives another trace of the same run, and safety mode must judge it the same way — for
each family (consumer, classic, mixed), on the model's own walks and on a mutant's.
"""

from __future__ import annotations

import json
import random
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcheck.mutants import get_mutant
from groupcheck.validate import validate_safety
from model import system
from model.actions import Action, DeliverMessage
from model.config import Config
from model.path import Path
from model.presets import PRESETS
from model.trace import path_lines

FAMILIES: dict[str, tuple[str, ...]] = {
    "consumer": (
        "TINY",
        "SMALL",
        "LOSSY",
        "STATIC",
        "mutant:revoke-without-waiting",
        "mutant:assignor-assigns-twice",
    ),
    "classic": (
        "CLASSIC_EAGER",
        "CLASSIC_COOPERATIVE",
        "CLASSIC_STATIC",
        "UPGRADE_ONE_BOUNCE",
        "UPGRADE_TWO_BOUNCES",
        "mutant:assign-without-withholding",
        "mutant:lost-partitions-kept",
    ),
    "mixed": (
        "MIGRATION_UPGRADE",
        "MIGRATION_ROUNDTRIP",
        "MIXED_STATIC",
        "mutant:classic-holder-unreleased",
    ),
}
"""Presets and mutants (``mutant:NAME``) of each family; the mutants make violations."""
SEEDS = 40
STEPS = 120


def _config(name: str) -> Config:
    if name.startswith("mutant:"):
        return get_mutant(name.removeprefix("mutant:")).mutated_config()
    return PRESETS[name]


def _weight(action: Action) -> float:
    if action.PERTURBATION:
        return 0.1
    if isinstance(action, DeliverMessage) and not action.message.to_coordinator:
        return 0.3
    return 1.0


@cache
def _lines(name: str, seed: int) -> tuple[str, ...]:
    """A seeded walk over every enabled action of ``name``, as trace lines."""
    config = _config(name)
    rng, state, actions = random.Random(seed), system.initial(config), []
    for _ in range(STEPS):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        # Perturbations are rarer and responses wait a little, so that several are in
        # flight at once: the walks this test needs.
        weights = [_weight(a) for a in enabled]
        action = rng.choices(enabled, weights)[0]
        actions.append(action)
        state = system.step(state, action, config)
    return tuple(path_lines(Path(config, tuple(actions))))


def _response_client(line: str) -> str | None:
    """The client a delivered response goes to, else None."""
    event = json.loads(line)
    payload = event.get("payload", {})
    if event.get("kind") == "DeliverMessage" and payload.get("direction") == "response":
        return str(payload["client"])
    return None


def _swappable(lines: list[str]) -> list[int]:
    """Indices i where lines i and i+1 are responses to two different clients."""
    clients = [_response_client(line) for line in lines]
    return [
        i
        for i in range(1, len(lines) - 1)
        if clients[i] is not None and clients[i + 1] is not None and clients[i] != clients[i + 1]
    ]


@cache
def _seeds(name: str) -> tuple[int, ...]:
    """The seeds whose walk of ``name`` holds two concurrent responses."""
    return tuple(seed for seed in range(SEEDS) if _swappable(list(_lines(name, seed))))


def _verdict(lines: list[str]) -> tuple[str, list[str]]:
    report = validate_safety("t", lines, settle=10)
    assert report.error is None, report.error
    return report.result, sorted({v.property for v in report.violations})


@settings(
    max_examples=90,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)))
def test_permuting_concurrent_responses_never_changes_the_verdict(
    data: st.DataObject, family: str
) -> None:
    name = data.draw(st.sampled_from(FAMILIES[family]), label="preset")
    seed = data.draw(st.sampled_from(_seeds(name)), label="seed")
    original = list(_lines(name, seed))
    lines = list(original)
    for _ in range(data.draw(st.integers(1, 12), label="swaps")):
        i = data.draw(st.sampled_from(_swappable(lines)))
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    assert _verdict(lines) == _verdict(original), (name, seed)


def test_the_walks_have_concurrent_responses_and_violations() -> None:
    """The property above is not vacuous: every preset's walks hold responses it can swap,
    and in the consumer and classic families some of those walks are violations (a
    mutant's double ownership, the upgrade's)."""
    for family, names in FAMILIES.items():
        violations = 0
        for name in names:
            assert _seeds(name), name
            violations += sum(
                _verdict(list(_lines(name, seed)))[0] == "violation" for seed in _seeds(name)
            )
        assert violations > 0, family


def _msg(client: str, api: str, body: dict[str, object], request: bool) -> str:
    payload = {
        "client": client,
        "incarnation": 0,
        "connection": 0,
        "direction": "request" if request else "response",
        "api": api,
        "body": body,
    }
    return json.dumps(
        {"seq": 0, "ts": None, "source": "network", "kind": "DeliverMessage", "payload": payload}
    )


def _join(client: str, member: str, owned: tuple[int, ...], generation: int) -> list[str]:
    parts = [{"TopicId": "foo", "Partitions": list(owned)}] if owned else []
    meta = {"Topics": ["foo"], "OwnedPartitions": parts, "GenerationId": generation - 1}
    request = {
        "MemberId": member if generation > 1 else "",
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "cooperative-sticky", "Metadata": meta}],
        "RebalanceTimeoutMs": 300000,
        "SessionTimeoutMs": 45000,
    }
    response = {
        "ErrorCode": 0,
        "GenerationId": generation,
        "ProtocolName": "cooperative-sticky",
        "Leader": member,
        "MemberId": member,
        "Members": [],
    }
    return [_msg(client, "JoinGroup", request, True), _msg(client, "JoinGroup", response, False)]


def _sync(client: str, *owned: int) -> str:
    parts = [{"TopicId": "foo", "Partitions": list(owned)}] if owned else []
    return _msg(client, "SyncGroup", {"ErrorCode": 0, "Assignment": parts}, False)


def test_a_partition_moved_within_one_rebalance_is_found_in_either_order() -> None:
    """The case that depended on luck: a cooperative member A reported owning foo-1 in its
    JoinGroup of generation 2, and generation 2's SyncGroup responses give foo-1 to B. Read
    in either order, foo-1 moved within one rebalance (KIP-429: it is revoked first and
    assigned in the next rebalance)."""
    head = json.dumps(
        {"format": "groupcheck-trace", "version": 2, "protocol": "classic", "topics": {"foo": 2}}
    )
    start = [head, *_join("A", "A.m1", (), 1), _sync("A", 0, 1)]
    rebalance = [*_join("A", "A.m1", (0, 1), 2), *_join("B", "B.m1", (), 2)]
    a_first = [*start, *rebalance, _sync("A", 0), _sync("B", 1)]
    b_first = [*start, *rebalance, _sync("B", 1), _sync("A", 0)]
    assert _swappable(a_first)[-1:] == [len(a_first) - 2]
    assert _verdict(a_first) == _verdict(b_first) == ("violation", ["Observed.NoDoubleOwnership"])
