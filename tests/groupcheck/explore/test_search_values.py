"""The shortcuts an exhaustive search takes on values: kept hashes of copied records, the
stutter check by hash, snapshot keys computed from the parent's, maps copied without a
sort, and group records shared by equal groups."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from groupcheck.explore.views import Views
from invariants.check import Checker
from invariants.snapshot import snapshot_key, snapshot_key_after
from invariants.z3.proof.walks import model_bfs
from model import system
from model.actions import DeliverMessage, SendHeartbeat
from model.classic.records import ClassicClient, ClassicGroup, ClassicState
from model.config import Config
from model.consumer import system as consumer_system
from model.ids import FrozenMap
from model.presets import preset
from model.records import Client, Group, Message, State, replace, same_value


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


def test_records_built_afresh_mark_their_hash_as_not_computed() -> None:
    """``Record.__new__`` marks the hash slot of a record built by ``__init__`` (a message
    a step sends): its first hash computes the dataclass's, and keeps it."""
    state = system.initial(preset("MUT2"))
    sent = system.step(state, SendHeartbeat(state.clients[0].name), preset("MUT2"))
    assert isinstance(sent, State)
    message = sent.network[-1]
    fresh = Message(message.client, message.incarnation, message.connection, True, message.body)
    assert fresh._hash == -1
    assert hash(fresh) == hash(message) == fresh._hash
    assert fresh == message


def test_a_map_copied_with_one_change_keeps_the_canonical_order() -> None:
    """``FrozenMap.set`` and ``remove`` copy without sorting when the keys stay as they
    were; the result equals, hashes and iterates as the map built afresh."""
    base = FrozenMap({"b": 2, "d": 4, "a": 1})
    for changed, expected in (
        (base.set("b", 20), {"a": 1, "b": 20, "d": 4}),
        (base.set("c", 3), {"a": 1, "b": 2, "c": 3, "d": 4}),
        (base.remove("a"), {"b": 2, "d": 4}),
        (base.remove("z"), {"a": 1, "b": 2, "d": 4}),
    ):
        fresh = FrozenMap(expected)
        assert changed == fresh
        assert hash(changed) == hash(fresh)
        assert list(changed.items()) == list(fresh.items()) == sorted(expected.items())


def test_a_heartbeat_that_changes_nothing_keeps_the_group_record() -> None:
    """A member's steady heartbeat leaves the group as it was: the step's state shares its
    parent's group record, so the search sees the step cannot falsify a step property
    (``_step_may_matter``). Every delivery of a heartbeat that leaves the group equal
    keeps the same record, and groups that are equal after a delivery are one record."""
    config = preset("MUT2_LOSS2")
    unchanged = changed = 0
    groups: dict[Group, Group] = {}
    for pre, action, post in model_bfs(config, 3000):
        if not isinstance(action, DeliverMessage) or not action.message.to_coordinator:
            continue
        assert isinstance(pre, State)
        assert isinstance(post, State)
        if post.group == pre.group:
            assert post.group is pre.group
            unchanged += 1
        else:
            assert groups.setdefault(post.group, post.group) is post.group
            changed += 1
    assert unchanged > 100
    assert changed > 100


def _compared(record: object) -> tuple[object, ...]:
    return tuple(getattr(record, f.name) for f in dataclasses.fields(record) if f.compare)  # type: ignore[arg-type]


def test_a_kept_hash_is_the_hash_of_the_compared_fields() -> None:
    """``hash_once``'s generated ``__hash__`` computes what the dataclass's would: the hash
    of the tuple of the fields it compares, in their order, for every kind of record a
    KIP-848 or classic step builds (fresh from the step and after a pickle round trip),
    and for a config, whose rules it does not compare."""
    kinds: set[type] = set()
    for name in ("MUT2_LOSS2", "CLASSIC_COOPERATIVE"):
        config = preset(name)
        assert hash(config) == hash(_compared(config))
        for _pre, _, post in model_bfs(config, 300):
            records: list[object] = [post, post.group, *post.clients, *post.network]
            records += list(post.group.members.values())
            for record in records:
                assert hash(record) == hash(_compared(record))
                assert hash(pickle.loads(pickle.dumps(record))) == hash(_compared(record))
                kinds.add(type(record))
    assert {State, Group, Client, Message, ClassicState, ClassicGroup, ClassicClient} <= kinds
    assert any(not f.compare for f in dataclasses.fields(Config))


def test_a_copied_state_shares_the_group_record_steps_built() -> None:
    """``with_shared_group``: a state rebuilt by unpickling (a state a parallel search's
    worker takes from another) gets the group record the steps built for its value, and
    stays equal; a state whose group is that record already is returned as it is."""
    config = preset("MUT2_LOSS2")
    shared = 0
    for pre, action, post in model_bfs(config, 2000):
        if not isinstance(action, DeliverMessage) or not action.message.to_coordinator:
            continue
        assert isinstance(pre, State)
        assert isinstance(post, State)
        if post.group is pre.group:
            continue
        copy = pickle.loads(pickle.dumps(post))
        assert copy.group is not post.group
        back = consumer_system.with_shared_group(copy)
        assert back.group is post.group
        assert back == copy == post
        assert consumer_system.with_shared_group(post) is post
        shared += 1
    assert shared > 100
