"""Build the pictures and the HTML report of a model path or of an external trace."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from pathlib import Path as FsPath

import networkx as nx

from invariants.check import all_properties
from invariants.liveness import CONVERGENCE, fair_loop
from model.actions import Action
from model.config import Config
from model.system import AnyState
from reports.families import RENDER, WORDING
from reports.render.dot import (
    STATE_GRAPH_MAX_NODES,
    RenderError,
    run_dot,
    sequence_dot,
    state_graph_dot,
    timeline_dot,
)
from reports.render.explain import explain
from reports.render.html import Figure, report_html
from reports.render.view import TraceView, collapse, one_family, view_of_lasso, view_of_path

CLASSIC_TEXT: dict[str, tuple[str, str]] = {
    CONVERGENCE.name: (
        "After the last perturbation, with messages flowing, every subscribed client is "
        "STABLE at the group's generation with no rejoin pending, consuming exactly its "
        "member's assignment, every subscribed partition is assigned and the group is "
        "STABLE, within the bound (400 fair steps, or 40 per client when that is more).",
        "KIP-429 Proposed Changes (the cooperative follow-up rebalance completes); "
        "ClassicGroup STABLE",
    ),
    "NoDoubleClientOwnership": (
        "No partition is consumed by two clients at once — a zombie apart (a live client "
        "whose member a join, sync or session timer, or a static replacement, removed).",
        "KIP-429 Proposed Changes (revoke before the partition is given again); "
        "ConsumerCoordinator.onJoinPrepare",
    ),
    "NoDoubleMemberAssignment": (
        "No partition is in the assignments of two members of the last SyncGroup phase at once.",
        "ClassicGroup.setAndPropagateAssignment; ConsumerPartitionAssignor",
    ),
    "OwnedPartitionsAreHeld": (
        "A client that completed the group's current generation consumes only what that "
        "generation assigned its member (a zombie apart: see NoDoubleClientOwnership).",
        "ClassicGroup.setAndPropagateAssignment; ConsumerCoordinator.onJoinComplete",
    ),
    "MemberEpochMonotone": (
        "The group's generation, which every member shares (a classic member has no epoch "
        "of its own), never decreases while the group exists.",
        "ClassicGroup.initNextGeneration",
    ),
    "OffsetCommitAtValidEpoch": (
        "An offset is committed only by a member of the group at the group's current "
        "generation (no zombie commits).",
        "GroupMetadataManager.validateOffsetCommit (classic: ILLEGAL_GENERATION, "
        "UNKNOWN_MEMBER_ID)",
    ),
}
"""The properties both families check, in a classic group's terms: their descriptions
name KIP-848's member epochs and target assignment, which a classic group has not
(``invariants.classic_snapshot`` reads a member's epoch as the generation)."""

WORDING.register("classic", CLASSIC_TEXT)


def family_of(state: AnyState) -> str:
    """``classic`` or ``consumer``: the family whose terms a report of a path from
    ``state`` uses (a mixed state: its group's family)."""
    return RENDER.of_state(one_family([state])[0]).protocol


def property_text(name: str | None, family: str = "consumer") -> tuple[str, str]:
    """(description, KIP reference) of the property called ``name``, in the terms of the
    protocol ``family`` (its ``reports.families.WORDING`` where it has one: classic,
    :data:`CLASSIC_TEXT`)."""
    if name is None:
        return "", ""
    own = WORDING.get(family)
    if own is not None and name in own:
        return own[name]
    for p in (*all_properties(), CONVERGENCE):
        if p.name == name:
            return p.description, p.reference
    return "", ""


def dot_sources(
    view: TraceView, graph: nx.DiGraph | None = None, graph_path: Sequence[Hashable] = ()
) -> dict[str, str]:
    """DOT text per picture: ``sequence``, ``ownership`` and, with a graph, ``states``."""
    out = {"sequence": sequence_dot(view), "ownership": timeline_dot(view)}
    if graph is not None:
        out["states"] = state_graph_dot(graph, graph_path)
    return out


CAPTIONS = {
    "sequence": "Heartbeats and commits between the coordinator and each client; a "
    "response also names the partitions it revokes and those left pending; the violating "
    "step is red.",
    "ownership": "Who consumes each partition after each step: red when two clients do, "
    "grey when the partition is pending (revoking, or given but not yet released).",
    "states": "The explored state graph; the counterexample path is red, the initial state "
    f"blue. Graphs of more than {STATE_GRAPH_MAX_NODES} states show the path and its "
    "states' successors only.",
}

CLASSIC_CAPTIONS = {
    **CAPTIONS,
    "sequence": "JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit requests and "
    "responses between the coordinator and each client; a SyncGroup response also names "
    "the partitions it revokes and those it gives while another client still consumes "
    "them (pending); the violating step is red.",
    "ownership": "Who consumes each partition after each step, with the generation each "
    "client knows (A g3), under the group's generation: red when two clients do, grey when "
    "the partition is pending (a member's assignment and what its client consumes differ).",
}
"""Captions of a classic group's pictures (``TraceView.protocol`` is ``classic``)."""

TITLES = {"sequence": "Sequence chart", "ownership": "Ownership timeline", "states": "State graph"}


def collapsed_note(view: TraceView) -> str:
    """How many quiet steps the pictures collapse, if any, and the view's notes (which
    stretch of a long trace is drawn)."""
    hidden = sum(item for item in collapse(view.rows) if isinstance(item, int))
    said = f" {hidden} quiet steps are collapsed." if hidden else ""
    return said + "".join(f" {note}" for note in view.notes)


def write_pictures(directory: FsPath, sources: dict[str, str], fmt: str = "svg") -> dict[str, str]:
    """Write ``<name>.dot`` and ``<name>.<fmt>`` for every source; returns the SVG texts
    (when ``fmt`` is svg)."""
    svgs: dict[str, str] = {}
    for name, text in sources.items():
        (directory / f"{name}.dot").write_text(text, encoding="utf-8")
        data = run_dot(text, fmt)
        (directory / f"{name}.{fmt}").write_bytes(data)
        if fmt == "svg":
            svgs[name] = data.decode("utf-8")
    return svgs


def write_report(
    directory: FsPath,
    *,
    title: str,
    view: TraceView,
    explanation: str,
    config_text: str,
    reproduce: str,
    graph: nx.DiGraph | None = None,
    graph_path: Sequence[Hashable] = (),
    describe: Callable[[str | None], tuple[str, str]] = property_text,
) -> FsPath:
    """Write the pictures and ``index.html`` into ``directory`` (which the caller renames
    into place, so a report that exists is complete). ``describe`` gives the violated
    property's description and reference (default: the model's properties)."""
    description, reference = describe(view.violation)
    try:
        svgs = write_pictures(directory, dot_sources(view, graph, graph_path))
        note = collapsed_note(view)
        generations = RENDER.named(view.protocol).in_generations
        captions = CLASSIC_CAPTIONS if generations else CAPTIONS
        figures = [
            Figure(TITLES[k], svg, captions[k] + (note if k != "states" else ""))
            for k, svg in svgs.items()
        ]
    except RenderError as e:
        figures = [Figure("Pictures", "", f"not rendered: {e}")]
    page = report_html(
        title,
        view.violation,
        view.message,
        description,
        reference,
        explanation,
        figures,
        config_text,
        reproduce,
    )
    target = directory / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def path_report(
    directory: FsPath,
    states: Sequence[AnyState],
    actions: Sequence[Action],
    prop: str,
    message: str,
    *,
    title: str,
    config_text: str,
    reproduce: str,
    graph: nx.DiGraph | None = None,
    graph_path: Sequence[Hashable] = (),
    config: Config | None = None,
) -> FsPath:
    """The report of a model counterexample (its last step is the violation), of either
    protocol family. A Convergence counterexample with its ``config`` is drawn and told
    whole: the prefix, then the fair schedule's lasso (``invariants.liveness.fair_loop``)
    with its loop marked as the repeating part and what never happens in it."""
    description, reference = property_text(prop, family_of(states[0]))
    lasso = (
        fair_loop(states[-1], config) if config is not None and prop == CONVERGENCE.name else None
    )
    if lasso is not None:
        view = view_of_lasso(states, actions, lasso, prop, message)
    else:
        view = view_of_path(states, actions, prop, message, violation_step=len(actions))
    text = explain(states, actions, prop, message, description, reference, lasso=lasso)
    (directory / "explanation.txt").write_text(text, encoding="utf-8")
    return write_report(
        directory,
        title=title,
        view=view,
        explanation=text,
        config_text=config_text,
        reproduce=reproduce,
        graph=graph,
        graph_path=graph_path,
        describe=lambda name: property_text(name, family_of(states[0])),
    )
