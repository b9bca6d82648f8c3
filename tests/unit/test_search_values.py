"""The shortcuts an exhaustive search takes on values: kept hashes of copied records, the
stutter check by hash, and snapshot keys computed from the parent's."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from groupcheck.explore.views import Views
from invariants.check import Checker
from invariants.snapshot import snapshot_key, snapshot_key_after
from invariants.z3.proof.walks import model_bfs
from model import system
from model.presets import preset
from model.records import Client, Group, State, replace, same_value


@pytest.mark.parametrize(
    "name", ["MUT2_LOSS2", "CALLBACKS", "CLASSIC_COOPERATIVE", "MIGRATION_UPGRADE"]
)
def test_a_successors_key_from_its_parents_is_its_own(name: str) -> None:
    """``snapshot_key_after`` (the views of the clients a step left alone taken from the
    parent's key) equals ``snapshot_key`` on every transition, KIP-848 or not; ``Views``
    numbers the two alike."""
    config = preset(name)
    views = Views(Checker())
    count = 0
    for pre, _, post in model_bfs(config, 1500):
        key = snapshot_key_after(snapshot_key(pre), pre, post)
        assert key == snapshot_key(post)
        assert views.after(views.of(pre), pre, post) == views.of(post)
        count += 1
    assert count > 1500


def test_copies_hash_as_records_built_afresh() -> None:
    """A record copied by ``replace`` (its hash slot marked, not filled) hashes and compares
    as the same record built by ``__init__``, before and after a pickle round trip, and
    keeps the hash it computed."""
    config = preset("MUT2_LOSS2")
    checked = 0
    for _pre, _, post in model_bfs(config, 300):
        assert isinstance(post, State)
        client: Client = post.clients[0]
        group: Group = post.group
        for record, changes in (
            (client, {"member_epoch": client.member_epoch + 1}),
            (group, {"group_epoch": group.group_epoch + 1}),
            (post, {"perturbations": post.perturbations + 1}),
        ):
            copy = replace(record, **changes)  # type: ignore[type-var]
            fresh = dataclasses.replace(record, **changes)  # type: ignore[type-var]
            assert copy == fresh
            assert copy is not fresh
            assert hash(copy) == hash(fresh) == hash(copy)
            back = pickle.loads(pickle.dumps(copy))
            assert back == copy
            assert hash(back) == hash(copy)
            assert replace(record) == record
            assert hash(replace(record)) == hash(record)
            checked += 1
    assert checked > 900


def test_a_step_to_an_equal_state_is_a_stutter() -> None:
    """``same_value``: equal records, whatever their identity; a differing field makes them
    differ even before a hash is kept."""
    state = system.initial(preset("MUT2"))
    twin = replace(state, clients=tuple(replace(c) for c in state.clients))
    assert twin is not state
    assert same_value(twin, state)
    other = replace(state, perturbations=state.perturbations + 1)
    assert not same_value(other, state)
    assert same_value(state, state)
