"""``groupcheck render FILE``: pictures and an HTML report of any trace file.

A trace whose header names a known configuration (a preset, a mutant scenario, or
``SCENARIO+MUTANT`` as counterexamples are written) and that replays in the model is drawn
from the model's states, with the first violated property; any other trace — a capture of
an external implementation, a partial log — is drawn from its messages, with what the
safety validator reports.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
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
            "Exit 0 when written, 2 on a malformed trace (nothing is left in --out)."
        ),
    )
    p.add_argument("file", help="trace file (NDJSON)")
    p.add_argument("--format", choices=FORMATS, default="html", help="output (default html)")
    p.add_argument("--out", help="output directory (default reports/out/render-<file stem>)")
    p.set_defaults(handler=cmd_render)


def _config_named(name: str | None) -> Any:
    from groupcheck.mutants import MUTANTS
    from model.presets import PRESETS

    if not name:
        return None
    scenario, _, mutant = name.partition("+")
    if mutant:
        m = MUTANTS.get(mutant)
        return m.mutated_config() if m is not None and m.config.name == scenario else None
    if scenario in PRESETS:
        return PRESETS[scenario]
    for m in MUTANTS.values():
        if m.config.name == scenario:
            return m.config
    return None


def build(file: str, lines: list[str]) -> tuple[Any, str, str]:
    """The view of the trace, its explanation and a config description."""
    from groupcheck.explore.minimise import first_violations
    from groupcheck.validate import validate_safety
    from model.trace import read_path
    from model.trace.codec import TraceError, decode_action, parse_event, parse_header
    from reports.render.explain import explain, explain_events
    from reports.render.report import property_text
    from reports.render.view import view_of_events, view_of_path

    if not lines:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(lines[0], 1)
    config = _config_named(header.config)
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
                view = view_of_path(
                    states[: step + 1],
                    path.actions[:step],
                    v.property,
                    v.message,
                    violation_step=step,
                )
                desc, ref = property_text(v.property)
                text = explain(
                    states[: step + 1], path.actions[:step], v.property, v.message, desc, ref
                )
            else:
                view = view_of_path(states, path.actions)
                text = explain(states, path.actions, "no property", "nothing is violated")
            return view, text, repr(config)
    events = []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        events.append((n, decode_action(parse_event(line, n), line, n)))
    report = validate_safety(file, lines)
    if report.error:
        raise TraceError(1, 1, report.error)
    where = {v.line: v.property for v in report.violations}
    view = view_of_events(events, where)
    findings = [(v.line, v.property, v.message) for v in report.violations]
    text = explain_events(events, view, findings, property_text, header.protocol)
    if report.notes:
        text += "\n".join(report.notes) + "\n"
    return view, text, f"header: {lines[0].strip()}"


DEFAULT_OUT = Path("reports/out")


def _lists_runs(directory: Path) -> bool:
    """Whether ``directory`` keeps an index of runs: ``reports/out`` always, any other
    directory once it has an ``index.html`` of its own."""
    if (directory / "index.html").is_file():
        return True
    return directory.resolve() == DEFAULT_OUT.resolve()


def cmd_render(args: argparse.Namespace) -> int:
    from model.trace.codec import TraceError
    from reports.render.dot import RenderError
    from reports.render.html import write_index
    from reports.render.report import dot_sources, write_pictures, write_report

    try:
        with open(args.file, encoding="utf-8", errors="strict") as f:
            lines = [line.rstrip("\n") for line in f]
    except UnicodeDecodeError as e:
        print(f"groupcheck: error: {args.file}: not UTF-8 ({e.reason})", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"groupcheck: error: {args.file}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        view, text, config_text = build(args.file, lines)
    except TraceError as e:
        message = str(e) if str(e).startswith(args.file) else f"{args.file}:{e}"
        print(f"groupcheck: error: {message}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else DEFAULT_OUT / f"render-{Path(args.file).stem}"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".partial-"))
    try:
        if args.format == "html":
            write_report(
                tmp,
                title=f"{Path(args.file).name}",
                view=view,
                explanation=text,
                config_text=config_text,
                reproduce=f"groupcheck render {args.file}",
            )
            (tmp / "explanation.txt").write_text(text, encoding="utf-8")
        else:
            write_pictures(tmp, dot_sources(view), args.format)
        if out.exists():
            shutil.rmtree(out)
        tmp.replace(out)
        if args.format == "html" and _lists_runs(out.parent):
            write_index(out.parent)
    except RenderError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(f"written to {out}" + ("/index.html" if args.format == "html" else ""))
    return 0
