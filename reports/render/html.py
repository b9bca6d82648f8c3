"""The HTML report of a run (``reports/out/<run>/index.html``) and the index of runs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reports.escape import html_text
from reports.publish import GENERATOR, write_file_atomic

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
pre { background: #f6f8fa; padding: 1em; overflow-x: auto; white-space: pre-wrap; }
.violation { color: #b00020; font-weight: bold; }
.figure { overflow-x: auto; border: 1px solid #ddd; padding: 0.5em; }
table.runs td, table.runs th { padding: 0.3em 0.8em; border-bottom: 1px solid #ddd; }
code { background: #f6f8fa; padding: 0.1em 0.3em; }
"""


@dataclass(frozen=True)
class Figure:
    """A picture of the report: its title and its SVG text."""

    title: str
    svg: str
    caption: str = ""


def _svg_body(svg: str) -> str:
    """The ``<svg>`` element of a graphviz SVG file (without the XML prologue)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def report_html(
    title: str,
    violated: str | None,
    message: str | None,
    description: str,
    reference: str,
    explanation: str,
    figures: Iterable[Figure],
    config: str,
    reproduce: str,
) -> str:
    """One run's page. Every text argument is escaped; SVGs come from graphviz, whose
    labels were escaped when the DOT text was written."""
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="en"><head><meta charset="utf-8">{GENERATOR}',
        f"<title>{html_text(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html_text(title)}</h1>",
    ]
    if violated:
        parts.append(
            f'<p class="violation" id="violated">Violated: {html_text(violated)}</p>'
            f"<p>{html_text(message or '')}</p>"
        )
        if description:
            parts.append(
                f"<p><b>{html_text(violated)}</b>: {html_text(description)}"
                + (f" <i>({html_text(reference)})</i>" if reference else "")
                + "</p>"
            )
    else:
        parts.append('<p id="violated">No property violated.</p>')
    parts.append(f"<h2>Explanation</h2><pre>{html_text(explanation)}</pre>")
    for fig in figures:
        parts.append(f"<h2>{html_text(fig.title)}</h2>")
        if fig.caption:
            parts.append(f"<p>{html_text(fig.caption)}</p>")
        parts.append(f'<div class="figure">{_svg_body(fig.svg)}</div>')
    parts.append(f"<h2>Reproduce</h2><pre>{html_text(reproduce)}</pre>")
    parts.append(f"<h2>Configuration</h2><pre>{html_text(config)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def index_html(out: Path) -> str:
    """The list of runs under ``out`` that have a report."""
    rows = []
    for run in sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (run / "index.html").is_file():
            name = html_text(run.name)
            rows.append(f'<tr><td><a href="{name}/index.html">{name}</a></td></tr>')
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR}'
        f"<title>groupcheck runs</title><style>{STYLE}</style></head><body>"
        '<h1>groupcheck runs</h1><table class="runs"><tr><th>run</th></tr>'
        + "".join(rows)
        + "</table></body></html>\n"
    )


def write_index(out: Path) -> Path | None:
    """Rewrite ``out/index.html`` atomically — unless an ``index.html`` that groupcheck did
    not write is there (then nothing is written and None is returned)."""
    target = out / "index.html"
    if target.exists() and not _ours(target):
        return None
    write_file_atomic(target, index_html(out))
    return target


def _ours(page: Path) -> bool:
    try:
        with page.open(encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return GENERATOR in head
