"""DOT text for the sequence chart, the ownership timeline and the state graph, and
graphviz's ``dot`` to turn it into SVG or PNG."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Hashable, Sequence

import networkx as nx

from reports.escape import MAX_LABEL, dot_quote, html_text, short, tooltip
from reports.families import RENDER
from reports.render.view import Row, TraceView, collapse


class RenderError(Exception):
    """graphviz is missing or refused the DOT text."""


def _lane_id(i: int) -> str:
    return f"l{i}"


def _elapsed(row: Row) -> str:
    """``+1.25 s``: the row's time since the trace's first timestamp (timed traces)."""
    return "" if row.elapsed_ms is None else f"+{row.elapsed_ms / 1000:.2f} s"


def partition_labels(partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """Each partition's row label in the ownership timeline: ``topic-N`` with a long topic
    name (or id) cut before the partition number, never after it; where cutting makes two
    labels equal, those topics are written in full (as far as a tooltip shows)."""
    labels: dict[tuple[str, int], str] = {}
    for tp in partitions:
        suffix = f"-{tp[1]}"
        labels[tp] = short(tp[0], max(MAX_LABEL - len(suffix), 8)) + suffix
    seen: dict[str, list[tuple[str, int]]] = {}
    for tp, label in labels.items():
        seen.setdefault(label, []).append(tp)
    for same in seen.values():
        if len(same) > 1:
            for tp in same:
                labels[tp] = tooltip(tp[0]) + f"-{tp[1]}"
    return labels


LOOP_COLOUR = "#6a3fb5"
"""The colour of a Convergence lasso's loop: the part that repeats for ever."""
LOOP_FILL = "#e6dcf5"


def step_number(row: Row) -> int:
    """The number a picture gives a step: the line of the trace file it was read from
    (the line ``groupcheck validate`` cites), else its 1-based index in the path."""
    return row.line if row.line is not None else row.index


def _row_text(view: TraceView, row: Row) -> str:
    at = _elapsed(row)
    mark = "↻ " if row.phase == "loop" else ""
    text = f"{mark}{step_number(row)}. {at + ' ' if at else ''}{row.label}"
    if row.violation and view.violation:
        if row.phase == "loop":
            text += f"\nVIOLATES {view.violation}: this loop repeats for ever"
        else:
            text += f"\nVIOLATES {view.violation}"
    return text


def _loop_span(view: TraceView) -> tuple[int, int] | None:
    """The step numbers of a lasso's loop, first and last (None: no loop)."""
    loop = [r for r in view.rows if r.phase == "loop"]
    return (step_number(loop[0]), step_number(loop[-1])) if loop else None


def _label_lines(view: TraceView, row: Row) -> int:
    return _row_text(view, row).count("\n") + 1


def sequence_dot(view: TraceView) -> str:
    """A sequence chart: one lane per participant (coordinator first), one rank per drawn
    step; messages are arrows between lanes, local steps are notes on their lane, the
    violating step is red, and collapsed quiet stretches are one grey row."""
    lanes = {name: i for i, name in enumerate(view.lanes)}
    out = [
        "digraph sequence {",
        '  graph [rankdir=TB, nodesep=1.6, ranksep=0.18, splines=false, fontname="Helvetica"];',
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    heads = []
    for name, i in lanes.items():
        heads.append(
            f'  h{i} [shape=box, style=filled, fillcolor="#e8eef7", group={_lane_id(i)}, '
            f"label={dot_quote(short(name))}, tooltip={dot_quote(tooltip(name))}];"
        )
    # Invisible edges keep the lanes in order: coordinator, then clients as they appear.
    order = [f"h{i}" for i in lanes.values()]
    ordering = [f"  {a} -> {b} [style=invis];" for a, b in itertools.pairwise(order)]
    out += ["  { rank=same;", *heads, *ordering, "  }"]
    drawn: list[Row | int | str] = []
    span = _loop_span(view)
    before: Row | None = None
    for kept in collapse(view.rows):
        if (
            isinstance(kept, Row)
            and kept.phase == "loop"
            and (before is None or before.phase != "loop")
        ):
            assert span is not None
            drawn.append(f"↻ LOOP: steps {span[0]}–{span[1]} repeat for ever")
        if isinstance(kept, Row) and kept.phase == "stem" and (before is None or not before.phase):
            drawn.append("fair schedule, no more perturbations")
        drawn.append(kept)
        if isinstance(kept, Row):
            before = kept
    if span is not None:
        drawn.append(f"↻ back to the state after step {span[0] - 1}")
    previous = {i: f"h{i}" for i in lanes.values()}
    for r, item in enumerate(drawn):
        ids = {i: f"r{r}_{_lane_id(i)}" for i in lanes.values()}
        out.append("  { rank=same;")
        for i, node in ids.items():
            out.append(
                f'    {node} [shape=point, width=0.02, height=0.02, label="", group={_lane_id(i)}];'
            )
        out.append("  }")
        # A label of several lines (revoked / pending partitions, the violation) needs as
        # many ranks of room above its arrow.
        height = 1 if isinstance(item, int | str) else _label_lines(view, item)
        room = f", minlen={height}" if height > 1 else ""
        for i, node in ids.items():
            out.append(
                f"  {previous[i]} -> {node} [arrowhead=none, style=dashed, color=grey70{room}];"
            )
        previous = ids
        if isinstance(item, int):
            note = dot_quote(f"… {item} quiet steps …")
            out.append(f"  {ids[0]} [shape=plaintext, label={note}, fontcolor=grey45];")
            continue
        if isinstance(item, str):
            colour = LOOP_COLOUR if item.startswith("↻") else "grey45"
            out.append(
                f"  {ids[0]} [shape=plaintext, label={dot_quote(item)}, "
                f"fontcolor={dot_quote(colour)}];"
            )
            continue
        row: Row = item
        colour = "red" if row.violation else ("grey40" if row.lost else "black")
        if row.phase == "loop" and not row.violation:
            colour = dot_quote(LOOP_COLOUR)
        width = "2.2" if row.violation else "1"
        text = _row_text(view, row)
        src, dst = ids[lanes[row.source]], ids[lanes[row.target]]
        if row.source != row.target:
            style = "dashed" if row.lost else "solid"
            out.append(
                f"  {src} -> {dst} [label={dot_quote(text)}, color={colour}, fontcolor={colour}, "
                f"penwidth={width}, style={style}, constraint=false, tooltip={dot_quote(text)}];"
            )
        else:
            out.append(
                f"  {src} [shape=note, width=0, height=0, fontsize=9, label={dot_quote(text)}, "
                f"color={colour}, fontcolor={colour}, penwidth={width}];"
            )
    out.append("}")
    return "\n".join(out) + "\n"


def _owners_text(view: TraceView, row: Row, tp: tuple[str, int]) -> str:
    """A timeline cell: the clients consuming ``tp`` after ``row``; in a classic view each
    with the generation it knows (``A g3``)."""
    owners = row.owners.get(tp, ())
    if not RENDER.named(view.protocol).in_generations:
        return ", ".join(short(o, 12) for o in owners)
    return ", ".join(f"{short(o, 12)} g{row.epochs.get(o, -1)}" for o in owners)


def _generation_row(drawn: Sequence[Row | int]) -> str:
    """The classic timeline's second row: the group's generation after each drawn step."""
    cells = ['<td bgcolor="#e8eef7"><b>generation</b></td>']
    last: Row | None = None
    for item in drawn:
        if isinstance(item, int):
            text = "" if last is None or last.generation is None else str(last.generation)
            cells.append(f'<td bgcolor="#f2f2f2">{text}</td>')
            continue
        last = item
        cells.append(f"<td>{'' if item.generation is None else item.generation}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def timeline_dot(view: TraceView) -> str:
    """The ownership timeline: partitions by drawn step, each cell the owner(s); a
    partition owned twice is red, a pending one (revoking, or given but not released
    elsewhere) is shaded; collapsed stretches are one narrow column. A classic view has a
    row with the group's generation after each step, and names each owner with the
    generation it knows."""
    drawn = collapse(view.rows)
    header = ['<td bgcolor="#e8eef7"><b>partition</b></td>']
    for item in drawn:
        if isinstance(item, int):
            header.append(f'<td bgcolor="#f2f2f2"><font color="#777777">…{item}…</font></td>')
        else:
            mark = ' bgcolor="#ffd6d6"' if item.violation else ' bgcolor="#e8eef7"'
            if item.phase == "loop" and not item.violation:
                mark = f' bgcolor="{LOOP_FILL}"'
            at = _elapsed(item)
            when = f'<br/><font point-size="7">{html_text(at)}</font>' if at else ""
            loop = "↻" if item.phase == "loop" else ""
            header.append(f"<td{mark}><b>{loop}{step_number(item)}</b>{when}</td>")
    span = _loop_span(view)
    if span is not None:
        header.append(
            f'<td bgcolor="{LOOP_FILL}"><font color="{LOOP_COLOUR}">↻ back to after '
            f"{span[0] - 1}</font></td>"
        )
    width = len(header)
    rows = ["<tr>" + "".join(header) + "</tr>"]
    if RENDER.named(view.protocol).in_generations:
        rows.append(
            _generation_row(drawn).replace(
                "</tr>", "<td></td>" * (width - 1 - len(drawn)) + "</tr>"
            )
        )
    last: Row | None = None
    labels = partition_labels(view.partitions)
    for tp in view.partitions:
        cells = [f"<td>{html_text(labels[tp])}</td>"]
        for item in drawn:
            if isinstance(item, int):
                row = last
                cells_text = "" if row is None else _owners_text(view, row, tp)
                cells.append(f'<td bgcolor="#f2f2f2">{html_text(cells_text)}</td>')
                continue
            last = item
            owners = item.owners.get(tp, ())
            colour = ""
            if len(owners) > 1:
                colour = ' bgcolor="#ff6b6b"'
            elif tp in item.pending:
                colour = ' bgcolor="#d9d9d9"'
            cells.append(f"<td{colour}>{html_text(_owners_text(view, item, tp))}</td>")
        rows.append("<tr>" + "".join(_padded(cells, width)) + "</tr>")
    if view.coordinator:
        rows += _coordinator_rows(view, drawn, labels, width)
    table = (
        '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">'
        + "".join(rows)
        + "</table>>"
    )
    return (
        "digraph ownership {\n"
        '  graph [fontname="Helvetica"];\n'
        '  node [shape=plaintext, fontname="Helvetica", fontsize=9];\n'
        f"  timeline [label={table}];\n"
        "}\n"
    )


def _padded(cells: list[str], width: int) -> list[str]:
    return cells + ["<td></td>"] * (width - len(cells))


def _coordinator_rows(
    view: TraceView,
    drawn: Sequence[Row | int],
    labels: dict[tuple[str, int], str],
    width: int,
) -> list[str]:
    """The coordinator's side of the timeline (a model path): per partition, the member(s)
    the coordinator assigns it to after each step (``A rev``: pending revocation from A;
    ``B wait``: in B's target, not yet released). Red when two members hold it at once,
    orange when a client consumes it whose member the coordinator does not give it to (the
    coordinator handed it on, or the client kept it), grey while pending."""
    in_generations = RENDER.named(view.protocol).in_generations
    title = "coordinator: assignment" if in_generations else "coordinator assigns"
    out = [f'<tr><td colspan="{width}" bgcolor="#e8eef7" align="left"><b>{title}</b></td></tr>']
    for tp in view.partitions:
        cells = [f"<td>{html_text(labels[tp])}</td>"]
        last = ""
        for item in drawn:
            if isinstance(item, int):
                cells.append(f'<td bgcolor="#f2f2f2">{html_text(last)}</td>')
                continue
            text = view.coordinator[item.index - 1].get(tp, "")
            last = text
            held = [h for h in text.split(", ") if h and not h.endswith(" wait")]
            holders = {h.removesuffix(" rev") for h in held}
            consumers = set(item.owners.get(tp, ()))
            colour = ""
            if len(holders) > 1:
                colour = ' bgcolor="#ff6b6b"'
            elif consumers - holders and not in_generations:
                colour = ' bgcolor="#ffb347"'
            elif (text and len(held) != len(text.split(", "))) or any(
                h.endswith(" rev") for h in held
            ):
                colour = ' bgcolor="#d9d9d9"'
            cells.append(f"<td{colour}>{html_text(text)}</td>")
        out.append("<tr>" + "".join(_padded(cells, width)) + "</tr>")
    return out


STATE_GRAPH_MAX_NODES = 400
"""State graphs with more nodes are cut to the counterexample path and its successors."""


def state_label(state: object) -> str:
    """A state graph node's label: the group's epoch (a classic group's generation) and, per
    client, the epoch it knows and what it consumes (``C@2:foo-0,1``; ``-`` for nothing)."""
    if state is None:
        return ""
    group = getattr(state, "group", None)
    epoch = getattr(group, "group_epoch", None)
    head = f"epoch {epoch}" if epoch is not None else f"gen {getattr(group, 'generation_id', '?')}"
    owners = []
    for c in getattr(state, "clients", ()):
        owned = sorted(getattr(c, "owned", ()) or ())
        topics: dict[str, list[str]] = {}
        for topic, partition in owned:
            topics.setdefault(str(topic), []).append(str(partition))
        held = " ".join(f"{t}-{','.join(ps)}" for t, ps in topics.items()) or "-"
        known = getattr(c, "member_epoch", getattr(c, "generation_id", None))
        at = f"@{known}" if known is not None else ""
        owners.append(short(f"{c.name}{at}:{held}", 40))
    return "\n".join([head, *owners])


def state_graph_dot(
    graph: nx.DiGraph, path: Sequence[Hashable], max_nodes: int = STATE_GRAPH_MAX_NODES
) -> str:
    """The state graph of a small exploration with ``path`` (node keys from the initial
    state to the violation) drawn in red. Graphs larger than ``max_nodes`` keep the path
    and its neighbours only."""
    on_path = set(path)
    nodes = list(graph.nodes)
    if len(nodes) > max_nodes:
        keep = set(on_path)
        for n in path:
            keep.update(graph.successors(n))
        nodes = [n for n in nodes if n in keep]
    ids = {n: f"s{i}" for i, n in enumerate(nodes)}
    out = [
        "digraph states {",
        '  graph [rankdir=TB, fontname="Helvetica"];',
        '  node [shape=box, style="rounded,filled", fillcolor=grey92, fontname="Helvetica",'
        " fontsize=8, margin=0.04, height=0.2];",
        "  edge [arrowsize=0.4, color=grey70];",
    ]
    for n in nodes:
        attrs = ""
        if n in on_path:
            attrs = ', fillcolor="#f4b6b6", color=red'
        if path and n == path[0]:
            attrs = ', fillcolor="#b9cdf0", color="#4a7bd0"'
        depth = graph.nodes[n].get("depth", "?")
        label = state_label(graph.nodes[n].get("state"))
        out.append(
            f"  {ids[n]} [label={dot_quote(label)}, tooltip={dot_quote(f'depth {depth}')}{attrs}];"
        )
    steps = set(itertools.pairwise(path))
    for a, b, data in graph.edges(data=True):
        if a in ids and b in ids:
            kind = str(data.get("kind", ""))
            hot = (a, b) in steps
            attrs = ", color=red, penwidth=2" if hot else ""
            out.append(f"  {ids[a]} -> {ids[b]} [tooltip={dot_quote(kind)}{attrs}];")
    out.append("}")
    return "\n".join(out) + "\n"


def run_dot(text: str, fmt: str = "svg", timeout: float = 120.0) -> bytes:
    """``dot -T<fmt>`` on ``text``."""
    exe = shutil.which("dot")
    if exe is None:
        raise RenderError("graphviz 'dot' not found on PATH (make setup installs it)")
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}"],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RenderError(f"dot did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderError(f"dot failed: {message[0] if message else done.returncode}")
    return done.stdout
