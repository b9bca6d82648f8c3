"""Reports of the classic group protocol (JoinGroup / SyncGroup): the case-study text, the
explanation, the sequence chart, the ownership timeline and the HTML report of classic
paths — a cooperative rebalance, seeded walks, and the UPGRADE_ONE_BOUNCE counterexample —
and of an external classic trace read from its messages alone."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

from groupcheck.cli import main
from model import system
from model.actions import Action, DeliverMessage, Subscribe
from model.classic.messages import (
    ClassicSubscription,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.presets import CLASSIC_COOPERATIVE, UPGRADE_ONE_BOUNCE
from model.classic.records import ClassicState
from model.config import Config
from model.ids import FrozenMap
from model.path import Path as ModelPath
from model.records import Body, Message
from model.status import ErrorCode
from model.system import AnyState
from reports.artifacts import Counterexample, write_counterexample
from reports.casestudy import describe_action, group_view, render_group
from reports.render.dot import run_dot, sequence_dot, timeline_dot
from reports.render.explain import explain, explain_events
from reports.render.report import write_report
from reports.render.view import collapse, view_of_events, view_of_path
from tests.counterexamples import upgrade_one_bounce

LANE_A, LANE_COORDINATOR = 1, 0
"""Lane numbers in the DOT text: the coordinator first, then the clients in config order."""


def _edges(dot_text: str, src: int, dst: int) -> list[str]:
    """The labels of the sequence chart's arrows from lane ``src`` to lane ``dst``."""
    pattern = rf'r\d+_l{src} -> r\d+_l{dst} \[label="([^"]*)"'
    return re.findall(pattern, dot_text)


def _timeline_rows(dot_text: str) -> list[list[str]]:
    """The text of every cell of the ownership table, row by row."""
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", dot_text):
        cells = re.findall(r"<td(?: bgcolor=\"[^\"]*\")?>(.*?)</td>", tr)
        rows.append([re.sub(r"<[^>]+>", "", c) for c in cells])
    return rows


def _classic(state: AnyState) -> ClassicState:
    assert isinstance(state, ClassicState)
    return state


def _states(config: Config, actions: list[Action]) -> list[AnyState]:
    states = [system.initial(config)]
    for a in actions:
        states.append(system.step(states[-1], a, config))
    return states


def _cooperative_rebalance() -> tuple[list[AnyState], list[Action]]:
    """CLASSIC_COOPERATIVE: B subscribes, then the first enabled progress action is taken
    until none is left (at most 200 steps): A joins and takes foo-0 and foo-1; B joins, A
    is revoked foo-1 in the second generation and B gets it in the third (KIP-429)."""
    config = CLASSIC_COOPERATIVE
    state = system.initial(config)
    actions: list[Action] = [Subscribe("B")]
    state = system.step(state, actions[0], config)
    for _ in range(200):
        progress = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        if not progress:
            break
        actions.append(progress[0])
        state = system.step(state, progress[0], config)
    return _states(config, actions), actions


def _seeded_walk(config: Config, seed: int, steps: int) -> tuple[list[AnyState], list[Action]]:
    """A seeded random walk through ``model.system``: at most ``steps`` actions, each chosen
    uniformly among the enabled ones."""
    rng = random.Random(seed)
    state = system.initial(config)
    states: list[AnyState] = [state]
    actions: list[Action] = []
    for _ in range(steps):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        action = rng.choice(enabled)
        state = system.step(state, action, config)
        actions.append(action)
        states.append(state)
    return states, actions


def test_cooperative_rebalance_in_text() -> None:
    states, actions = _cooperative_rebalance()
    final = states[-1]
    assert isinstance(final, ClassicState)
    text = render_group(final)
    assert text.splitlines()[0] == (
        "Group (generation=3, STABLE, protocol=cooperative-sticky, leader=A.m1)"
    )
    assert "  • A.m1 - partitions=[foo-0], owned-partitions=[foo-0]" in text
    assert "  • B.m1 - partitions=[foo-1], owned-partitions=[]" in text
    assert "A.m1 STABLE generation=3 COOPERATIVE owns=[foo-0]" in text
    assert "B.m1 STABLE generation=3 COOPERATIVE owns=[foo-1]" in text

    said = [describe_action(a) for a in actions]
    assert (
        "DeliverMessage A → coordinator: JoinGroup(MemberId=A.m1, Protocols=[cooperative-sticky], "
        "Topics=[foo], OwnedPartitions=[foo-0, foo-1], GenerationId=1, UserData=[foo-0, foo-1])"
    ) in said
    assert (
        "DeliverMessage coordinator → A: SyncGroupResponse(ErrorCode=NONE, Assignment=[foo-0])"
        in said
    )
    assert "DeliverMessage coordinator → A: HeartbeatResponse(ErrorCode=REBALANCE_IN_PROGRESS)" in (
        said
    )
    assert any(s.startswith('DeliverMessage B → coordinator: JoinGroup(MemberId="",') for s in said)

    view = group_view(final)
    json.dumps(view)  # plain data
    assert view["protocol"] == "classic"
    assert (view["generation"], view["status"], view["leader"]) == (3, "STABLE", "A.m1")
    assert view["protocol_name"] == "cooperative-sticky"
    assert view["members"]["B.m1"]["assignment"] == ["foo-1"]
    assert view["clients"]["A"] | {"owned": ["foo-0"], "generation": 3} == view["clients"]["A"]
    assert view["clients"]["B"]["member_id"] == "B.m1"
    assert view["clients"]["B"]["status"] == "STABLE"


def test_cooperative_rebalance_explained() -> None:
    states, actions = _cooperative_rebalance()
    text = explain(states, actions, "no property", "nothing is violated")
    lines = text.splitlines()
    assert lines[0] == (
        "Let the classic group be at generation 0 (EMPTY) with 0 member(s); "
        "clients: A UNJOINED (COOPERATIVE), B UNSUBSCRIBED (COOPERATIVE)."
    )
    assert "the leader is A.m1" in text
    assert "A.m1 reports owning [foo-0, foo-1] (generation 1)" in text
    assert "A.m1 is assigned [foo-0] (generation 2)" in text
    assert "client A now consumes [foo-0]" in text
    assert "the group moves to generation 3" in text
    assert "B.m1 is assigned [foo-1] (generation 3)" in text
    assert lines[-2].startswith(f"then ({len(actions)}) DeliverMessage coordinator → B: ")
    assert lines[-2].endswith("client B is STABLE; client B now consumes [foo-1].")
    assert "epoch" not in text.replace("GenerationIdOrMemberEpoch", "")


def test_cooperative_rebalance_pictures() -> None:
    states, actions = _cooperative_rebalance()
    view = view_of_path(states, actions)
    assert view.protocol == "classic"
    assert view.lanes == ["coordinator", "A", "B"]
    seq = sequence_dot(view)
    from_a = _edges(seq, LANE_A, LANE_COORDINATOR)
    to_a = _edges(seq, LANE_COORDINATOR, LANE_A)
    assert any(re.fullmatch(r"\d+\. JoinGroup owned=\[\]", e) for e in from_a)
    assert any(e.endswith(". JoinGroup member=A.m1 owned=[foo-0,1] gen=1") for e in from_a)
    assert any(e.endswith(". SyncGroup gen=2 A.m1=[foo-0] B.m1=[]") for e in from_a)
    assert any(e.endswith(". Heartbeat gen=1") for e in from_a)
    assert any(e.endswith(". commit gen=2 [foo-1]") for e in from_a)
    # A's SyncGroup response of generation 2 takes foo-1 away: it must revoke it.
    assert any(e.endswith(". SyncGroup assigned=[foo-0]\\nrevoked=[foo-1]") for e in to_a)
    assert any(e.endswith(". Heartbeat REBALANCE_IN_PROGRESS") for e in to_a)
    assert any(e.endswith(". JoinGroup gen=1 member=A.m1 leader=A.m1") for e in to_a)
    assert any(e.endswith(". JoinGroup MEMBER_ID_REQUIRED member=A.m1") for e in to_a)
    assert any(e.endswith(". SyncGroup assigned=[foo-1]") for e in _edges(seq, 0, 2))
    assert "epoch=" not in seq
    assert 'label="1. Subscribe"' in seq  # a local step: a note on B's lane

    timeline = timeline_dot(view)
    table = _timeline_rows(timeline)
    steps, generations = table[0], table[1]
    assert steps[0] == "partition"
    assert steps[1:] == [str(r.index) for r in view.rows]
    assert generations[0] == "generation"
    assert generations[1:] == [str(_classic(s).group.generation_id) for s in states[1:]]
    assert {"0", "1", "2", "3"} <= set(generations[1:])
    foo0, foo1 = table[2], table[3]
    assert (foo0[0], foo1[0]) == ("foo-0", "foo-1")
    assert foo0[-1] == "A g3"
    assert foo1[-1] == "B g3"
    assert "A g1" in foo1  # A consumed foo-1 in generation 1, before revoking it
    for text in (seq, timeline):
        ElementTree.fromstring(run_dot(text))  # graphviz draws well-formed SVG


def test_cooperative_rebalance_report(tmp_path: Path) -> None:
    states, actions = _cooperative_rebalance()
    view = view_of_path(states, actions)
    text = explain(states, actions, "no property", "nothing is violated")
    page = write_report(
        tmp_path,
        title="classic cooperative",
        view=view,
        explanation=text,
        config_text="CLASSIC_COOPERATIVE",
        reproduce="-",
    ).read_text(encoding="utf-8")
    assert page.count("<svg") == 2
    assert "JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit" in page
    assert "with the generation each client knows" in page
    assert "A.m1 reports owning [foo-0, foo-1] (generation 1)" in page
    assert (tmp_path / "sequence.svg").is_file()
    assert (tmp_path / "ownership.svg").is_file()


@pytest.mark.parametrize(
    ("config", "seed"),
    [(CLASSIC_COOPERATIVE, 1), (CLASSIC_COOPERATIVE, 7), (UPGRADE_ONE_BOUNCE, 3)],
)
def test_seeded_walks_render(config: Config, seed: int, tmp_path: Path) -> None:
    states, actions = _seeded_walk(config, seed, 80)
    assert actions
    view = view_of_path(states, actions)
    assert view.protocol == "classic"
    assert len(view.rows) == len(actions)
    lanes = {name: i for i, name in enumerate(view.lanes)}
    seq = sequence_dot(view)
    drawn = collapse(view.rows)
    shown = {item.index for item in drawn if not isinstance(item, int)}
    assert len(shown) + sum(item for item in drawn if isinstance(item, int)) == len(actions)
    for row, action in zip(view.rows, actions, strict=True):
        state = _classic(states[row.index])
        assert row.generation == state.group.generation_id
        if row.index not in shown:
            continue  # in a collapsed quiet stretch
        if isinstance(action, DeliverMessage) and action.message.to_coordinator:
            # Every request is an arrow from its client's lane to the coordinator's.
            label = row.label.replace("\n", "\\n")
            src = lanes[action.message.client]
            assert f"{row.index}. {label}" in _edges(seq, src, 0)
            assert row.label.split()[0] in {
                "JoinGroup",
                "SyncGroup",
                "Heartbeat",
                "LeaveGroup",
                "commit",
            }
        for name, generation in row.epochs.items():
            assert generation == state.client(name).generation_id
    text = explain(states, actions, "no property", "nothing is violated")
    assert text.startswith("Let the classic group be at generation")
    skipped = re.findall(r"\n  \((\d+) steps that change no generation", text)
    assert text.count("\nthen (") + sum(map(int, skipped)) == len(actions)
    write_report(
        tmp_path,
        title=f"{config.name} seed {seed}",
        view=view,
        explanation=text,
        config_text=config.name,
        reproduce="-",
    )
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 2
    ElementTree.fromstring((tmp_path / "ownership.svg").read_text(encoding="utf-8"))
    json.dumps([group_view(s) for s in states])


@pytest.fixture(scope="module")
def upgrade_counterexample() -> tuple[ModelPath, str, str]:
    """The BFS counterexample of UPGRADE_ONE_BOUNCE: (path, property, message)."""
    return upgrade_one_bounce()


def _partition(message: str) -> str:
    """The partition a MovesOnlyReleased message names (``p=foo-3``)."""
    match = re.search(r"\bp=([\w.-]+-\d+)", message)
    assert match is not None, message
    return match.group(1)


def test_upgrade_counterexample_explained_and_drawn(
    upgrade_counterexample: tuple[ModelPath, str, str],
) -> None:
    path, prop, message = upgrade_counterexample
    assert prop == "MovesOnlyReleased"
    partition = _partition(message)
    states = list(path.states())
    actions = path.actions
    text = explain(states, actions, prop, message)
    lines = text.splitlines()
    assert lines[0].startswith("Let the classic group be at generation ")
    assert "A STABLE (EAGER) at generation" in lines[0]  # byte code older than KIP-429
    # The bounce puts B on the cooperative protocol while A's byte code stays eager.
    assert "client B runs assignors [cooperative-sticky] and follows the COOPERATIVE protocol" in (
        text
    )
    violating = lines[-2]
    assert violating.startswith(f"then ({len(actions)}) DeliverMessage A → coordinator: SyncGroup(")
    assert re.search(rf"is assigned \[[^\]]*\b{re.escape(partition)}\b", violating)
    assert lines[-1] == f"Now {prop} is violated: {message}"
    assert partition in lines[-1]
    claims = [ln for ln in lines if "B.m2 reports owning" in ln]
    assert claims
    assert partition in claims[-1]

    view = view_of_path(states, actions, prop, message, violation_step=len(actions))
    seq = sequence_dot(view)
    red = [ln for ln in seq.splitlines() if "color=red" in ln]
    assert len(red) == 1
    assert re.search(rf"r\d+_l{LANE_A} -> r\d+_l{LANE_COORDINATOR} ", red[0])
    assert "SyncGroup gen=" in red[0]
    assert "VIOLATES MovesOnlyReleased" in red[0]
    assert _edges(seq, LANE_A, LANE_COORDINATOR)  # A's lane sends JoinGroup and more
    assert any(". JoinGroup member=A.m1 owned=[]" in e for e in _edges(seq, LANE_A, 0))
    b_joins = [e for e in _edges(seq, 2, 0) if ". JoinGroup member=B.m2 owned=[" in e]
    assert b_joins
    assert "gen=" in b_joins[-1]

    timeline = timeline_dot(view)
    table = _timeline_rows(timeline)
    final = states[-1]
    assert isinstance(final, ClassicState)
    assert table[1][0] == "generation"
    assert table[1][-1] == str(final.group.generation_id)
    row = next(r for r in table if r[0] == partition)
    generation_b = final.client("B").generation_id
    assert row[-1] == f"B g{generation_b}"  # B still consumes it, at its old generation
    assert generation_b < final.group.generation_id
    assert f'bgcolor="#ffd6d6"><b>{len(actions)}</b>' in timeline  # the violating step

    _external_classic_trace_explained(path)


def test_upgrade_counterexample_artifacts(
    upgrade_counterexample: tuple[ModelPath, str, str], tmp_path: Path
) -> None:
    path, prop, message = upgrade_counterexample
    partition = _partition(message)
    ce = Counterexample(path, prop, message, "UPGRADE_ONE_BOUNCE", None, "bfs", seed=0)
    doc = ce.to_json()
    json.dumps(doc)
    assert doc["property"] == "MovesOnlyReleased"
    assert doc["initial"]["protocol"] == "classic"
    assert doc["initial"]["status"] == "STABLE"
    last = doc["steps"][-1]
    assert last["kind"] == "DeliverMessage"
    assert last["action"].startswith("DeliverMessage A → coordinator: SyncGroup(")
    assert partition in last["group"]["members"]["B.m2"]["owned_partitions"]
    assert partition in last["group"]["clients"]["B"]["owned"]

    run = write_counterexample(ce, out=tmp_path)
    assert run.name == "UPGRADE_ONE_BOUNCE-default-bfs-seed0"
    for name in (
        "index.html",
        "explanation.txt",
        "sequence.svg",
        "ownership.svg",
        "counterexample.json",
        "trace.ndjson",
        "config.toml",
        "reproduce.sh",
        "reproduce.py",
    ):
        assert (run / name).is_file(), name
    assert (tmp_path / "index.html").is_file()
    page = (run / "index.html").read_text(encoding="utf-8")
    assert "Violated: MovesOnlyReleased" in page
    assert page.count("<svg") == 2
    assert "KIP-429" in page
    explanation = (run / "explanation.txt").read_text(encoding="utf-8")
    assert f"Now MovesOnlyReleased is violated: {message}" in explanation
    assert partition in explanation.splitlines()[-2]

    # ``groupcheck render`` of the trace file (model/trace/codec.py reads classic bodies).
    out = tmp_path / "render"
    assert main(["render", str(run / "trace.ndjson"), "--out", str(out)]) == 0
    explanation = (out / "explanation.txt").read_text(encoding="utf-8")
    assert "Now MovesOnlyReleased is violated" in explanation
    assert _partition(message) in explanation
    assert "<b>generation</b>" in (out / "ownership.dot").read_text(encoding="utf-8")


def _external_classic_trace_explained(path: ModelPath) -> None:
    """The counterexample's steps read as the events of an external trace (line = step +
    1), from their messages alone."""
    events: list[tuple[int, Action]] = [(i + 1, a) for i, a in enumerate(path.actions, 1)]
    last = events[-1][0]
    view = view_of_events(events, {last: "MovesOnlyReleased"})
    assert view.protocol == "classic"
    assert view.violation == "MovesOnlyReleased"
    text = explain_events(events, view, [(last, "MovesOnlyReleased", "moved")], protocol="classic")
    assert text.startswith("Let an external implementation (classic protocol) log")
    assert "reporting it owns [foo-1, foo-3] at generation 3" in text
    assert "the coordinator answers A's JoinGroup: generation 4, member A.m1, the leader" in text
    assert "B may now consume [foo-1, foo-3]" in text
    assert "member B moves to generation 3" in text
    assert f"Now MovesOnlyReleased is violated (line {last}): moved" in text
    table = _timeline_rows(timeline_dot(view))
    assert table[1][0] == "generation"
    assert table[1][-1] == "4"
    assert any(cell.startswith("B g") for row in table[2:] for cell in row)


HOSTILE = ['evil"]; x -> y [label="pwned', "<script>alert(1)</script>", "id\u202e\x1b[31m"]


def test_hostile_classic_ids_render_safely() -> None:
    foo0 = ("t<b>", 0)
    events: list[tuple[int, Action]] = []
    for i, name in enumerate(HOSTILE):
        sub = ClassicSubscription(frozenset({"t<b>"}), frozenset({foo0}), 1)
        bodies: list[tuple[bool, Body]] = [
            (True, JoinGroupRequest(name, name, (name,), sub, 1000, 1000)),
            (False, JoinGroupResponse(ErrorCode.NONE, 2, name, HOSTILE[0], name)),
            (True, SyncGroupRequest(name, 2, name, name, FrozenMap({name: frozenset({foo0})}))),
            (False, SyncGroupResponse(ErrorCode.NONE, name, frozenset({foo0}))),
        ]
        for to_coordinator, body in bodies:
            message = Message(name, i, 0, to_coordinator, body)
            events.append((len(events) + 2, DeliverMessage(message)))
    view = view_of_events(events)
    seq = sequence_dot(view)
    canon = run_dot(seq, "canon").decode("utf-8")
    assert not re.search(r"^\s*x -> y", canon, flags=re.M)
    for text in (seq, timeline_dot(view)):
        svg = run_dot(text).decode("utf-8")
        ElementTree.fromstring(svg)
        assert "<script>" not in svg
        assert "\u202e" not in svg
        assert "\x1b" not in svg
    said = explain_events(events, view, [])
    assert "\u202e" not in said
    assert "\x1b" not in said
    assert "\\u202e" in said
    for _, action in events:
        line = describe_action(action)
        assert "\u202e" not in line
        assert "\x1b" not in line


def test_consumer_views_are_unchanged_in_kind() -> None:
    """A consumer path keeps its views: no generation row, member epochs in the labels."""
    from model.presets import TINY

    states, actions = _seeded_walk(TINY, 2, 30)
    view = view_of_path(states, actions)
    assert view.protocol == "consumer"
    assert all(r.generation is None for r in view.rows)
    assert "<b>generation</b>" not in timeline_dot(view)
    assert "protocol" not in group_view(states[-1])
