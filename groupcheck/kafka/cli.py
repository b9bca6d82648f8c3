"""``groupcheck kafka``: a real Apache Kafka broker, started by groupcheck on 127.0.0.1,
and scenarios that drive the real Java consumer and librdkafka against it through the
capture proxy (``docs/kafka.md``)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from model.status import ConfigError


def register(sub: Any) -> None:
    """Add the ``kafka`` command and its subcommands."""
    p = sub.add_parser(
        "kafka",
        help="start a real Kafka broker; run scenarios with real clients against it",
        description=(
            "A single-node Apache Kafka broker (KRaft) on 127.0.0.1, from the artifacts "
            "'make setup' fetched (.cache/kafka), and scenarios that drive the real Java "
            "consumer and librdkafka against it through 'groupcheck capture'. Exit status: "
            "0 ok, 1 a verdict other than the scenario expects, 2 bad input, 3 a scenario "
            "that could not complete, 4 internal error, 5 Java or the Kafka artifacts "
            "missing, 6 a port in use, 7 the broker did not become ready (docs/kafka.md)."
        ),
    )
    ksub = p.add_subparsers(dest="kafka_command", metavar="SUBCOMMAND", required=True)

    up = ksub.add_parser(
        "up",
        help="start a broker and keep it running until Ctrl-C, SIGTERM or 'kafka down'",
    )
    _broker_options(up)
    up.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long")
    up.set_defaults(handler=cmd_up)

    down = ksub.add_parser("down", help="stop the brokers 'groupcheck kafka up' started")
    down.set_defaults(handler=cmd_down)

    scen = ksub.add_parser("scenarios", help="list the scenarios, one line each")
    scen.add_argument("--json", action="store_true", help="print JSON")
    scen.set_defaults(handler=cmd_scenarios)

    run = ksub.add_parser(
        "run",
        help="run a scenario (a name from 'kafka scenarios' or a .toml file) and check it",
    )
    run.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="names or .toml files")
    run.add_argument("--all", action="store_true", help="every shipped scenario")
    run.add_argument("--out", required=True, help="run directory (with --all: one per scenario)")
    run.add_argument(
        "--kafka-version",
        default=None,
        metavar="V",
        help="the fetched Kafka version to run (default: the one groupcheck follows)",
    )
    run.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each scenario N times (DIR/NAME-1 … DIR/NAME-N; default 1)",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(handler=cmd_run)

    table = ksub.add_parser(
        "table", help="the markdown table of the verdicts in run directories (docs/kafka.md)"
    )
    table.add_argument("dirs", nargs="+", metavar="DIR")
    table.add_argument(
        "--into",
        metavar="FILE",
        help="replace the table between the markers <!-- kafka-table:begin/end --> in FILE "
        "(docs/kafka.md) instead of printing it",
    )
    table.set_defaults(handler=cmd_table)

    check = ksub.add_parser(
        "check",
        help="validate the captures of run directories again (after an upgrade of "
        "groupcheck) and rewrite their verdicts, summaries and table",
    )
    check.add_argument("dirs", nargs="+", metavar="DIR")
    check.set_defaults(handler=cmd_check)

    timing = ksub.add_parser(
        "timing",
        help="measured rebalance times of batching-* runs beside 'groupcheck timed' "
        "(docs/timed.md)",
    )
    timing.add_argument("dirs", nargs="+", metavar="DIR")
    timing.add_argument(
        "--into",
        metavar="FILE",
        help="replace the table between <!-- kafka-timing:begin/end --> in FILE",
    )
    timing.set_defaults(handler=cmd_timing)


def _broker_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kafka-version", default=None, metavar="V", help="a fetched Kafka version")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker property (group settings: group.consumer.session.timeout.ms …); repeat",
    )
    p.add_argument("--port", type=int, default=0, help="the client port (default: a free one)")


def _say(message: str) -> None:
    print(f"groupcheck kafka: {message}", file=sys.stderr, flush=True)


def _setup_failure(e: Exception) -> int:
    from groupcheck.kafka.broker import BrokerError

    print(f"groupcheck: error: {e}", file=sys.stderr)
    if isinstance(e, BrokerError):
        return exitcodes.PORT_IN_USE if e.kind == "port" else exitcodes.BROKER_NOT_READY
    return exitcodes.SETUP_MISSING


def _state_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"groupcheck-kafka-up-{os.getuid()}"


def cmd_up(args: argparse.Namespace) -> int:
    from groupcheck.kafka.artifacts import DEFAULT_VERSION, KafkaSetupError
    from groupcheck.kafka.broker import Broker, BrokerError
    from reports.publish import running

    props: dict[str, str] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        props[key.strip()] = value.strip()
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: expected 0..65535")
    if args.duration is not None and not args.duration > 0:
        raise ConfigError("--duration: expected a number of seconds > 0")
    broker = Broker(
        version=args.kafka_version or DEFAULT_VERSION, properties=props, log=_say, port=args.port
    )
    state = _state_dir() / f"{os.getpid()}.json"
    try:
        broker.start()
    except (KafkaSetupError, BrokerError) as e:
        return _setup_failure(e)
    try:
        state.parent.mkdir(exist_ok=True)
        state.write_text(
            json.dumps({"pid": os.getpid(), "bootstrap": broker.bootstrap}), encoding="utf-8"
        )
        print(
            json.dumps(
                {
                    "bootstrap": broker.bootstrap,
                    "version": broker.kafka_version,
                    "commit": broker.commit_id,
                    "settings": broker.settings(),
                }
            ),
            flush=True,
        )
        _say(f"up on {broker.bootstrap}; Ctrl-C, SIGTERM or 'groupcheck kafka down' stops it")
        end = time.monotonic() + args.duration if args.duration else None
        while end is None or time.monotonic() < end:
            if broker.pid is None or not running(broker.pid):
                _say("the broker exited on its own")
                return 4
            time.sleep(0.2)
        return 0
    finally:
        state.unlink(missing_ok=True)
        broker.stop()


def cmd_down(args: argparse.Namespace) -> int:
    from reports.publish import running

    stopped = 0
    directory = _state_dir()
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            pid = int(json.loads(path.read_text(encoding="utf-8"))["pid"])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # its process is gone
            continue
        if b"groupcheck" not in cmdline:
            path.unlink(missing_ok=True)
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 40
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped += 1
        _say(f"stopped the broker of process {pid}")
    if not stopped:
        _say("no broker started by 'groupcheck kafka up' is running")
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    from groupcheck.kafka.scenario import load, scenario_files

    rows = []
    for name, path in scenario_files().items():
        s = load(path)
        rows.append({"name": name, "description": s.description, "protocol": s.protocol})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            first = r["description"].split(". ")[0].rstrip(".")
            print(f"{r['name']:<{width}}  {first}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from groupcheck.kafka.artifacts import DEFAULT_VERSION, KafkaSetupError, artifacts
    from groupcheck.kafka.broker import BrokerError
    from groupcheck.kafka.scenario import find, load, scenario_files
    from reports.publish import check_target, publishing

    if args.all == bool(args.scenarios):
        raise ConfigError("kafka run: name scenarios or give --all (not both)")
    names = list(scenario_files()) if args.all else args.scenarios
    scenarios = [load(find(n)) for n in names]
    version = args.kafka_version or DEFAULT_VERSION
    out = Path(args.out)
    check_target(out)
    try:
        artifacts(version)
    except KafkaSetupError as e:
        return _setup_failure(e)
    repeat = args.repeat
    if not 1 <= repeat <= 100:
        raise ConfigError(f"--repeat {repeat}: expected 1 to 100")
    single = len(scenarios) == 1 and not args.all and repeat == 1
    results = []
    try:
        with publishing(out, command="kafka run", scenarios=names, repeat=repeat) as work:
            if single:
                results.append(_run_one(scenarios[0], work, version, out))
            else:
                dirs = []
                for s in scenarios:
                    for k in range(1, repeat + 1):
                        name = s.name if repeat == 1 else f"{s.name}-{k}"
                        where = work / name
                        where.mkdir()
                        results.append(_run_one(s, where, version, out / name))
                        dirs.append(where)
                (work / "table.md").write_text(table(dirs), encoding="utf-8")
    except (KafkaSetupError, BrokerError) as e:
        return _setup_failure(e)
    if args.json:
        print(json.dumps(results, indent=1))
    code = exitcodes.OK
    for r in results:
        if r["error"]:
            code = exitcodes.worst(code, exitcodes.INCONCLUSIVE)
        elif not r["as_expected"]:
            code = exitcodes.worst(code, exitcodes.VIOLATION)
    return code


def _run_one(scenario: Any, work: Path, version: str, final: Path) -> dict[str, Any]:
    """Run one scenario with ``work`` (empty, inside the directory being published) as
    its run directory."""
    from groupcheck.kafka.run import run_scenario

    _say(f"{scenario.name}: {scenario.description.split('. ')[0]}")
    meta, error = run_scenario(scenario, work, kafka_version=version, log=_say)
    summary = _summary(scenario, meta)
    (work / "summary.txt").write_text(summary, encoding="utf-8")
    print(summary, end="", flush=True)
    verdicts = meta["verdicts"]
    as_expected = error is None and all(
        verdicts.get(mode, {}).get("result") == want for mode, want in scenario.expect.items()
    )
    return {
        "scenario": scenario.name,
        "directory": str(final),
        "error": error,
        "verdicts": {m: v.get("result") for m, v in verdicts.items()},
        "expected": dict(scenario.expect),
        "as_expected": as_expected,
        "kafka": meta["kafka"],
    }


def _summary(scenario: Any, meta: dict[str, Any]) -> str:
    k = meta["kafka"]
    lines = [
        f"scenario {scenario.name}: {scenario.description.split('. ')[0]}",
        f"  Apache Kafka {k['version']} (commit {k['commit']}); clients: {k['clients'] or '-'}",
    ]
    if meta["error"]:
        lines.append(f"  did not complete: {meta['error']}")
    for mode, v in meta["verdicts"].items():
        want = scenario.expect.get(mode)
        mark = ""
        if want is not None:
            mark = " (as expected)" if v["result"] == want else f" (expected {want})"
        if v.get("explained"):
            mark += f" — explained ({v['explained']}: the scenario's [[explained]] covers it)"
        lines.append(f"  {mode}: {v['result']}{mark}")
        for line in v["violations"][:5] + v["reasons"][:3] + v["errors"][:3]:
            lines.append(f"    {line}"[:300])
        if v["zombie_windows"]:
            lines.append(f"    {v['zombie_windows']} zombie window(s)")
    return "\n".join(lines) + "\n"


def table(dirs: list[Path]) -> str:
    """The markdown table of the runs' verdicts (``docs/kafka.md``)."""
    rows = [
        "| scenario | Kafka (commit) | clients | safety | coordinator | client | expected "
        "| scenario s | broker start s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in dirs:
        try:
            meta = json.loads((d / "verdicts.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            rows.append(f"| {d.name} | | | not run | | |")
            continue
        v = meta.get("verdicts", {})
        k = meta.get("kafka", {})
        expected = ", ".join(f"{m} {r}" for m, r in meta.get("expected", {}).items())
        safety = _shown(v.get("safety"), "—" if meta.get("error") else "")
        coordinator = _shown(v.get("coordinator"), "")
        client = _shown(v.get("client"), "")
        if meta.get("error"):
            safety = f"did not complete: {meta['error']}"[:80]
        rows.append(
            f"| {meta.get('scenario', d.name)} "
            f"| {k.get('version', '')} ({k.get('commit', '')[:7]}) | {k.get('clients', '')} "
            f"| {safety} | {coordinator} | {client} | {expected} | {meta.get('scenario_s', '')} "
            f"| {_round(meta.get('broker_startup_s'))} |"
        )
    return "\n".join(rows) + "\n"


def _shown(verdict: dict[str, Any] | None, missing: str) -> str:
    """A verdict in the table: ``explained (ID)`` for a violation the scenario's
    ``[[explained]]`` declarations cover whole, else the result."""
    if verdict is None:
        return missing
    if verdict.get("result") == "violation" and verdict.get("explained"):
        return f"explained ({verdict['explained']})"
    return str(verdict.get("result", ""))


def _round(value: Any) -> str:
    return "" if value is None else f"{float(value):.1f}"


BEGIN, END = "<!-- kafka-table:begin -->", "<!-- kafka-table:end -->"


def cmd_check(args: argparse.Namespace) -> int:
    """Validate each run directory's capture again with the settings its run recorded."""
    from groupcheck.kafka.run import validate_capture
    from groupcheck.kafka.scenario import load
    from reports.publish import write_file_atomic

    code = exitcodes.OK
    for d in (Path(x) for x in args.dirs):
        try:
            meta = json.loads((d / "verdicts.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{d}: not a 'kafka run' directory ({e})") from None
        scenario = replace(load(d / "scenario.toml"), name=str(meta.get("scenario", d.name)))
        header = json.loads((d / "capture.ndjson").read_text("utf-8").split("\n", 1)[0])
        settings = {**meta.get("broker_settings", {}), **meta.get("group_config", {})}
        heartbeat = settings.get("consumer.heartbeat.interval.ms") or settings.get(
            "group.consumer.heartbeat.interval.ms", 5000
        )
        meta["verdicts"] = validate_capture(
            d / "capture.ndjson",
            settle=scenario.settle,
            settle_ms=scenario.settle_ms,
            assignment_interval_ms=int(header.get("assignment_interval_ms", 0)),
            heartbeat_ms=int(heartbeat),
            explained=scenario.explained,
        )
        write_file_atomic(d / "verdicts.json", json.dumps(meta, indent=1) + "\n")
        summary = _summary(scenario, meta)
        write_file_atomic(d / "summary.txt", summary)
        print(summary, end="", flush=True)
        if not meta.get("error") and any(
            meta["verdicts"].get(m, {}).get("result") != want for m, want in scenario.expect.items()
        ):
            code = exitcodes.VIOLATION
    parent = {Path(x).resolve().parent for x in args.dirs}
    if len(parent) == 1 and (table_md := next(iter(parent)) / "table.md").is_file():
        write_file_atomic(table_md, table(sorted(Path(x) for x in args.dirs)))
    return code


def cmd_timing(args: argparse.Namespace) -> int:
    from groupcheck.kafka import timing

    dirs = [Path(d) for d in args.dirs if (Path(d) / "verdicts.json").is_file()]
    if not timing.measured(dirs):
        raise ConfigError("kafka timing: no batching, crash or cut run among the DIRs")
    return _emit_table(
        timing.table(dirs), args.into, "<!-- kafka-timing:begin -->", "<!-- kafka-timing:end -->"
    )


def _emit_table(text: str, into: str | None, begin: str, end: str) -> int:
    """Print ``text``, or put it between the ``begin`` and ``end`` lines of ``into``."""
    from reports.publish import write_between_markers

    if into is None:
        print(text, end="")
        return 0
    target = Path(into)
    write_between_markers(target, begin, end, text)
    _say(f"wrote the table into {target}")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    dirs = [Path(d) for d in args.dirs if (Path(d) / "verdicts.json").is_file()]
    if not dirs:
        raise ConfigError("kafka table: no run directory (with verdicts.json) among the DIRs")
    return _emit_table(table(dirs), args.into, BEGIN, END)
