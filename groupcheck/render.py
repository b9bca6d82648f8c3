"""``groupcheck render FILE``: pictures and an HTML report of any trace file.

A trace whose header names a known configuration (a preset, a mutant scenario, or
``SCENARIO+MUTANT`` as counterexamples are written) and that replays in the model is drawn
from the model's states, with the first violated property; any other trace — a capture of
an external implementation, a partial log — is drawn from its messages, with what the
safety validator reports.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

FORMATS = ("svg", "png", "html")


def register(sub: Any) -> None:
    """Add the ``render`` command."""
    p = sub.add_parser(
        "render",
        help="draw a trace: sequence chart, ownership timeline, HTML report",
        description=(
            "Draw a trace file (docs/trace-format.md): a sequence chart and an ownership "
            "timeline as SVG or PNG, or an HTML report with both and an explanation. "
            "Exit 0 when written, 2 on a malformed trace or an --out that groupcheck may not "
            "write (a file, or a directory with other content); nothing is left half-written."
        ),
    )
    p.add_argument("file", help="trace file (NDJSON)")
    p.add_argument("--format", choices=FORMATS, default="html", help="output (default html)")
    p.add_argument(
        "--out",
        help="output directory: new, empty, or one groupcheck wrote (default "
        "reports/out/render-<run>, the run the trace belongs to, else the file's name)",
    )
    p.set_defaults(handler=cmd_render)


def _config_of(header: Any) -> Any:
    """The model config (with the rules it ran) a trace header names, or None for a trace
    that is not a model trace (``groupcheck.validate.conformance.config_of_header``)."""
    from groupcheck.validate.conformance import config_of_header
    from model.status import ConfigError

    if header.settings is None and not header.config:
        return None
    try:
        return config_of_header(header)
    except ConfigError:
        return None


def build(file: str, lines: list[str]) -> tuple[Any, str, str]:
    """The view of the trace, its explanation and a config description."""
    from groupcheck.explore.minimise import first_violations
    from groupcheck.validate import validate_safety
    from invariants.liveness import CONVERGENCE, fair_lasso
    from model.status import ConfigError
    from model.trace import read_path
    from model.trace.codec import TraceError, decode_action, parse_event, parse_header
    from reports.render.escape import cut
    from reports.render.explain import explain, explain_events
    from reports.render.report import family_of, property_text
    from reports.render.view import (
        member_names,
        renamed,
        renamed_text,
        view_of_events,
        view_of_lasso,
        view_of_path,
    )

    if not lines:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(lines[0], 1)
    config = _config_of(header)
    if config is not None:
        try:
            path = read_path(config, lines)
        except TraceError:
            path = None
        if path is not None:
            states = list(path.states())
            found = first_violations(config, path.actions)
            if found:
                violations, step = found
                v = violations[0]
                desc, ref = property_text(v.property, family_of(states[0]))
                lasso = fair_lasso(states[step], config) if v.property == CONVERGENCE.name else None
                if lasso is not None:
                    view = view_of_lasso(
                        states[: step + 1], path.actions[:step], lasso, v.property, v.message
                    )
                else:
                    view = view_of_path(
                        states[: step + 1],
                        path.actions[:step],
                        v.property,
                        v.message,
                        violation_step=step,
                    )
                text = explain(
                    states[: step + 1],
                    path.actions[:step],
                    v.property,
                    v.message,
                    desc,
                    ref,
                    lasso=lasso,
                )
            else:
                view = view_of_path(states, path.actions)
                text = explain(states, path.actions, "no property", "nothing is violated")
            return with_times(view, lines), text, repr(config)
    events = []
    times: dict[int, int] = {}
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        event = parse_event(line, n)
        events.append((n, decode_action(event, line, n)))
        if event.ts is not None:
            times[n] = event.ts
    report = validate_safety(file, lines)
    if report.error:  # the lines were all read above: the same reader finds nothing new
        raise ConfigError(report.error)
    where = {v.line: v.property for v in report.violations}
    view = view_of_events(events, where, times, _hand_over_notes(report.handovers))
    view = renamed(view, dict(header.topic_names or {}), dict(header.clients or {}))
    findings = [(v.line, v.property, v.message) for v in report.violations]
    text = explain_events(
        events, view, findings, lambda name: describe(name, view.protocol), header.protocol
    )
    zombies = [
        f"zombie-window: line {z.line}: {z.property}: {z.message}" for z in report.zombie_windows
    ]
    if report.reasons or report.notes or zombies:
        text += "\n".join([*zombies, *report.reasons, *report.notes]) + "\n"
    topics, clients = dict(header.topic_names or {}), dict(header.clients or {})
    text = renamed_text(text, topics, member_names(clients))
    return view, text, f"header: {cut(lines[0].strip(), HEADER_SHOWN)}"


def with_times(view: Any, lines: list[str]) -> Any:
    """A model trace written with timestamps (``simulate --timed``): each row gets its
    step's time since the first event, as the chart's time axis."""
    import dataclasses

    from model.trace.codec import parse_event

    stamps = [parse_event(line, n).ts for n, line in enumerate(lines[1:], 2) if line.strip()]
    known = [t for t in stamps if t is not None]
    if not known:
        return view
    start = min(known)
    rows = [
        dataclasses.replace(row, elapsed_ms=stamps[row.index - 1] - start)
        if row.index - 1 < len(stamps) and stamps[row.index - 1] is not None
        else row
        for row in view.rows
    ]
    return dataclasses.replace(view, rows=rows)


def _hand_over_notes(handovers: list[dict[str, Any]]) -> dict[int, str]:
    """Line → how a hand-over of an unreleased partition looks in time: how long its
    owner had been silent, against the deadline, and its class."""
    notes: dict[int, str] = {}
    for h in handovers:
        if h["line"] in notes or h["classification"] == "unclassified":
            continue
        if h["classification"] == "premature" and not h["owner_known_dead"]:
            # A live owner, its session not expired: no expiry is involved.
            text = f"double assignment: {h['from_name']} alive, no session expiry"
        else:
            text = f"hand-over from {h['from_name']}: {h['classification']}"
        if h["ts"] is not None and h["owner_last_heartbeat_ts"] is not None:
            silent = (h["ts"] - h["owner_last_heartbeat_ts"]) / 1000
            text += f", {silent:.2f} s after its last heartbeat (line "
            text += f"{h['owner_last_heartbeat_line']})"
            if h["deadline_ts"] is not None:
                limit = (h["deadline_ts"] - h["owner_last_heartbeat_ts"]) / 1000
                text += f"; its {h['deadline']} deadline {limit:.2f} s"
        notes[h["line"]] = text
        last = h["owner_last_heartbeat_line"]
        if last is not None and last not in notes:
            notes[last] = f"last heartbeat of {h['from_name']} before line {h['line']}"
    return notes


HEADER_SHOWN = 2000
"""An external trace's header line is shown in the report cut to this many characters."""


def describe(name: str | None, protocol: str = "consumer") -> tuple[str, str]:
    """(description, reference) of a safety-mode check or of a model property, in the
    terms of the trace's ``protocol``: a classic trace's checks are those of
    ``safety_classic`` (same names as the consumer protocol's, other descriptions)."""
    from groupcheck.validate.safety import observed_text
    from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS
    from reports.render.report import property_text

    if protocol == "classic":
        for check in CLASSIC_OBSERVED_CHECKS:
            if check.name == name:
                return check.description, check.reference
    found = observed_text(name)
    return found if found[0] else property_text(name, protocol)


DEFAULT_OUT = Path("reports/out")


def _lists_runs(directory: Path) -> bool:
    """Whether ``directory`` keeps an index of runs: ``reports/out`` always, any other
    directory once it has an ``index.html`` of its own."""
    if (directory / "index.html").is_file():
        return True
    return directory.resolve() == DEFAULT_OUT.resolve()


def default_out(file: str) -> Path:
    """``reports/out/render-<run>``: a trace inside a run directory (``<run>/trace.ndjson``)
    is named after its run, any other file after its own name; when that name is taken by
    the render of another file, a short hash of this file's path is added, so renders of
    different traces never replace each other."""
    from reports.artifacts import run_name
    from reports.publish import marker_info

    source = Path(file).resolve()
    stem = source.stem.removesuffix(".itf")
    generic = stem in {"trace", "capture", "events"}
    label = run_name(f"render-{source.parent.name}" if generic else f"render-{stem}")
    out = DEFAULT_OUT / label
    if out.exists() and marker_info(out).get("source") not in (None, str(source)):
        digest = hashlib.sha256(str(source).encode()).hexdigest()[:8]
        out = DEFAULT_OUT / f"{label}-{digest}"
    return out


def cmd_render(args: argparse.Namespace) -> int:
    from groupcheck.validate.files import trace_lines
    from model.trace.codec import TraceError
    from reports.publish import check_target, publishing
    from reports.render.dot import RenderError
    from reports.render.escape import visible
    from reports.render.html import write_index
    from reports.render.report import dot_sources, write_pictures, write_report

    out = Path(args.out) if args.out else default_out(args.file)
    check_target(out)  # refuse before any work
    try:
        with trace_lines(args.file) as it:
            lines = list(it)
        view, text, config_text = build(args.file, lines)
    except TraceError as e:
        print(f"groupcheck: error: {visible(f'{args.file}:{e}')}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"groupcheck: error: {visible(f'{args.file}: {e.strerror or e}')}", file=sys.stderr)
        return 2
    try:
        with publishing(
            out, command="render", source=str(Path(args.file).resolve()), format=args.format
        ) as tmp:
            if args.format == "html":
                write_report(
                    tmp,
                    title=f"{Path(args.file).name}",
                    describe=lambda name: describe(name, view.protocol),
                    view=view,
                    explanation=text,
                    config_text=config_text,
                    reproduce=f"groupcheck render {args.file}",
                )
                (tmp / "explanation.txt").write_text(text, encoding="utf-8")
            else:
                write_pictures(tmp, dot_sources(view), args.format)
    except RenderError as e:
        print(f"groupcheck: error: {visible(str(e))}", file=sys.stderr)
        return 2
    if args.format == "html" and _lists_runs(out.parent):
        write_index(out.parent)
    print(visible(f"written to {out}" + ("/index.html" if args.format == "html" else "")))
    return 0
