"""``groupcheck pipeline report DIR``: Parquet tables and an HTML summary with SVG plots.

The job's parts are already reduced data (one row per run or per trace), so the report is
made on the driver with pyarrow, without a JVM. It is published with
``reports.publish.publishing``: built in a hidden directory next to ``DIR/report/`` and moved
into place whole, replacing a report groupcheck wrote before and refusing a ``DIR/report``
it did not write. The page opens with the job's result and its reasons
(``groupcheck/pipeline/verdict.py``).

Sweep (``explore``) tables:

- ``cells.parquet``: per grid cell: runs, violations, errors, converged runs, convergence
  steps (p50, p90, max), mean steps, revocations, longest wait on unreleased partitions.
- ``violations.parquet``: per cell and property: runs violating it, and the shortest
  minimised counterexample (its seed and path code, for ``groupcheck replay``).
- ``convergence.parquet``: per cell, how many runs converged in how many fair steps.
- ``coverage.parquet``: every action kind of the vocabulary (``model/actions.py``): runs
  that took it and how often; kinds never taken have 0.
- ``witnesses.parquet``: runs that hit each ``SOMETIMES`` witness.

Timed sweep (``timed``) table: ``timed_cells.parquet``, per cell: runs, unfinished runs,
errors, rebalance time (median and worst over the finished runs), heartbeat latency,
coordinator and executor utilisation, assignor runs per second (means over the runs); the
page shows rebalance time per assignment interval × group size, with and without offload,
as a table and a line chart.

Corpus (``validate``) tables: ``traces.parquet`` (one verdict per trace),
``findings.parquet`` (one row per violation), ``by_property.parquet``.
"""

from __future__ import annotations

import datetime
import json
import statistics
from html import escape
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from groupcheck.pipeline.store import load_complete, read_parts
from groupcheck.pipeline.timed_runs import timed_verdict
from groupcheck.pipeline.verdict import (
    explore_verdict,
    required_of_cell,
    trace_verdict,
    validate_verdict,
)
from invariants.liveness import WITNESSES
from model.actions import ACTION_TYPES
from reports.publish import MARKER, owned, publishing
from reports.render import svg

MAX_BARS = 40
"""Rows of the violations chart (cell · property): the ones with the most runs."""
MAX_HISTOGRAMS = 24
"""Cells that get their own convergence histogram (the first ones)."""
MAX_TRACE_ROWS = 500
"""Traces listed in the corpus report's table of traces that are not valid."""

REPORT_DIR = "report"

REPORT_FILES = frozenset(
    {
        "report.html",
        *(
            f"{name}.parquet"
            for name in (
                "cells",
                "violations",
                "convergence",
                "coverage",
                "witnesses",
                "traces",
                "findings",
                "by_property",
                "timed_cells",
            )
        ),
    }
)
"""The files of a report directory."""


def build_report(out: Path) -> Path:
    """Write ``out/report/`` for a finished job; returns the HTML file's path."""
    return write_report(out)[0]


def write_report(out: Path) -> tuple[Path, dict[str, Any]]:
    """Write ``out/report/`` for a finished job; the HTML file's path and the job's
    verdict (``result``, ``reasons`` and the counts behind them)."""
    manifest, success = load_complete(out)
    count = len(manifest["parts"])
    final = out / REPORT_DIR
    _adopt_unmarked_report(final)
    info = {"command": "pipeline report", "job": manifest["kind"], "plan": manifest["fingerprint"]}
    with publishing(final, **info) as tmp:
        table = read_parts(out, count)
        if manifest["kind"] == "explore":
            tables, html, verdict = _explore(manifest, success, table)
        elif manifest["kind"] == "timed":
            tables, html, verdict = _timed(table)
        else:
            tables, html, verdict = _validate(manifest, success, table)
        for name, t in tables.items():
            pq.write_table(t, tmp / f"{name}.parquet", compression="zstd")
        (tmp / "report.html").write_text(html, encoding="utf-8")
    return final / "report.html", verdict


def _adopt_unmarked_report(final: Path) -> None:
    """A report directory written before reports carried ``reports.publish.MARKER`` holds
    nothing but report files: mark it as groupcheck's, so that it is replaced rather than
    refused. Anything else under that name is left for ``publishing`` to refuse."""
    if final.is_symlink() or not final.is_dir() or owned(final):
        return
    entries = list(final.iterdir())
    names = {e.name for e in entries}
    if (
        "report.html" in names
        and names <= REPORT_FILES
        and all(e.is_file() and not e.is_symlink() for e in entries)
    ):
        (final / MARKER).write_text(
            json.dumps({"command": "pipeline report", "adopted": True}) + "\n", encoding="utf-8"
        )


def _verdict_html(verdict: dict[str, Any]) -> str:
    """The job's result and its reasons, at the top of the page."""
    colour = {"ok": "#2a7", "violation": "#c22", "inconclusive": "#b70"}.get(
        verdict["result"], "#000"
    )
    reasons = "".join(f"<li>{escape(r)}</li>" for r in verdict["reasons"])
    return f'<p>Result: <b style="color:{colour}">{escape(verdict["result"])}</b></p>' + (
        f"<ul>{reasons}</ul>" if reasons else ""
    )


# --------------------------------------------------------------------------- sweeps


def _histogram_rows(table: pa.Table) -> dict[int, list[tuple[int, int]]]:
    """cell → sorted (convergence steps, runs) pairs, converged runs only."""
    conv = table.filter(pc.is_valid(table["convergence_steps"]))
    grouped = conv.group_by(["cell", "convergence_steps"]).aggregate([("run", "count")])
    out: dict[int, list[tuple[int, int]]] = {}
    for cell, steps, n in zip(
        grouped["cell"].to_pylist(),
        grouped["convergence_steps"].to_pylist(),
        grouped["run_count"].to_pylist(),
        strict=True,
    ):
        out.setdefault(cell, []).append((steps, n))
    for pairs in out.values():
        pairs.sort()
    return out


def _quantile(pairs: list[tuple[int, int]], q: float) -> int | None:
    """The exact ``q``-quantile (lower) of a histogram."""
    total = sum(n for _, n in pairs)
    if not total:
        return None
    rank = max(1, -(-int(q * total * 1000) // 1000))
    seen = 0
    for value, n in pairs:
        seen += n
        if seen >= rank:
            return value
    return pairs[-1][0]


def _explore(
    manifest: dict[str, Any], success: dict[str, Any], runs: pa.Table
) -> tuple[dict[str, pa.Table], str, dict[str, Any]]:
    cells_meta = {c["index"]: c for c in manifest["plan"]["cells"]}
    required = {i: required_of_cell(c) for i, c in cells_meta.items()}
    verdict = explore_verdict(runs, {i: c["label"] for i, c in cells_meta.items()}, required)
    hist = _histogram_rows(runs)
    violated = pc.is_valid(runs["violation"])
    errored = pc.is_valid(runs["error"])
    per_cell = (
        runs.append_column("is_violation", pc.cast(violated, pa.int64()))
        .append_column("is_error", pc.cast(errored, pa.int64()))
        .append_column("is_converged", pc.cast(pc.fill_null(runs["converged"], False), pa.int64()))
        .group_by("cell")
        .aggregate(
            [
                ("run", "count"),
                ("is_violation", "sum"),
                ("is_error", "sum"),
                ("is_converged", "sum"),
                ("steps", "mean"),
                ("revocations", "mean"),
                ("longest_unreleased_wait", "max"),
            ]
        )
        .sort_by("cell")
    )
    cell_ids = per_cell["cell"].to_pylist()
    cells = pa.table(
        {
            "cell": pa.array(cell_ids, pa.int32()),
            "config": [cells_meta[c]["label"] for c in cell_ids],
            "preset": [cells_meta[c]["preset"] for c in cell_ids],
            "mutant": pa.array([cells_meta[c]["mutant"] for c in cell_ids], pa.string()),
            "engine": [cells_meta[c]["engine"] for c in cell_ids],
            "options": [json.dumps(cells_meta[c]["options"], sort_keys=True) for c in cell_ids],
            "runs": per_cell["run_count"],
            "violations": per_cell["is_violation_sum"],
            "errors": per_cell["is_error_sum"],
            "converged": per_cell["is_converged_sum"],
            "convergence_p50": pa.array(
                [_quantile(hist.get(c, []), 0.5) for c in cell_ids], pa.int32()
            ),
            "convergence_p90": pa.array(
                [_quantile(hist.get(c, []), 0.9) for c in cell_ids], pa.int32()
            ),
            "convergence_max": pa.array(
                [max((v for v, _ in hist.get(c, [])), default=None) for c in cell_ids], pa.int32()
            ),
            "mean_steps": per_cell["steps_mean"],
            "mean_revocations": per_cell["revocations_mean"],
            "longest_unreleased_wait": per_cell["longest_unreleased_wait_max"],
        }
    )

    bad = runs.filter(violated)
    violations_rows: list[dict[str, Any]] = []
    if bad.num_rows:
        grouped = bad.group_by(["cell", "violation"]).aggregate([("run", "count")])
        best: dict[tuple[int, str], dict[str, Any]] = {}
        for r in bad.select(
            ["cell", "violation", "seed", "path_code", "path_length", "message"]
        ).to_pylist():
            key = (r["cell"], r["violation"])
            cur = best.get(key)
            if cur is None or (r["path_length"] or 0, r["seed"]) < (
                cur["path_length"] or 0,
                cur["seed"],
            ):
                best[key] = r
        for cell, prop, n in zip(
            grouped["cell"].to_pylist(),
            grouped["violation"].to_pylist(),
            grouped["run_count"].to_pylist(),
            strict=True,
        ):
            b = best[(cell, prop)]
            violations_rows.append(
                {
                    "cell": cell,
                    "config": cells_meta[cell]["label"],
                    "property": prop,
                    "runs": n,
                    "shortest_seed": b["seed"],
                    "shortest_length": b["path_length"],
                    "shortest_path_code": b["path_code"],
                    "message": b["message"],
                }
            )
        violations_rows.sort(key=lambda r: (r["cell"], r["property"]))
    violations = pa.Table.from_pylist(
        violations_rows,
        schema=pa.schema(
            [
                ("cell", pa.int32()),
                ("config", pa.string()),
                ("property", pa.string()),
                ("runs", pa.int64()),
                ("shortest_seed", pa.int64()),
                ("shortest_length", pa.int32()),
                ("shortest_path_code", pa.string()),
                ("message", pa.string()),
            ]
        ),
    )

    conv_rows = [
        {"cell": c, "config": cells_meta[c]["label"], "convergence_steps": v, "runs": n}
        for c in sorted(hist)
        for v, n in hist[c]
    ]
    convergence = pa.Table.from_pylist(
        conv_rows,
        schema=pa.schema(
            [
                ("cell", pa.int32()),
                ("config", pa.string()),
                ("convergence_steps", pa.int32()),
                ("runs", pa.int64()),
            ]
        ),
    )

    flat = pc.list_flatten(runs["actions"])
    kinds = pc.struct_field(flat, "kind")
    counts = pc.struct_field(flat, "count")
    taken = (
        pa.table({"kind": kinds, "count": counts})
        .group_by("kind")
        .aggregate([("count", "count"), ("count", "sum")])
    )
    taken_map = {
        k: (r, t)
        for k, r, t in zip(
            taken["kind"].to_pylist(),
            taken["count_count"].to_pylist(),
            taken["count_sum"].to_pylist(),
            strict=True,
        )
    }
    vocabulary = [t.__name__ for t in ACTION_TYPES]
    coverage = pa.table(
        {
            "kind": vocabulary,
            "perturbation": [bool(t.PERTURBATION) for t in ACTION_TYPES],
            "runs": pa.array([taken_map.get(k, (0, 0))[0] for k in vocabulary], pa.int64()),
            "taken": pa.array([taken_map.get(k, (0, 0))[1] for k in vocabulary], pa.int64()),
        }
    )

    wflat = pc.list_flatten(runs["witnesses"])
    wcount = pc.value_counts(wflat).to_pylist() if len(wflat) else []
    wmap = {d["values"]: d["counts"] for d in wcount}
    witness_names = [w.prop.name for w in WITNESSES]
    witnesses = pa.table(
        {
            "witness": witness_names,
            "runs": pa.array([wmap.get(n, 0) for n in witness_names], pa.int64()),
        }
    )

    tables = {
        "cells": cells,
        "violations": violations,
        "convergence": convergence,
        "coverage": coverage,
        "witnesses": witnesses,
    }
    html = _explore_html(manifest, verdict, tables, hist, cells_meta, runs.num_rows)
    return tables, html, verdict


def _explore_html(
    manifest: dict[str, Any],
    verdict: dict[str, Any],
    tables: dict[str, pa.Table],
    hist: dict[int, list[tuple[int, int]]],
    cells_meta: dict[int, dict[str, Any]],
    total: int,
) -> str:
    violations = tables["violations"].to_pylist()
    coverage = tables["coverage"].to_pylist()
    never = [r["kind"] for r in coverage if r["runs"] == 0]
    vio_runs = sum(r["runs"] for r in violations)
    top = sorted(range(len(violations)), key=lambda i: -violations[i]["runs"])[:MAX_BARS]
    charted = [violations[i] for i in sorted(top)]  # the most frequent, in cell order
    errors = int(pc.sum(tables["cells"]["errors"]).as_py() or 0)
    seeds = manifest["plan"]["seeds"]
    per_cell = seeds["count"] if isinstance(seeds, dict) else len(seeds)
    parts = [
        _head("groupcheck pipeline: exploration sweep"),
        _verdict_html(verdict),
        f"<p>{total} runs over {len(cells_meta)} grid cells ({per_cell} seeds each), "
        f"{len(manifest['parts'])} parts, plan {escape(manifest['fingerprint'])}. "
        f"Runs with a violation: <b>{vio_runs}</b>; "
        f"runs that raised an error: <b>{errors}</b>.</p>",
        "<h2>Violations by property and config</h2>",
        svg.bars(
            [(f"{r['config']} · {r['property']}", r["runs"]) for r in charted],
            title="runs violating each property, per grid cell",
        ),
        _more(
            len(charted),
            len(violations),
            "rows (cell · property) with the most runs are drawn",
            "the table below and <code>violations.parquet</code> list every row",
        ),
        _table(
            ["config", "property", "runs", "shortest", "seed", "path code", "message"],
            [
                [
                    r["config"],
                    r["property"],
                    r["runs"],
                    r["shortest_length"],
                    r["shortest_seed"],
                    f"<code>{escape(r['shortest_path_code'] or '')}</code>",
                    r["message"],
                ]
                for r in violations
            ],
            raw={5},
        )
        if violations
        else "<p>No property was violated.</p>",
        "<p>Replay one: <code>groupcheck replay --preset PRESET [--mutant M] --path CODE</code> "
        "(options other than the preset's are in <code>violations.parquet</code>'s cell).</p>"
        if violations
        else "",
        "<h2>Convergence steps</h2>",
        "<p>Fair progress steps, once the run's perturbations are over, until every member "
        "is STABLE at the target epoch.</p>",
        svg.histogram(
            [p for pairs in hist.values() for p in pairs],
            title="all cells",
            xlabel="steps to convergence",
            width=700,
            height=180,
            bins=30,
        ),
        "<div>",
        *(
            svg.histogram(hist.get(c, []), title=cells_meta[c]["label"][:48], xlabel="steps")
            for c in sorted(cells_meta)[:MAX_HISTOGRAMS]
        ),
        "</div>",
        _more(
            min(len(cells_meta), MAX_HISTOGRAMS),
            len(cells_meta),
            "cells have a histogram",
            "the table below has every cell's p50, p90 and maximum, "
            "<code>convergence.parquet</code> every cell's counts",
        ),
        _table(
            [
                "config",
                "runs",
                "converged",
                "p50",
                "p90",
                "max",
                "mean steps",
                "mean revocations",
                "longest unreleased wait",
            ],
            [
                [
                    r["config"],
                    r["runs"],
                    r["converged"],
                    r["convergence_p50"],
                    r["convergence_p90"],
                    r["convergence_max"],
                    f"{r['mean_steps']:.1f}",
                    f"{r['mean_revocations']:.2f}",
                    r["longest_unreleased_wait"],
                ]
                for r in tables["cells"].to_pylist()
            ],
        ),
        "<h2>Action coverage</h2>",
        svg.bars(
            [(r["kind"], round(100 * r["runs"] / max(total, 1), 1)) for r in coverage],
            title="share of runs that took each action kind (red: never taken)",
            unit=" %",
            highlight=frozenset(never),
            label_width=200,
        ),
        f"<p>Never taken: <b>{escape(', '.join(never))}</b>.</p>"
        if never
        else "<p>Every action kind of the vocabulary was taken.</p>",
        "<h2>Witnesses</h2>",
        _table(
            ["witness", "runs"],
            [[r["witness"], r["runs"]] for r in tables["witnesses"].to_pylist()],
        ),
        _foot(),
    ]
    return "\n".join(parts)


# --------------------------------------------------------------------------- corpora


def _validate(
    manifest: dict[str, Any], success: dict[str, Any], traces: pa.Table
) -> tuple[dict[str, pa.Table], str, dict[str, Any]]:
    verdict = validate_verdict(traces)
    lengths = pc.list_value_length(traces["violations"])
    results = pa.array(
        [
            trace_verdict(r, n or ())
            for r, n in zip(traces["result"].to_pylist(), traces["notes"].to_pylist(), strict=True)
        ],
        pa.string(),
    )
    verdicts = pa.table(
        {
            "trace": traces["trace"],
            "bytes": traces["bytes"],
            "mode": traces["mode"],
            "result": results,
            "events": traces["events"],
            "violations": pc.cast(lengths, pa.int64()),
            "error": traces["error"],
            "notes": traces["notes"],
        }
    )
    parents = pc.list_parent_indices(traces["violations"])
    flat = pc.list_flatten(traces["violations"])
    findings = pa.table(
        {
            "trace": pc.take(traces["trace"], parents),
            "line": pc.struct_field(flat, "line"),
            "property": pc.struct_field(flat, "property"),
            "message": pc.struct_field(flat, "message"),
        }
    )
    if findings.num_rows:
        by = findings.group_by("property").aggregate(
            [("trace", "count_distinct"), ("line", "count")]
        )
        by_property = pa.table(
            {
                "property": by["property"],
                "traces": by["trace_count_distinct"],
                "findings": by["line_count"],
            }
        ).sort_by([("traces", "descending"), ("property", "ascending")])
    else:
        by_property = pa.table(
            {
                "property": pa.array([], pa.string()),
                "traces": pa.array([], pa.int64()),
                "findings": pa.array([], pa.int64()),
            }
        )
    result_counts = {
        "ok": verdict["ok"],
        "violation": verdict["with_violations"],
        "inconclusive": verdict["inconclusive"],
        "malformed": verdict["malformed"],
    }
    tables = {"traces": verdicts, "findings": findings, "by_property": by_property}
    bad = verdicts.filter(pc.not_equal(verdicts["result"], "ok")).to_pylist()
    plan = manifest["plan"]
    html = "\n".join(
        [
            _head("groupcheck pipeline: trace-corpus validation"),
            _verdict_html(verdict),
            f"<p>{traces.num_rows} traces, {plan['bytes']} bytes, {plan['mode']} mode, "
            f"{int(pc.sum(traces['events']).as_py() or 0)} events validated.</p>",
            svg.bars(
                list(result_counts.items()),
                title="traces by verdict",
                highlight=frozenset({"violation", "inconclusive", "malformed"}),
                label_width=120,
            ),
            "<h2>Violations by property</h2>",
            svg.bars(
                [(r["property"], r["traces"]) for r in by_property.to_pylist()],
                title="traces violating each property",
                label_width=240,
            ),
            "<h2>Traces that are not ok</h2>",
            _table(
                ["trace", "result", "events", "violations", "error / first finding / note"],
                [
                    [
                        r["trace"],
                        r["result"],
                        r["events"],
                        r["violations"],
                        r["error"]
                        or _first_finding(findings, r["trace"])
                        or "; ".join(r["notes"] or ()),
                    ]
                    for r in bad[:MAX_TRACE_ROWS]
                ],
            )
            if bad
            else "<p>Every trace is ok.</p>",
            _more(
                min(len(bad), MAX_TRACE_ROWS),
                len(bad),
                "traces that are not ok are listed",
                "<code>traces.parquet</code> and <code>findings.parquet</code> have them all",
            ),
            _foot(),
        ]
    )
    return tables, html, verdict


# --------------------------------------------------------------------------- timed sweeps

TIMED_CELL_KEYS = (
    "cell",
    "config",
    "scenario",
    "members",
    "assignment_interval_ms",
    "assignor_offload",
    "heartbeat_interval_ms",
    "assignor_ms",
    "executor_threads",
    "groups",
)
TIMED_MEANS = (
    "latency_mean_ms",
    "coordinator_utilisation",
    "executor_utilisation",
    "heartbeats_per_second",
    "assignor_runs_per_second",
    "assignor_wait_mean_ms",
)


def timed_cells(runs: pa.Table) -> list[dict[str, Any]]:
    """Per cell of a timed sweep: its axes, runs, unfinished runs, errors, the median and
    worst rebalance time over the finished runs, the largest heartbeat latency, and the
    means of :data:`TIMED_MEANS` (None where no run measured them)."""
    by_cell: dict[int, list[dict[str, Any]]] = {}
    for r in runs.sort_by([("cell", "ascending"), ("seed", "ascending")]).to_pylist():
        by_cell.setdefault(r["cell"], []).append(r)
    out = []
    for _, rows in sorted(by_cell.items()):
        first = rows[0]
        times = [r["rebalance_ms"] for r in rows if r["rebalance_ms"] is not None]
        row = {k: first[k] for k in TIMED_CELL_KEYS}
        row.update(
            runs=len(rows),
            unfinished=sum(1 for r in rows if r["unfinished"]),
            errors=sum(1 for r in rows if r["error"] is not None),
            rebalance_ms_median=statistics.median(times) if times else None,
            rebalance_ms_max=max(times) if times else None,
            latency_max_ms=max(
                (r["latency_max_ms"] for r in rows if r["latency_max_ms"] is not None),
                default=None,
            ),
        )
        for name in TIMED_MEANS:
            values = [r[name] for r in rows if r[name] is not None]
            row[name] = statistics.fmean(values) if values else None
        out.append(row)
    return out


def _timed_schema() -> pa.Schema:
    ints = {"cell", "members", "executor_threads", "groups", "runs", "unfinished", "errors"}
    fields = []
    for name in (
        *TIMED_CELL_KEYS,
        "runs",
        "unfinished",
        "errors",
        "rebalance_ms_median",
        "rebalance_ms_max",
        "latency_max_ms",
        *TIMED_MEANS,
    ):
        if name in ("config", "scenario"):
            fields.append((name, pa.string()))
        elif name == "assignor_offload":
            fields.append((name, pa.bool_()))
        elif name in ("assignment_interval_ms", "heartbeat_interval_ms"):
            fields.append((name, pa.int64()))
        else:
            fields.append((name, pa.int64() if name in ints else pa.float64()))
    return pa.schema(fields)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _timed(runs: pa.Table) -> tuple[dict[str, pa.Table], str, dict[str, Any]]:
    verdict = timed_verdict(runs)
    cells = timed_cells(runs)
    schema = _timed_schema()
    table = pa.table({n: [c[n] for c in cells] for n in schema.names}, schema=schema)
    parts = [_head("groupcheck timed sweep (KIP-1263)"), _verdict_html(verdict)]
    parts.append(
        f"<p>{verdict['runs']} runs in {len(cells)} cells; {verdict['unfinished']} unfinished, "
        f"{verdict['errors']} raised an error. Times are simulated milliseconds "
        "(<code>groupcheck/timed</code>).</p>"
    )
    scale = [c for c in cells if c["scenario"] == "scale-up"]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for c in scale:
        key = (c["heartbeat_interval_ms"], c["assignor_ms"], c["executor_threads"])
        groups.setdefault(key, []).append(c)
    for (heartbeat, assignor, threads), group in groups.items():
        sizes = sorted({c["members"] for c in group})
        settings = sorted({(c["assignment_interval_ms"], c["assignor_offload"]) for c in group})
        parts.append(
            f"<h2>Rebalance time after the last join: heartbeat {heartbeat:,} ms, assignor "
            f"{assignor:g} ms, {threads} executor threads</h2>"
            "<p>Median (worst) over the seeds, from the last member's join to a converged "
            "group, per assignment interval × group size, with and without offload.</p>"
        )
        at = {(c["assignment_interval_ms"], c["assignor_offload"], c["members"]): c for c in group}
        rows: list[list[Any]] = []
        series = []
        for interval, offload in settings:
            line: list[Any] = [f"{interval:,}", "on" if offload else "off"]
            points = []
            for size in sizes:
                found = at.get((interval, offload, size))
                if found is None:
                    line.append("")
                elif found["rebalance_ms_median"] is None:
                    line.append("did not converge")
                else:
                    median, worst = found["rebalance_ms_median"], found["rebalance_ms_max"]
                    text = f"{_ms(median)} ({_ms(worst)})"
                    if found["unfinished"]:
                        text += f", {found['unfinished']} unfinished"
                    line.append(text)
                    points.append((float(size), round(median, 1)))
            rows.append(line)
            series.append(
                (f"interval {interval:,} ms, offload {'on' if offload else 'off'}", points)
            )
        parts.append(
            _table(
                [
                    "assignment interval (ms)",
                    "offload",
                    *(f"{s} member{'s' if s > 1 else ''}" for s in sizes),
                ],
                rows,
            )
        )
        parts.append(
            svg.lines(
                series,
                title="Median rebalance time after the last join",
                xlabel="group size (members)",
                ylabel="ms",
            )
        )
    load = [c for c in cells if c["scenario"] == "churn"]
    if load:
        parts.append("<h2>Coordinator load: a group that rebalances on every heartbeat</h2>")

        def pct(v: float | None) -> str:
            return "—" if v is None else f"{v:.0%}"

        def num(v: float | None) -> str:
            return "—" if v is None else f"{v:.1f}"

        parts.append(
            _table(
                [
                    "members",
                    "interval (ms)",
                    "offload",
                    "heartbeat (ms)",
                    "assignor (ms)",
                    "threads",
                    "groups",
                    "heartbeats/s",
                    "assignor runs/s",
                    "coordinator busy",
                    "executor busy",
                    "latency mean / max (ms)",
                    "assignor run's wait for a thread, mean (ms)",
                ],
                [
                    [
                        c["members"],
                        f"{c['assignment_interval_ms']:,}",
                        "on" if c["assignor_offload"] else "off",
                        c["heartbeat_interval_ms"],
                        f"{c['assignor_ms']:g}",
                        c["executor_threads"],
                        c["groups"],
                        num(c["heartbeats_per_second"]),
                        num(c["assignor_runs_per_second"]),
                        pct(c["coordinator_utilisation"]),
                        pct(c["executor_utilisation"]),
                        f"{num(c['latency_mean_ms'])} / {num(c['latency_max_ms'])}",
                        num(c["assignor_wait_mean_ms"]),
                    ]
                    for c in load
                ],
            )
        )
        parts.append(
            svg.bars(
                [(c["config"], round(100 * (c["coordinator_utilisation"] or 0), 1)) for c in load],
                title="Coordinator thread utilisation",
                unit=" %",
                label_width=420,
            )
        )
        shared = [c for c in load if c["groups"] > 1 and c["assignor_offload"]]
        if shared:
            parts.append(
                svg.bars(
                    [(c["config"], round(c["assignor_wait_mean_ms"] or 0, 1)) for c in shared],
                    title="Offloaded runs' mean wait for an executor thread (groups sharing it)",
                    unit=" ms",
                    label_width=420,
                )
            )
    parts.append(_foot())
    return {"timed_cells": table}, "".join(parts), verdict


def _first_finding(findings: pa.Table, trace: str) -> str:
    rows = findings.filter(pc.equal(findings["trace"], trace)).slice(0, 1).to_pylist()
    if not rows:
        return ""
    r = rows[0]
    return f"line {r['line']}: {r['property']}: {r['message']}"


# --------------------------------------------------------------------------- HTML


def _head(title: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
        "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
        "th{background:#eee}svg{margin:0.5em 1em 0.5em 0}"
        f"</style></head><body><h1>{escape(title)}</h1>"
    )


def _foot() -> str:
    when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return (
        f'<p style="color:#777">Written {when} by <code>groupcheck pipeline report</code>; '
        "the tables are the <code>*.parquet</code> files beside this page.</p></body></html>"
    )


def _more(shown: int, total: int, what: str, where: str) -> str:
    """A note under a chart or table that shows only ``shown`` of ``total`` rows."""
    if shown >= total:
        return ""
    return (
        f'<p class="more">… and {total - shown} more: only {shown} of {total} {escape(what)}; '
        f"{where}.</p>"
    )


def _table(
    header: list[str], rows: list[list[Any]], raw: frozenset[int] | set[int] = frozenset()
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{v if i in raw else escape('' if v is None else str(v))}</td>"
            for i, v in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"
