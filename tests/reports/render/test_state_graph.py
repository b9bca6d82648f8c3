"""The state graph's nodes say what state they are: the group's epoch and, per client, the
epoch it knows and what it consumes (issue: unlabelled dots)."""

from __future__ import annotations

from groupcheck.explore.bfs import state_graph
from model.presets import PRESETS
from reports.render.dot import state_graph_dot, state_label


def test_every_node_is_labelled_with_epochs_and_owners() -> None:
    graph = state_graph(PRESETS["TINY"], max_states=300)
    text = state_graph_dot(graph, [])
    nodes = [
        line for line in text.splitlines() if line.strip().startswith("s") and "->" not in line
    ]
    assert len(nodes) == graph.number_of_nodes()
    assert all('label="epoch ' in line for line in nodes)
    labels = {state_label(graph.nodes[n]["state"]) for n in graph.nodes}
    # Some reachable state within 300 has a client consuming a partition at a known epoch.
    assert any(":foo-" in label for label in labels), sorted(labels)[:5]
    assert any("@" in label for label in labels)


def test_a_node_without_its_state_has_an_empty_label() -> None:
    assert state_label(None) == ""
