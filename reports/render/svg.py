"""Hand-written SVG charts for the pipeline and timed reports (``groupcheck.pipeline.report``,
``groupcheck.timed.cli``): horizontal bars, histograms and lines.

Plain strings, no plotting library: the report is one self-contained HTML file.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

FONT = "font-family:system-ui,sans-serif;font-size:12px"
BAR = "#4477aa"
ALERT = "#cc3311"


def bars(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    unit: str = "",
    highlight: frozenset[str] = frozenset(),
    width: int = 720,
    label_width: int = 300,
) -> str:
    """A horizontal bar chart, one bar per ``(label, value)``; highlighted labels in red."""
    row = 18
    top = 28
    height = top + row * max(len(items), 1) + 10
    peak = max((v for _, v in items), default=0) or 1
    span = width - label_width - 90
    fits = max(8, (label_width - 8) // 7)  # characters of a 12px label that fit its column
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" style="{FONT}">',
        f'<text x="0" y="16" style="font-weight:bold">{escape(title)}</text>',
    ]
    if not items:
        out.append(f'<text x="0" y="{top + 12}">(nothing to show)</text>')
    for i, (label, value) in enumerate(items):
        y = top + i * row
        color = ALERT if label in highlight else BAR
        w = max(span * value / peak, 0 if value == 0 else 1)
        shown = label if len(label) <= fits else label[: fits - 1] + "…"
        out.append(
            f'<text x="{label_width - 6}" y="{y + 12}" text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(shown)}</text>"
        )
        out.append(
            f'<rect x="{label_width}" y="{y + 2}" width="{w:.1f}" height="{row - 5}" '
            f'fill="{color}"/>'
        )
        text = f"{value:g}{unit}"
        out.append(f'<text x="{label_width + w + 4:.1f}" y="{y + 12}">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def histogram(
    counts: Sequence[tuple[int, int]],
    *,
    title: str,
    xlabel: str,
    width: int = 340,
    height: int = 150,
    bins: int = 20,
) -> str:
    """A histogram of integer observations given as ``(value, how many)`` pairs, in at
    most ``bins`` equal-width bins."""
    pad_l, pad_b, pad_t = 40, 30, 24
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" style="{FONT}">',
        f'<text x="0" y="14" style="font-weight:bold">{escape(title)}</text>',
    ]
    if not counts:
        out.append(f'<text x="{pad_l}" y="{pad_t + 20}">(no converged runs)</text></svg>')
        return "\n".join(out)
    lo = min(v for v, _ in counts)
    hi = max(v for v, _ in counts)
    step = max(1, -(-(hi - lo + 1) // bins))
    nbins = -(-(hi - lo + 1) // step)
    tally = [0] * nbins
    for value, n in counts:
        tally[(value - lo) // step] += n
    peak = max(tally) or 1
    plot_w = width - pad_l - 10
    plot_h = height - pad_t - pad_b
    bw = plot_w / nbins
    for i, n in enumerate(tally):
        h = plot_h * n / peak
        x = pad_l + i * bw
        low = lo + i * step
        span = f"{low}" if step == 1 else f"{low}–{low + step - 1}"
        out.append(
            f'<rect x="{x:.1f}" y="{pad_t + plot_h - h:.1f}" width="{max(bw - 1, 1):.1f}" '
            f'height="{h:.1f}" fill="{BAR}"><title>{escape(span)}: {n}</title></rect>'
        )
    base = pad_t + plot_h
    out.append(f'<line x1="{pad_l}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#333"/>')
    out.append(f'<text x="{pad_l}" y="{base + 14}">{lo}</text>')
    out.append(f'<text x="{width - 10}" y="{base + 14}" text-anchor="end">{hi}</text>')
    out.append(
        f'<text x="{pad_l + plot_w / 2:.0f}" y="{base + 27}" text-anchor="middle">'
        f"{escape(xlabel)}</text>"
    )
    out.append(f'<text x="{pad_l - 4}" y="{pad_t + 10}" text-anchor="end">{peak}</text>')
    out.append("</svg>")
    return "\n".join(out)


PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")


def lines(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    width: int = 720,
    height: int = 260,
) -> str:
    """A line chart: one polyline with dots per ``(name, [(x, y), …])``, a legend on the
    right; the x axis is the sorted union of the series' x values, equally spaced (group
    sizes, say, are categories more than a scale)."""
    pad_l, pad_r, pad_t, pad_b = 60, 260, 26, 34
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" style="{FONT}">',
        f'<text x="0" y="14" style="font-weight:bold">{escape(title)}</text>',
    ]
    xs = sorted({x for _, points in series for x, _ in points})
    if not xs:
        out.append(f'<text x="{pad_l}" y="{pad_t + 20}">(nothing to show)</text></svg>')
        return "\n".join(out)
    peak = max((y for _, points in series for _, y in points), default=0) or 1
    plot_w = width - pad_l - pad_r
    plot_h = height - pad_t - pad_b
    base = pad_t + plot_h

    def px(x: float) -> float:
        return pad_l + (plot_w * xs.index(x) / (len(xs) - 1) if len(xs) > 1 else plot_w / 2)

    def py(y: float) -> float:
        return base - plot_h * y / peak

    out.append(f'<line x1="{pad_l}" y1="{base}" x2="{pad_l + plot_w}" y2="{base}" stroke="#333"/>')
    out.append(f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{base}" stroke="#333"/>')
    out.append(f'<text x="{pad_l - 4}" y="{pad_t + 4}" text-anchor="end">{peak:g}</text>')
    out.append(f'<text x="{pad_l - 4}" y="{base}" text-anchor="end">0</text>')
    out.append(
        f'<text x="12" y="{pad_t + plot_h / 2:.0f}" transform="rotate(-90 12 '
        f'{pad_t + plot_h / 2:.0f})" text-anchor="middle">{escape(ylabel)}</text>'
    )
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{base + 14}" text-anchor="middle">{x:g}</text>')
    out.append(
        f'<text x="{pad_l + plot_w / 2:.0f}" y="{base + 29}" text-anchor="middle">'
        f"{escape(xlabel)}</text>"
    )
    for k, (name, points) in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        ordered = sorted(points)
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in ordered)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in ordered:
            out.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(name)}: {x:g} → {y:g}</title></circle>"
            )
        ly = pad_t + 4 + 16 * k
        lx = pad_l + plot_w + 14
        out.append(
            f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{ly + 9}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)
