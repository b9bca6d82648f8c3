"""``groupcheck pipeline explore | validate | report`` (registered through
``groupcheck.cli.COMMAND_MODULES``). Importing this module imports neither pyspark nor
pyarrow; the handlers do when they run.

Exit status (``groupcheck.exitcodes``; the summary's ``result`` and ``reasons`` say why,
``groupcheck/pipeline/verdict.py``): explore 1 when a run found a violation, else 4 when a
run raised an error (a crash of the model), else 3 when the runs of a cell missed a
``SOMETIMES`` witness, else 0; validate 1 when a trace violates a property, else 2 when a
trace is malformed or unreadable (every other trace is still validated), else 3 when a
trace is inconclusive, else 0; 2 for bad input (a grid, a master that cannot be reached,
an output directory of another job).
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from groupcheck.argtypes import add_validation_options, non_negative, positive, positive_float
from groupcheck.cli import _config_for, add_config_options
from invariants.liveness import required_witnesses
from reports.escape import visible as printable

Say = Callable[[str], None]


def register(sub: Any) -> None:
    """Add the ``pipeline`` command and its steps to the ``groupcheck`` parser."""
    p = sub.add_parser(
        "pipeline",
        help="sweeps, large-scale exploration and trace-corpus validation on Spark",
        description=(
            "Run sweeps and corpus validation on Spark: local mode by default, a cluster "
            "with --master. Results go to an output directory (Parquet parts, committed "
            "atomically; a rerun resumes); 'report' turns them into tables and an HTML page. "
            "See docs/pipeline.md."
        ),
    )
    steps = p.add_subparsers(dest="pipeline_step", metavar="STEP", parser_class=type(p))
    p.set_defaults(handler=lambda args: _usage(p))

    exp = steps.add_parser(
        "explore",
        help="fan seeded walks and Hypothesis runs over a grid of presets and options",
        description=(
            "Run every cell of a grid (presets × mutants × Config options × engines) once "
            "per seed and record each run's metrics. Exit 1 when a run found a violation; "
            "else 4 when a run raised an error (a model crash); else 3 (inconclusive) when "
            "the runs of a cell missed a SOMETIMES witness; else 0. Exit 2 on bad input (a "
            "grid over the limits of docs/pipeline.md included)."
        ),
    )
    exp.add_argument("--grid", required=True, metavar="FILE", help="grid file (*.json or *.toml)")
    exp.add_argument(
        "--runs",
        type=positive,
        metavar="N",
        help="runs (seeds) per grid cell, at most 10,000,000 in all; required unless the "
        "grid lists its seeds",
    )
    exp.add_argument(
        "--part-size",
        type=positive,
        metavar="N",
        help="runs per part (a Spark task and a result file); default: about 32 parts",
    )
    _common(exp)
    exp.set_defaults(handler=cmd_explore)

    tim = steps.add_parser(
        "timed",
        help="sweep KIP-1263's timed simulation: rebalance time against interval and size",
        description=(
            "Run every cell of a timed grid (scenario × group size × assignment interval × "
            "offload × heartbeat interval × assignor duration × executor threads) once per "
            "seed with the timed simulation (groupcheck/timed) and record its rebalance "
            "time or coordinator load. Exit 4 when a run raised an error; else 3 when a "
            "run is unfinished (a group did not form or converge); else 0. Exit 2 on bad "
            "input. See docs/pipeline.md, 'Timed sweeps'."
        ),
    )
    tim.add_argument("--grid", required=True, metavar="FILE", help="timed grid (*.json, *.toml)")
    tim.add_argument(
        "--runs", type=positive, metavar="N", help="seeds per cell, unless the grid lists them"
    )
    tim.add_argument("--part-size", type=positive, metavar="N", help="runs per part")
    _common(tim)
    tim.set_defaults(handler=cmd_timed)

    val = steps.add_parser(
        "validate",
        help="validate a corpus of trace files in parallel",
        description=(
            "Validate every trace file the globs match (as 'groupcheck validate' does) and "
            "record each trace's verdict and violations. An unreadable or malformed trace "
            "is reported for that trace; the others are still validated. Exit 1 when a "
            "trace violates a property; else 2 when a trace is malformed or unreadable; "
            "else 3 when a trace is inconclusive; else 0."
        ),
    )
    val.add_argument(
        "--traces",
        required=True,
        action="append",
        metavar="GLOB",
        help="trace files ('**' recurses; quote it); may be given more than once",
    )
    add_validation_options(val)
    _common(val)
    val.set_defaults(handler=cmd_validate)

    bfs = steps.add_parser(
        "bfs",
        help="exhaustive BFS on Spark, level by level, resumable",
        description=(
            "Explore a config exhaustively on Spark: each BFS level's frontier and visited "
            "fingerprints are Parquet datasets under --out, committed level by level; a "
            "rerun resumes at the last complete level. The counterexample is the serial "
            "engine's ('groupcheck explore --engine bfs'), written under --out with its "
            "reproducers. Exit 0 when every reachable state was visited and no property "
            "failed, 1 on a violation, 3 when the search is incomplete, 2 on bad input."
        ),
    )

    add_config_options(bfs, required=False, default_help="default: the mutant's scenario")
    bfs.add_argument("--mutant", help="search with this mutant's rules")
    bfs.add_argument(
        "--no-convergence",
        action="store_true",
        help="check state and step properties only (as TLC's safety run does)",
    )
    bfs.add_argument("--partitions", type=positive, metavar="N", help="Spark partitions per level")
    bfs.add_argument(
        "--depth",
        type=positive,
        metavar="K",
        help="explore every state within K steps only (as 'groupcheck explore --depth K')",
    )
    bfs.add_argument(
        "--buckets",
        type=positive,
        metavar="B",
        help="buckets of the visited set, fixed when --out is created (default: --partitions "
        "or Spark's default parallelism); also the shuffle partitions of each level",
    )
    bfs.add_argument(
        "--driver-states",
        type=non_negative,
        metavar="N",
        help="compute a level whose frontier holds fewer than N states on the driver, in "
        "plain Python, without Spark jobs (default 2000; 0: every level on Spark); the "
        "level written is the same",
    )
    _common(bfs)
    bfs.set_defaults(handler=cmd_bfs)

    rep = steps.add_parser(
        "report",
        help="Parquet tables and an HTML summary of a finished job",
        description=(
            "Write DIR/report/ (replacing a report groupcheck wrote before): Parquet tables "
            "and report.html with SVG plots, the job's result and its reasons. Exit 0 when "
            "the report is written, 2 when DIR is not a finished job."
        ),
    )
    rep.add_argument("dir", metavar="DIR", help="the --out directory of a finished job")
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    rep.set_defaults(handler=cmd_report)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument(
        "--master",
        metavar="URL",
        help="Spark master (default: local[*]); e.g. spark://HOST:7077",
    )
    p.add_argument(
        "--connect-timeout",
        type=_connect_timeout,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for a cluster's first executor (default 60, at most 3600)",
    )
    p.add_argument(
        "--conf",
        action="append",
        default=[],
        type=_conf,
        metavar="KEY=VALUE",
        help="a Spark setting (e.g. spark.executor.memory=2g); may be repeated",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def _usage(p: argparse.ArgumentParser) -> int:
    """``groupcheck pipeline`` without a step: one line on stderr (docs/cli.md)."""
    del p
    print(
        "groupcheck: error: pipeline: choose a step: explore, timed, validate, bfs or report "
        "(see 'groupcheck pipeline --help')",
        file=sys.stderr,
    )
    return 2


MAX_CONNECT_TIMEOUT = 3600.0
"""The longest ``--connect-timeout`` (seconds)."""


def _connect_timeout(text: str) -> float:
    """A finite number of seconds in (0, ``MAX_CONNECT_TIMEOUT``]."""
    value = positive_float(text)
    if not value <= MAX_CONNECT_TIMEOUT:  # inf included
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_CONNECT_TIMEOUT:g} seconds, got {text}"
        )
    return value


def _conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _sayer(quiet: bool) -> Say:
    def say(message: str) -> None:
        if not quiet:
            print(f"groupcheck: pipeline: {message}", file=sys.stderr, flush=True)

    return say


# --------------------------------------------------------------------------- explore


def cmd_explore(args: argparse.Namespace) -> int:
    from groupcheck.pipeline.grid import load_grid
    from groupcheck.pipeline.work import run_parts

    plan = load_grid(args.grid, args.runs)
    parts = run_parts(plan.total, args.part_size)
    job, undo = _prepare("explore", args, plan, plan.fingerprint(), plan.to_json(), parts)
    say = _sayer(args.quiet)
    say(
        f"explore: {plan.total} runs ({len(plan.cells)} cells × {len(plan.seeds)} seeds) "
        f"in {len(job.parts)} parts → {job.out}"
    )
    summary = _execute(job, undo, args, say)
    summary.update(_explore_findings(job))
    return _finish(job, summary, args, _print_explore)


def _explore_findings(job: Any) -> dict[str, Any]:
    from groupcheck.pipeline.store import read_parts
    from groupcheck.pipeline.verdict import explore_verdict

    columns = ["cell", "seed", "witnesses", "violation", "error", "converged"]
    table = read_parts(Path(job.out), len(job.parts), columns)

    cells = job.plan.cells
    required = {c.index: required_witnesses(c.config()) for c in cells}
    return explore_verdict(table, {c.index: c.label for c in cells}, required)


def _print_explore(s: dict[str, Any]) -> None:
    print(
        f"explore: {s['runs']} runs in {s['parts']} parts ({s['computed']} computed, "
        f"{s['reused']} reused) in {s['seconds']:.1f} s"
    )
    _print_result(s)
    props = ", ".join(f"{k} {v}" for k, v in s["by_property"].items())
    print(f"  runs with a violation: {s['violations']}" + (f" ({props})" if props else ""))
    print(f"  runs that raised an error: {s['errors']}")
    print(f"  results: {s['out']}/parts; next: groupcheck pipeline report {s['out']}")


# --------------------------------------------------------------------------- timed


def cmd_timed(args: argparse.Namespace) -> int:
    from groupcheck.pipeline.timed_grid import load_timed_grid
    from groupcheck.pipeline.work import run_parts

    plan = load_timed_grid(args.grid, args.runs)
    parts = run_parts(plan.total, args.part_size)
    job, undo = _prepare("timed", args, plan, plan.fingerprint(), plan.to_json(), parts)
    say = _sayer(args.quiet)
    say(
        f"timed: {plan.total} runs ({len(plan.cells)} cells × {len(plan.seeds)} seeds) "
        f"in {len(job.parts)} parts → {job.out}"
    )
    summary = _execute(job, undo, args, say)
    from groupcheck.pipeline.store import read_parts
    from groupcheck.pipeline.timed_runs import timed_verdict

    table = read_parts(
        Path(job.out), len(job.parts), ["config", "seed", "unfinished", "note", "error"]
    )
    summary.update(timed_verdict(table))
    return _finish(job, summary, args, _print_timed)


def _print_timed(s: dict[str, Any]) -> None:
    print(
        f"timed: {s['runs']} runs in {s['parts']} parts ({s['computed']} computed, "
        f"{s['reused']} reused) in {s['seconds']:.1f} s"
    )
    _print_result(s)
    print(f"  unfinished runs: {s['unfinished']}; runs that raised an error: {s['errors']}")
    print(f"  results: {s['out']}/parts; next: groupcheck pipeline report {s['out']}")


# --------------------------------------------------------------------------- bfs


def cmd_bfs(args: argparse.Namespace) -> int:
    from groupcheck.explore.bfs import small_state_graph as _small_state_graph
    from groupcheck.explore.minimise import minimise_path
    from groupcheck.pipeline.bfs import spark_bfs
    from groupcheck.pipeline.spark import session
    from reports.artifacts import Counterexample, write_counterexample

    chosen = _config_for(args, default=None)
    say = _sayer(args.quiet)
    out = Path(args.out)
    with session(args.master, connect_timeout=args.connect_timeout, conf=args.conf) as spark:
        res = spark_bfs(
            spark,
            chosen.config,
            out,
            mutant=chosen.mutant.name if chosen.mutant else None,
            check_convergence=not args.no_convergence,
            partitions=args.partitions,
            buckets=args.buckets,
            max_depth=args.depth,
            progress=say,
            **({} if args.driver_states is None else {"driver_states": args.driver_states}),
        )
    doc: dict[str, Any] = {
        "result": res.result,
        "reasons": res.reasons or [],
        "config": chosen.config.name,
        "distinct_states": res.distinct_states,
        "steps": res.steps,
        "depth": res.depth,
        "levels_resumed": res.levels_resumed,
        "witnesses": res.witnesses or [],
        "missed_witnesses": res.missed_witnesses or [],
        "level_seconds": [round(s, 2) for s in res.level_seconds or []],
        "seconds": round(res.seconds, 2),
        "property": res.property,
        "message": res.message,
        "trace": None,
    }
    if res.path is not None and res.property is not None:
        path = minimise_path(res.path, res.property)
        ce = Counterexample(
            path=path,
            property=res.property,
            message=res.message or "",
            preset=chosen.preset,
            mutant=chosen.mutant.name if chosen.mutant else None,
            named_config=chosen.config_file is None,
            engine="bfs",
            seed=0,
            shortest=len(res.path.actions) if res.property != "Convergence" else None,
            original_length=len(res.path.actions),
        )
        graph, graph_path = _small_state_graph(path)
        written = write_counterexample(ce, out=out, graph=graph, graph_path=graph_path)
        doc["trace"] = str(written / "trace.ndjson")
        doc["length"] = len(path.actions)
        doc["original_length"] = len(res.path.actions)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}
        print(
            f"{head[res.result]}: bfs on Spark, {res.distinct_states} distinct states, "
            f"depth {res.depth}, {res.seconds:.1f} s ({res.levels_resumed} levels resumed)"
        )
        if res.property:
            print(f"  {res.property}: {res.message}")
            print(f"  written to {doc['trace']}")
        for reason in doc["reasons"]:
            print(f"  - {reason}")
    return exitcodes.exit_code(res.result)


# --------------------------------------------------------------------------- validate


def cmd_validate(args: argparse.Namespace) -> int:
    from groupcheck.pipeline.corpus import byte_parts, plan_corpus

    plan = plan_corpus(args.traces, args.mode, args.settle, args.format)
    parts = byte_parts(plan.sizes)
    job, undo = _prepare("validate", args, plan, plan.fingerprint(), plan.to_json(), parts)
    say = _sayer(args.quiet)
    say(f"validate: {plan.total} traces ({args.mode}) in {len(job.parts)} parts → {job.out}")
    summary = _execute(job, undo, args, say)
    summary.update(_validate_findings(job))
    return _finish(job, summary, args, _print_validate)


def _validate_findings(job: Any) -> dict[str, Any]:
    from groupcheck.pipeline.store import read_parts
    from groupcheck.pipeline.verdict import validate_verdict

    table = read_parts(Path(job.out), len(job.parts), ["result", "notes", "violations", "error"])
    return validate_verdict(table)


def _print_validate(s: dict[str, Any]) -> None:
    print(
        f"validate: {s['traces']} traces in {s['parts']} parts ({s['computed']} computed, "
        f"{s['reused']} reused) in {s['seconds']:.1f} s"
    )
    _print_result(s)
    print(
        f"  ok {s['ok']}, with violations {s['with_violations']}, inconclusive "
        f"{s['inconclusive']}, malformed or unreadable {s['malformed']}"
    )
    if s["by_property"]:
        print("  findings: " + ", ".join(f"{k} {v}" for k, v in s["by_property"].items()))
    print(f"  results: {s['out']}/parts; next: groupcheck pipeline report {s['out']}")


# --------------------------------------------------------------------------- shared


def _print_result(s: dict[str, Any], indent: str = "  ") -> None:
    print(f"{indent}result: {s['result']}")
    for reason in s["reasons"]:
        print(f"{indent}  {reason}")


def _prepare(
    kind: str,
    args: argparse.Namespace,
    plan: Any,
    fingerprint: str,
    plan_json: dict[str, Any],
    parts: list[tuple[int, int]],
) -> tuple[Any, Callable[[], None] | None]:
    """Check the master, create (or resume) the output directory; the job to run, and for
    a fresh job (this run wrote the manifest) how to remove it again."""
    from groupcheck.pipeline.errors import PipelineError
    from groupcheck.pipeline.store import MANIFEST, prepare, read_json
    from groupcheck.pipeline.work import Job

    _check_master(args.master, args.connect_timeout)
    out = Path(args.out).expanduser().resolve()
    fresh = not (out / MANIFEST).exists()
    if not fresh:
        existing = read_json(out / MANIFEST)
        old = [tuple(p) for p in existing.get("parts", [])]
        if getattr(args, "part_size", None) is not None and old and old != parts:
            raise PipelineError(
                f"{out}: was split into parts of another size; resume without --part-size"
            )
        if old and existing.get("fingerprint") == fingerprint:
            parts = old  # the split the job started with
    existed = out.exists()
    manifest = prepare(out, kind, plan_json, fingerprint, parts)
    job = Job(kind, str(out), plan, tuple(tuple(p) for p in manifest["parts"]))
    return job, functools.partial(_discard, job, not existed) if fresh else None


def _check_master(master: str | None, timeout: float) -> None:
    """The master's form is checked, and a standalone master probed, before anything is
    written (without pyspark)."""
    from groupcheck.pipeline.masters import master_kind, probe

    master_kind(master)
    if master is not None and master.startswith("spark://"):
        probe(master, min(timeout, 5.0))


def _discard(job: Any, created: bool) -> None:
    """Remove what a fresh job wrote before it failed, when no part was committed: the
    manifest, ``parts/`` (only hidden temporaries can be in it) and the directory itself
    if this process created it. A rerun then starts from nothing, with any arguments."""
    from groupcheck.pipeline.store import MANIFEST, PARTS, done_parts

    out = Path(job.out)
    if done_parts(out, len(job.parts)):
        return  # committed work is kept: a rerun resumes it
    shutil.rmtree(out / PARTS, ignore_errors=True)
    with suppress(FileNotFoundError):
        (out / MANIFEST).unlink()
    if created:
        with suppress(OSError):
            out.rmdir()  # only when nothing else appeared in it


def _execute(
    job: Any, undo: Callable[[], None] | None, args: argparse.Namespace, say: Say
) -> dict[str, Any]:
    """Run the parts not yet committed; the counts for the summary. A fresh job that fails
    before committing any part (Spark cannot start, no executor, workers that cannot import
    the project) leaves nothing of itself behind (``undo``)."""
    try:
        return _compute(job, args, say)
    except BaseException:
        if undo is not None:
            undo()
        raise


def _compute(job: Any, args: argparse.Namespace, say: Say) -> dict[str, Any]:
    from groupcheck.pipeline.store import SUCCESS, done_parts

    began = time.perf_counter()
    done = done_parts(Path(job.out), len(job.parts))
    pending = [i for i in range(len(job.parts)) if i not in done]
    if done:
        say(f"resuming: {len(done)} of {len(job.parts)} parts already committed")
    computed = 0
    code: list[str] = []
    if pending:
        from groupcheck.pipeline.spark import run_job, session

        with session(
            args.master, connect_timeout=args.connect_timeout, conf=args.conf, progress=say
        ) as spark:
            summaries = run_job(spark, job, pending, None if args.quiet else say)
        computed = sum(1 for s in summaries if s.computed)
        code = sorted({s.code for s in summaries})
    elif (Path(job.out) / SUCCESS).exists():
        say("already complete; nothing to compute")
    missing = len(job.parts) - len(done_parts(Path(job.out), len(job.parts)))
    if missing:
        from groupcheck.pipeline.errors import PipelineError

        raise PipelineError(
            f"{job.out}: {missing} parts are missing after the job; rerun to resume"
        )
    return {
        "kind": job.kind,
        "out": job.out,
        "parts": len(job.parts),
        "computed": computed,
        "reused": len(job.parts) - computed,
        "seconds": round(time.perf_counter() - began, 3),
        # Where the tasks found the project's code (a cluster: the shipped zip).
        "code": code,
    }


def _finish(
    job: Any,
    summary: dict[str, Any],
    args: argparse.Namespace,
    show: Callable[[dict[str, Any]], None],
) -> int:
    from groupcheck.pipeline.store import SUCCESS, write_json_atomic
    from groupcheck.pipeline.verdict import explore_exit, validate_exit

    write_json_atomic(Path(job.out) / SUCCESS, summary)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        show(summary)
    if job.kind == "explore":
        code = explore_exit(summary)
        if code == exitcodes.INTERNAL_ERROR:
            print(f"groupcheck: internal error: {summary['reasons'][0]}", file=sys.stderr)
        return code
    if job.kind == "timed":
        from groupcheck.pipeline.timed_runs import timed_exit

        code = timed_exit(summary)
        if code == exitcodes.INTERNAL_ERROR:
            print(f"groupcheck: internal error: {summary['reasons'][0]}", file=sys.stderr)
        return code
    code = validate_exit(summary)
    if code == exitcodes.BAD_INPUT:
        others = summary["malformed"] - 1
        more = f"; {others} more malformed or unreadable" if others else ""
        print(
            f"groupcheck: error: {printable(summary['first_malformed'] or 'a malformed trace')}"
            f"{more}; every other trace was validated",
            file=sys.stderr,
        )
    return code


# --------------------------------------------------------------------------- report


def cmd_report(args: argparse.Namespace) -> int:
    from groupcheck.pipeline.report import write_report

    html, verdict = write_report(Path(args.dir).expanduser().resolve())
    tables = sorted(str(p) for p in html.parent.glob("*.parquet"))
    if args.json:
        doc = {"html": str(html), "tables": tables, **verdict}
        print(json.dumps(doc, indent=1))
    else:
        print(f"report: {html}")
        _print_result(verdict)
        for table in tables:
            print(f"  table: {table}")
    return exitcodes.OK
