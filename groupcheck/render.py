"""``groupcheck render FILE``: pictures and an HTML report of any trace file.

A trace whose header names a known configuration (a preset, a mutant scenario, or
``SCENARIO+MUTANT`` as counterexamples are written) and that replays in the model is drawn
from the model's states, with the first violated property; any other trace — a capture of
an external implementation, a partial log — is drawn from its messages, with what the
safety validator reports.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import shutil
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from groupcheck.families import CHECK_WORDING
from groupcheck.validate import validate_safety
from groupcheck.validate.conformance import config_of_header
from groupcheck.validate.files import STDIN, display_name, trace_lines
from groupcheck.validate.safety_mode import observed_text
from invariants.check import Checker
from invariants.liveness import CONVERGENCE, fair_loop
from invariants.snapshot import project
from model import system
from model.status import ConfigError
from model.trace.codec import TraceError, decode_action, parse_event, parse_header
from reports.escape import cut, visible

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
    if header.settings is None and not header.config:
        return None
    try:
        return config_of_header(header)
    except ConfigError:
        return None


DRAWN_EVENTS = 2000
"""At most this many events of a trace are drawn (and told step by step): of a longer
trace the stretch around its first violation — the ``DRAWN_EVENTS`` steps up to it in a
model trace, half before and half from it in an external one — else its first
``DRAWN_EVENTS``; every event is still read and checked, and the report says which
stretch it draws. Rendering takes memory for this many rows, whatever the trace's length
(``bench/run.py render-large``)."""

Reader = Callable[[], AbstractContextManager[Iterator[str]]]
"""Opens the trace's lines again: ``render`` reads a trace twice, never holding it."""


def build(
    file: str,
    lines: Sequence[str] | None = None,
    *,
    limit: int = DRAWN_EVENTS,
    source: str | None = None,
) -> tuple[Any, str, str]:
    """The view of the trace ``file`` (read from ``source`` when given, or from its
    ``lines``), its explanation and a config description; at most ``limit`` events drawn
    (:data:`DRAWN_EVENTS`)."""
    read = _reader(source or file, lines)
    with read() as it:
        first = next(it, None)
    if first is None:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(first, 1)
    config = _config_of(header)
    if config is not None:
        built = _model_view(config, read, limit)
        if built is not None:
            return built[0], built[1], repr(config)
    return _external_view(file, header, first, read, limit)


def _reader(file: str, lines: Sequence[str] | None) -> Reader:
    """How to read the trace again: its ``lines`` when given, else the file."""
    if lines is None:
        return partial(trace_lines, file)

    @contextmanager
    def again() -> Iterator[Iterator[str]]:
        yield iter(lines)

    return again


def _stretch(drawn: int, first: int, total: int, what: str, why: str, limit: int) -> str:
    """The note a report carries when it draws only part of a trace."""
    return (
        f"Drawn: {what} {first}–{first + drawn - 1} of {total} ({why}; at most {limit} "
        "are drawn); the others were read and checked, not drawn."
    )


def _model_view(config: Any, read: Reader, limit: int) -> tuple[Any, str] | None:
    """A model trace replayed in the model, one state at a time, up to its first violated
    property: the view and explanation of at most ``limit`` steps — those up to the
    violation, else the first — or None when the trace does not replay (it is then drawn
    as an external trace)."""
    from reports.render.explain import explain
    from reports.render.report import family_of, property_text
    from reports.render.view import view_of_lasso, view_of_path

    state = system.initial(config)
    checker = Checker()
    snap = project(state)
    found = checker.check_state(state, snap)
    # (step, state before, action, ts): the first steps, and the last ones (those up to
    # a violation).
    head: list[tuple[int, Any, Any, int | None]] = []
    tail: deque[tuple[int, Any, Any, int | None]] = deque(maxlen=limit)
    steps = 0
    low: int | None = None
    try:
        with read() as it:
            header = parse_header(next(it), 1)
            if dict(header.topics) != dict(config.topics) or header.protocol != config.protocol:
                return None
            for n, line in enumerate(it, 2):
                if found:
                    break
                if not line.strip():
                    continue
                event = parse_event(line, n)
                action = decode_action(event, line, n, header)
                if action not in system.enabled(state, config):
                    return None
                new = system.step(state, action, config)
                new_snap = project(new)
                found = checker.check_step(state, action, new, snap, new_snap)
                found += checker.check_state(new, new_snap)
                steps += 1
                if event.ts is not None:
                    low = event.ts if low is None else min(low, event.ts)
                tail.append((steps, state, action, event.ts))
                if len(head) < limit:
                    head.append(tail[-1])
                state, snap = new, new_snap
    except TraceError:
        return None
    items = list(tail) if found else head
    first_index = items[0][0] if items else 1
    states = [pre for _, pre, _, _ in items]
    states.append(state if found or len(items) == steps else _after(items[-1], config))
    actions = [action for _, _, action, _ in items]
    if found:
        v = found[0]
        desc, ref = property_text(v.property, family_of(states[0]))
        # A Convergence violation is a lasso: the fair loop that never converges is drawn
        # and told after the prefix (invariants.liveness.fair_loop).
        lasso = fair_loop(state, config) if v.property == CONVERGENCE.name else None
        if lasso is not None:
            view = view_of_lasso(states, actions, lasso, v.property, v.message)
        else:
            view = view_of_path(
                states,
                actions,
                v.property,
                v.message,
                violation_step=steps,
                first_index=first_index,
            )
        text = explain(
            states,
            actions,
            v.property,
            v.message,
            desc,
            ref,
            first_index=first_index,
            lasso=lasso,
        )
    else:
        view = view_of_path(states, actions, first_index=first_index)
        text = explain(
            states, actions, "no property", "nothing is violated", first_index=first_index
        )
    if low is not None:
        stamps = {step: ts for step, _, _, ts in items if ts is not None}
        rows = [
            dataclasses.replace(row, elapsed_ms=stamps[row.index] - low)
            if row.index in stamps
            else row
            for row in view.rows
        ]
        view = dataclasses.replace(view, rows=rows)
    if len(items) < steps:
        why = "those up to the first violation" if found else "the first ones"
        view.notes.append(_stretch(len(items), first_index, steps, "steps", why, limit))
        text += view.notes[-1] + "\n"
    return view, text


def _after(item: tuple[int, Any, Any, int | None], config: Any) -> Any:
    """The state after a kept step."""
    return system.step(item[1], item[2], config)


def _external_view(
    file: str, header: Any, first: str, read: Reader, limit: int
) -> tuple[Any, str, str]:
    """Any other trace, drawn from its messages with what the safety validator reports
    (read once to validate, once to draw the stretch around the first finding)."""
    from reports.render.explain import explain_events
    from reports.render.view import Window, member_names, renamed, renamed_text, view_of_events

    with read() as it:
        report = validate_safety(file, it)
    if report.error:
        raise ConfigError(report.error)
    where = {v.line: v.property for v in report.violations}
    focus = min(where) if where else None
    window = Window(limit, focus)
    times: dict[int, int] = {}
    low: list[int] = []

    def events(it: Iterator[str]) -> Iterator[tuple[int, Any]]:
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            times.clear()  # only the current event's: the view reads it as it goes
            if event.ts is not None:
                times[n] = event.ts
                low[:] = [min(low[0], event.ts)] if low else [event.ts]
            if not window.full:  # past the window only the earliest timestamp is wanted
                yield n, decode_action(event, line, n)

    with read() as it:
        next(it)
        stream = events(it)
        view = view_of_events(
            stream, where, times, _hand_over_notes(report.handovers), window=window, start_ms=0
        )
        for _ in stream:  # the rest, for the earliest timestamp
            pass

    if low:
        rows = [
            dataclasses.replace(row, elapsed_ms=row.elapsed_ms - low[0])
            if row.elapsed_ms is not None
            else row
            for row in view.rows
        ]
        view = dataclasses.replace(view, rows=rows)
    kept = [event for _, event in window.kept()]
    view = renamed(view, dict(header.topic_names or {}), dict(header.clients or {}))
    findings = [(v.line, v.property, v.message) for v in report.violations]
    text = explain_events(
        kept,
        view,
        findings,
        lambda name: describe(name, view.protocol),
        header.protocol,
        total=report.events,
    )
    if len(kept) < report.events:
        why = "around the first violation" if focus is not None else "the first ones"
        start = view.rows[0].index if view.rows else 1
        view.notes.append(_stretch(len(kept), start, report.events, "events", why, limit))
        text += view.notes[-1] + "\n"
    zombies = [
        f"zombie-window: line {z.line}: {z.property}: {z.message}" for z in report.zombie_windows
    ]
    if report.reasons or report.notes or zombies:
        text += "\n".join([*zombies, *report.reasons, *report.notes]) + "\n"
    topics, clients = dict(header.topic_names or {}), dict(header.clients or {})
    text = renamed_text(text, topics, member_names(clients))
    return view, text, f"header: {cut(first.strip(), HEADER_SHOWN)}"


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
    from reports.render.report import property_text

    own = CHECK_WORDING.get(protocol)  # a classic trace's checks (``safety_classic``)
    if own is not None and name is not None and name in own:
        return own[name]
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
    from reports.publish import check_target, publishing
    from reports.render.dot import RenderError
    from reports.render.html import write_index
    from reports.render.report import dot_sources, write_pictures, write_report

    out = Path(args.out) if args.out else default_out(args.file)
    check_target(out)  # refuse before any work
    try:
        with _spooled(args.file) as source:
            view, text, config_text = build(display_name(args.file), source=source)
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
    for note in view.notes:
        print(visible(note))
    return 0


@contextmanager
def _spooled(file: str) -> Iterator[str]:
    """A path to read ``file`` from, twice: standard input (``-``) is copied to a
    temporary file first (on disk, not in memory)."""
    if file != STDIN:
        yield file
        return
    with tempfile.NamedTemporaryFile(prefix="groupcheck-render-", suffix=".ndjson") as f:
        shutil.copyfileobj(sys.stdin.buffer, f)
        f.flush()
        yield f.name
