"""``groupcheck timed rebalance-times|load|crash``: KIP-1263's arguments measured on the model
with the timed simulation (``groupcheck.timed``).

* ``rebalance-times`` — the KIP's "Impact on Rebalance Times" tables: for each setting
  (assignment interval, offload) and group size, the time from the last member's join to a
  converged group, median and worst over ``--seeds`` seeds;
* ``load`` — the KIP's motivation: a group that rebalances on every heartbeat, with the
  coordinator thread's utilisation, the executor's, heartbeat latency and assignor runs
  per second, for each setting;
* ``crash`` — a member's process crashes without a leave: the time until its session
  expires and the group has converged without it (Kafka 4.4's consumer-crash scenario,
  docs/timed.md "Against Kafka 4.4").

Both print a Markdown table (``--json``: one object) and, with ``--out DIR``, publish
``DIR`` atomically with ``table.md``, ``results.json`` and ``report.html`` (the table and
a bar chart). Exit 0 when every run finished; 3 (inconclusive) when a rebalance did not
converge within the horizon or a group did not form; 2 on bad options.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict
from html import escape
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from groupcheck.argtypes import non_negative, positive
from model.status import ConfigError

SETTINGS_HELP = (
    "each row is one KIP-1263 setting: assignment interval 0 / --assignment-interval-ms, "
    "offload off / on"
)


def _timing_options(p: argparse.ArgumentParser, *, assignor_ms: float) -> None:
    p.add_argument(
        "--assignment-interval-ms",
        type=positive,
        default=1000,
        help="the batching rows' group.consumer.assignment.interval.ms (default 1000)",
    )
    p.add_argument("--network-ms", type=_ms, default=1.0, help="one-way latency (default 1)")
    p.add_argument(
        "--request-ms", type=_ms, default=0.05, help="coordinator time per request (default 0.05)"
    )
    p.add_argument(
        "--assignor-ms",
        type=_ms,
        default=assignor_ms,
        help=f"one assignor run (default {assignor_ms:g}; KIP-1263: 15-20 ms at 1,000 members)",
    )
    p.add_argument(
        "--executor-threads",
        "--threads",
        type=positive,
        default=2,
        help="group.coordinator.background.threads (default 2), shared by --groups",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="DIR", help="publish table.md, results.json, report.html")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _ms(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of milliseconds, got {text!r}"
        ) from None
    if not 0 <= value <= 3_600_000:
        raise argparse.ArgumentTypeError(f"expected 0..3600000 ms, got {text}")
    return value


def _members(text: str) -> int:
    from groupcheck.timed.scenarios import MAX_MEMBERS

    value = positive(text)
    if value > MAX_MEMBERS:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_MEMBERS} members (a larger group takes minutes and gigabytes: "
            f"docs/timed.md), got {value}"
        )
    return value


def _groups(text: str) -> int:
    from groupcheck.timed.scenarios import MAX_GROUPS

    value = positive(text)
    if value > MAX_GROUPS:
        raise argparse.ArgumentTypeError(f"at most {MAX_GROUPS} groups, got {value}")
    return value


def register(sub: Any) -> None:
    """Add the ``timed`` command."""
    timed = sub.add_parser(
        "timed",
        help="KIP-1263's rebalance-time tables and coordinator load, simulated in time",
        description=(
            "Seeded discrete-event simulations on the model (every event a model action). "
            "'rebalance-times' reproduces KIP-1263's Impact on Rebalance Times tables; "
            "'load' a group that rebalances on every heartbeat. " + SETTINGS_HELP + "."
        ),
    )
    tsub = timed.add_subparsers(dest="timed_command", metavar="SUBCOMMAND", required=True)
    rt = tsub.add_parser(
        "rebalance-times",
        help="from the last join to a converged group, per setting and group size",
        description=(
            "A group scales up: the group of N-2 members forms, member N-1 joins, and "
            "--join-gap-ms later member N. The rebalance time runs from the last join to "
            "the converged group. Sizes 1, 2 and --members; median and worst over --seeds "
            "seeds (the seed draws each member's heartbeat phase)."
        ),
    )
    rt.add_argument("--members", type=_members, default=50, help="the large group (default 50)")
    rt.add_argument("--seeds", type=positive, default=3, help="seeds per cell (default 3)")
    rt.add_argument(
        "--heartbeat-interval-ms", type=positive, default=5000, help="default 5000 (Kafka's)"
    )
    rt.add_argument(
        "--join-gap-ms", type=_ms, default=200.0, help="between the last two joins (default 200)"
    )
    rt.add_argument(
        "--partitions-per-member",
        type=positive,
        default=50,
        help="partitions of the topic per member (default 50, KIP-1263's 50,000 for 1,000)",
    )
    _timing_options(rt, assignor_ms=0.0)
    rt.set_defaults(handler=cmd_rebalance_times)
    load = tsub.add_parser(
        "load",
        help="a group that rebalances on every heartbeat: coordinator load and latency",
        description=(
            "Every member changes its subscription just before each heartbeat, so every "
            "heartbeat asks for a new target. Measured over --window-ms after the group "
            "formed: heartbeats/s, assignor runs/s, the coordinator thread's and the "
            "executor's utilisation, heartbeat latency (mean, p99, max)."
        ),
    )
    load.add_argument("--members", type=_members, default=50, help="group size (default 50)")
    load.add_argument(
        "--heartbeat-interval-ms",
        type=positive,
        default=250,
        help="default 250: 50 members then send 200 heartbeats/s, as 1,000 members at 5 s",
    )
    load.add_argument(
        "--window-ms", type=positive, default=5000, help="measured window (default 5000)"
    )
    load.add_argument("--seed", type=non_negative, default=1, help="phase seed (default 1)")
    load.add_argument(
        "--groups",
        type=_groups,
        default=1,
        metavar="G",
        help="G such groups on one coordinator, sharing its thread and its --executor-threads "
        "(default 1, at most 100); adds the offloaded runs' wait for a thread",
    )
    _timing_options(load, assignor_ms=20.0)
    load.set_defaults(handler=cmd_load)
    cr = tsub.add_parser(
        "crash",
        help="a member crashes: from the crash until the group converged without it",
        description=(
            "A group of --members forms and converges; the assignment interval and three "
            "heartbeats later (the quiet time of groupcheck kafka's wait) the last member's "
            "process crashes without a leave. Its session expires --session-timeout-ms "
            "after the coordinator last processed its heartbeat; the survivors take its "
            "partitions. Median and worst over --seeds seeds."
        ),
    )
    cr.add_argument("--members", type=_members, default=3, help="group size (default 3)")
    cr.add_argument("--partitions", type=positive, default=6, help="topic partitions (default 6)")
    cr.add_argument("--seeds", type=positive, default=5, help="seeds (default 5)")
    cr.add_argument("--heartbeat-interval-ms", type=positive, default=500, help="default 500")
    cr.add_argument("--session-timeout-ms", type=positive, default=6000, help="default 6000")
    _timing_options(cr, assignor_ms=0.0)
    cr.set_defaults(handler=cmd_crash)


def _settings(args: argparse.Namespace) -> list[Any]:
    from groupcheck.timed.scenarios import Kip1263

    interval = args.assignment_interval_ms
    return [
        Kip1263(0, False),
        Kip1263(interval, False),
        Kip1263(0, True),
        Kip1263(interval, True),
    ]


def _timing(args: argparse.Namespace) -> Any:
    from groupcheck.timed.engine import Timing

    return Timing(
        network_ms=args.network_ms,
        request_ms=args.request_ms,
        assignor_ms=args.assignor_ms,
        executor_threads=args.executor_threads,
    )


def _check_out(args: argparse.Namespace) -> None:
    """Refuse a bad ``--out`` before any work (``reports.publish.check_target``)."""
    if args.out is not None:
        from reports.publish import check_target

        check_target(Path(args.out))


def cmd_rebalance_times(args: argparse.Namespace) -> int:
    from groupcheck.progress import progress_for
    from groupcheck.timed.scenarios import scale_up

    _check_out(args)
    progress = progress_for(args.quiet)
    sizes = sorted({1, 2, args.members})
    timing = _timing(args)
    rows = []
    unfinished = 0
    for setting in _settings(args):
        cells: dict[str, Any] = {}
        for size in sizes:
            times = []
            for seed in range(1, args.seeds + 1):
                if progress is not None:
                    progress(f"rebalance-times: {setting.label}, {size} members, seed {seed}")
                one = scale_up(
                    members=size,
                    kip1263=setting,
                    seed=seed,
                    timing=timing,
                    heartbeat_interval_ms=args.heartbeat_interval_ms,
                    join_gap_ms=args.join_gap_ms,
                    partitions_per_member=args.partitions_per_member,
                )
                times.append(one.rebalance_ms)
            done = [t for t in times if t is not None]
            unfinished += len(times) - len(done)
            cells[str(size)] = {
                "median_ms": round(statistics.median(done)) if done else None,
                "worst_ms": round(max(done)) if done else None,
                "unfinished": len(times) - len(done),
            }
        rows.append({"setting": setting.label, "sizes": cells})
    result = "inconclusive" if unfinished else "ok"
    doc = {
        "result": result,
        "members": sizes,
        "seeds": args.seeds,
        "heartbeat_interval_ms": args.heartbeat_interval_ms,
        "join_gap_ms": args.join_gap_ms,
        "partitions_per_member": args.partitions_per_member,
        "timing": asdict(timing),
        "rows": rows,
    }
    table = rebalance_table(rows, sizes)
    _emit(args, doc, table, _rebalance_chart(rows, sizes), "Rebalance times (KIP-1263)")
    return exitcodes.INCONCLUSIVE if unfinished else exitcodes.OK


def cmd_crash(args: argparse.Namespace) -> int:
    from groupcheck.timed.scenarios import crash

    _check_out(args)
    if args.heartbeat_interval_ms >= args.session_timeout_ms:
        raise ConfigError("--heartbeat-interval-ms must be below --session-timeout-ms")
    timing = _timing(args)
    runs = [
        crash(
            members=args.members,
            seed=seed,
            timing=timing,
            partitions=args.partitions,
            heartbeat_interval_ms=args.heartbeat_interval_ms,
            session_timeout_ms=args.session_timeout_ms,
            assignment_interval_ms=args.assignment_interval_ms,
        )
        for seed in range(1, args.seeds + 1)
    ]
    settled = [r.settled_ms for r in runs if r.settled_ms is not None]
    expired = [r.expired_ms for r in runs if r.expired_ms is not None]
    unfinished = len(runs) - len(settled)
    doc = {
        "result": "inconclusive" if unfinished else "ok",
        "members": args.members,
        "partitions": args.partitions,
        "seeds": args.seeds,
        "heartbeat_interval_ms": args.heartbeat_interval_ms,
        "session_timeout_ms": args.session_timeout_ms,
        "assignment_interval_ms": args.assignment_interval_ms,
        "timing": asdict(timing),
        "runs": [
            {"seed": r.seed, "expired_ms": r.expired_ms, "settled_ms": r.settled_ms} for r in runs
        ],
    }
    table = "\n".join(
        [
            "| measure | median ms | min ms | max ms |",
            "|---|---|---|---|",
            *(
                f"| {name} | {round(statistics.median(v)):,} | {round(min(v)):,} "
                f"| {round(max(v)):,} |"
                for name, v in (
                    ("crash → session expired", expired),
                    ("crash → converged", settled),
                )
                if v
            ),
        ]
    )
    _emit(args, doc, table, "", "A crashed member (session timeout)")
    return exitcodes.INCONCLUSIVE if unfinished else exitcodes.OK


def rebalance_table(rows: list[dict[str, Any]], sizes: Sequence[int]) -> str:
    """The rows as the KIP's table: one column per group size, median (worst) time from
    the last join to a converged group."""
    head = "| setting | " + " | ".join(f"{s} member{'s' if s > 1 else ''}" for s in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    for row in rows:
        cells = []
        for s in sizes:
            c = row["sizes"][str(s)]
            if c["median_ms"] is None:
                cells.append("did not converge")
            else:
                cell = f"+{c['median_ms']:,} ms (worst +{c['worst_ms']:,})"
                if c["unfinished"]:
                    cell += f", {c['unfinished']} did not converge"
                cells.append(cell)
        lines.append(f"| {row['setting']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _rebalance_chart(rows: list[dict[str, Any]], sizes: Sequence[int]) -> str:
    from reports.render.svg import bars

    items = []
    for row in rows:
        for s in sizes:
            median = row["sizes"][str(s)]["median_ms"]
            if median is not None:
                items.append((f"{row['setting']} · {s} members", float(median)))
    return bars(
        items, title="Median rebalance time after the last join", unit=" ms", label_width=420
    )


def cmd_load(args: argparse.Namespace) -> int:
    from groupcheck.progress import progress_for
    from groupcheck.timed.scenarios import churn

    _check_out(args)
    progress = progress_for(args.quiet)
    timing = _timing(args)
    rows = []
    for setting in _settings(args):
        if progress is not None:
            progress(f"load: {setting.label}")
        load = churn(
            members=args.members,
            kip1263=setting,
            seed=args.seed,
            timing=timing,
            heartbeat_interval_ms=args.heartbeat_interval_ms,
            window_ms=float(args.window_ms),
            groups=args.groups,
        )
        row = asdict(load)
        row["setting"] = setting.label
        del row["kip1263"]
        rows.append(row)
    doc = {
        "result": "ok",
        "members": args.members,
        "groups": args.groups,
        "executor_threads": args.executor_threads,
        "heartbeat_interval_ms": args.heartbeat_interval_ms,
        "rows": rows,
    }
    table = load_table(rows)
    _emit(args, doc, table, _load_chart(rows), "Coordinator load (KIP-1263)")
    return exitcodes.OK


def load_table(rows: list[dict[str, Any]]) -> str:
    """The load rows as a Markdown table; with several groups on the coordinator, a
    column for the offloaded runs' wait for an executor thread."""
    shared = any(r.get("groups", 1) > 1 for r in rows)
    lines = [
        "| setting | heartbeats/s | assignor runs/s | coordinator thread busy "
        "| executor busy | heartbeat latency mean / p99 / max |"
        + (" assignor run's wait for a thread mean / p99 |" if shared else ""),
        "|---|---|---|---|---|---|" + ("---|" if shared else ""),
    ]
    for r in rows:
        wait = (
            f" {r['assignor_wait_mean_ms']:.1f} / {r['assignor_wait_p99_ms']:.1f} ms |"
            if shared
            else ""
        )
        lines.append(
            f"| {r['setting']} | {r['heartbeats_per_second']:.0f} "
            f"| {r['assignor_runs_per_second']:.1f} | {r['coordinator_utilisation']:.0%} "
            f"| {r['executor_utilisation']:.0%} | {r['latency_mean_ms']:.1f} / "
            f"{r['latency_p99_ms']:.1f} / {r['latency_max_ms']:.1f} ms |" + wait
        )
    return "\n".join(lines)


def _load_chart(rows: list[dict[str, Any]]) -> str:
    from reports.render.svg import bars

    return bars(
        [(r["setting"], round(100 * r["coordinator_utilisation"], 1)) for r in rows],
        title="Coordinator thread utilisation",
        unit=" %",
        label_width=420,
    )


def _emit(
    args: argparse.Namespace, doc: dict[str, Any], table: str, chart: str, title: str
) -> None:
    if args.json:
        print(json.dumps(doc, sort_keys=True))
    else:
        print(table)
        if doc["result"] != "ok":
            print("inconclusive: a run did not converge within its horizon")
    sys.stdout.flush()
    if args.out is None:
        return
    from reports.publish import publishing

    with publishing(Path(args.out), command=f"timed {args.timed_command}") as tmp:
        (tmp / "table.md").write_text(table + "\n", encoding="utf-8")
        (tmp / "results.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        (tmp / "report.html").write_text(
            "<!doctype html><meta charset='utf-8'>"
            f"<title>{escape(title)}</title><h1>{escape(title)}</h1>"
            f"<pre>{escape(table)}</pre>{chart}\n",
            encoding="utf-8",
        )
