"""``groupcheck vectors run`` and ``groupcheck vectors export`` (``docs/vectors.md``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from model.status import ConfigError
from model.versions import KAFKA_VERSIONS

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "vectors"


def register(sub: Any) -> None:
    """Add the ``vectors`` command and its subcommands."""
    vec = sub.add_parser(
        "vectors",
        help="run Kafka's unit tests, translated as conformance vectors, against the model",
        description=(
            "Kafka's own unit tests as language-neutral vectors (vectors/, docs/vectors.md). "
            "'run' executes them against the model; 'export' writes them with the model's "
            "answers for another implementation."
        ),
    )
    vsub = vec.add_subparsers(dest="vectors_command", metavar="SUBCOMMAND", required=True)
    run = vsub.add_parser(
        "run",
        help="execute every vector against the model",
        description=(
            "Execute every vector and print one line per Kafka test class and a summary. "
            "Exit 0 when every difference is explained (vectors/explained.json), 1 when one "
            "is not, 2 on a bad vector file, 3 (inconclusive) when no vector was run."
        ),
    )
    run.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR, metavar="DIR")
    run.add_argument("--class", dest="only", metavar="NAME", help="only this test class")
    run.add_argument(
        "--kafka-version",
        metavar="V",
        help="run with the model's rules of Kafka V (4.2, 4.3, 4.4) instead of each file's",
    )
    out = run.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--markdown", action="store_true", help="print the table of counts")
    run.add_argument("--verbose", action="store_true", help="print every difference")
    run.set_defaults(handler=cmd_run)
    mut = vsub.add_parser(
        "mutants",
        help="which vectors each mutant of the catalogue fails",
        description=(
            "Run the vectors whose kind calls the model's rules (reconcile, "
            "consumer-heartbeat) under each mutant of the catalogue (docs/bugs.md) and "
            "print the vectors it fails: those that pass, or are explained, under the "
            "default rules and differ under the mutant."
        ),
    )
    mut.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR, metavar="DIR")
    mout = mut.add_mutually_exclusive_group()
    mout.add_argument("--json", action="store_true", help="print one JSON object")
    mout.add_argument("--markdown", action="store_true", help="print the table")
    mut.set_defaults(handler=cmd_mutants)
    exp = vsub.add_parser(
        "export",
        help="write the vectors with the model's answers to a new directory",
        description=(
            "Write every vector file with the model's answer beside each expected value "
            "(key 'answers') into DIR, built under a temporary name and moved into place; "
            "an existing DIR this command did not write is refused."
        ),
    )
    exp.add_argument("out", type=Path, metavar="DIR")
    exp.add_argument("--from", dest="source", type=Path, default=DEFAULT_DIR, metavar="SRC")
    exp.set_defaults(handler=cmd_export)


def _results(directory: Path, only: str | None, kafka_version: str | None = None) -> list[Any]:
    from groupcheck.vectors.load import load_dir, load_explained
    from groupcheck.vectors.run import run_files

    if kafka_version is not None and kafka_version not in KAFKA_VERSIONS:
        known = ", ".join(KAFKA_VERSIONS)
        raise ConfigError(f"--kafka-version: must be one of {known}, got {kafka_version!r:.40}")
    return run_files(
        load_dir(directory, only), load_explained(directory), kafka_version=kafka_version
    )


def summary(results: list[Any]) -> dict[str, int]:
    """Totals over every class."""
    from groupcheck.vectors.run import DIFFER, EXPLAINED, NOT_EXPRESSIBLE, PASS

    outcomes = [o for r in results for o in r.outcomes]
    explained = sum(o.status == EXPLAINED for o in outcomes)
    return {
        "vectors": len(outcomes),
        "pass": sum(o.status == PASS for o in outcomes),
        "differ": sum(o.status == DIFFER for o in outcomes) + explained,
        "explained": explained,
        "not_expressible": sum(o.status == NOT_EXPRESSIBLE for o in outcomes),
    }


def _row(result: Any) -> dict[str, Any]:
    from groupcheck.vectors.run import DIFFER, EXPLAINED, NOT_EXPRESSIBLE, PASS

    return {
        "class": result.file.source_class,
        "file": result.file.path.name,
        "kafka_version": result.file.kafka_version,
        "vectors": len(result.outcomes),
        "pass": result.count(PASS),
        "differ": result.count(DIFFER) + result.count(EXPLAINED),
        "explained": result.count(EXPLAINED),
        "not_expressible": result.count(NOT_EXPRESSIBLE),
    }


def _line(counts: dict[str, Any]) -> str:
    return (
        f"{counts['vectors']} vectors: {counts['pass']} pass, {counts['differ']} differ "
        f"({counts['explained']} explained), {counts['not_expressible']} not expressible"
    )


def markdown(results: list[Any]) -> str:
    """The table of counts per class (docs/vectors.md)."""
    lines = [
        "| Kafka test class | Kafka | vectors | pass | differ | explained | not expressible |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        row = _row(r)
        lines.append(
            f"| `{row['class']}` | {row['kafka_version']} | {row['vectors']} | {row['pass']} "
            f"| {row['differ']} | {row['explained']} | {row['not_expressible']} |"
        )
    total = summary(results)
    lines.append(
        f"| **total** | | {total['vectors']} | {total['pass']} | {total['differ']} "
        f"| {total['explained']} | {total['not_expressible']} |"
    )
    lines += [
        "",
        "| Kafka | test classes | vectors | pass | differ | explained | not expressible |",
        "|---|---|---|---|---|---|---|",
    ]
    for version in sorted({r.file.kafka_version for r in results}):
        rows = [_row(r) for r in results if r.file.kafka_version == version]
        sums = {k: sum(row[k] for row in rows) for k in _COUNTS}
        lines.append(
            f"| {version} | {len(rows)} | {sums['vectors']} | {sums['pass']} | {sums['differ']} "
            f"| {sums['explained']} | {sums['not_expressible']} |"
        )
    return "\n".join(lines)


_COUNTS = ("vectors", "pass", "differ", "explained", "not_expressible")


def _difference(outcome: Any) -> dict[str, Any]:
    return {
        "id": outcome.vector.id,
        "status": outcome.status,
        "detail": outcome.detail,
        "explanation": None
        if outcome.explanation is None
        else {"reason": outcome.explanation.reason, "fidelity": outcome.explanation.fidelity},
    }


def cmd_run(args: argparse.Namespace) -> int:
    """``groupcheck vectors run``."""
    from groupcheck.vectors.run import DIFFER, EXPLAINED

    results = _results(args.dir, args.only, args.kafka_version)
    total = summary(results)
    unexplained = total["differ"] - total["explained"]
    ran = total["pass"] + total["differ"]
    verdict = "violation" if unexplained else ("ok" if ran else "inconclusive")
    if args.json:
        doc = {
            "classes": [
                {
                    **_row(r),
                    "differences": [
                        _difference(o) for o in r.outcomes if o.status in (DIFFER, EXPLAINED)
                    ],
                }
                for r in results
            ],
            "summary": total,
            "model_kafka_version": args.kafka_version,
            "result": verdict,
        }
        print(json.dumps(doc, indent=2))
    elif args.markdown:
        print(markdown(results))
    else:
        if args.kafka_version:
            print(f"with the model's rules of Kafka {args.kafka_version}")
        for r in results:
            row = _row(r)
            print(f"{r.file.path.name} ({row['kafka_version']}): {_line(row)}")
            for o in r.outcomes:
                if o.status == DIFFER or (args.verbose and o.status == EXPLAINED):
                    print(f"  {o.status}: {o.vector.id}: {o.detail}")
        print(_line(total))
    if not ran:
        print(
            f"inconclusive: no vector run from {args.dir} (none found, or none expressible)",
            file=sys.stderr,
        )
    return {"ok": exitcodes.OK, "violation": exitcodes.VIOLATION}.get(
        verdict, exitcodes.INCONCLUSIVE
    )


def cmd_export(args: argparse.Namespace) -> int:
    """``groupcheck vectors export DIR``."""
    from reports.publish import publishing

    results = _results(args.source, None)
    with publishing(args.out, command="groupcheck vectors export") as tmp:
        for r in results:
            doc = json.loads(r.file.path.read_text(encoding="utf-8"))
            doc["answers"] = {o.vector.id: o.answer for o in r.outcomes}
            (tmp / r.file.path.name).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    total = summary(results)
    print(
        f"wrote {len(results)} vector files to {args.out} ({total['vectors']} vectors)",
        file=sys.stderr,
    )
    return exitcodes.OK


def mutant_table(directory: Path) -> dict[str, list[str]]:
    """Mutant name → the vectors it fails (``groupcheck.vectors.run.mutant_failures``)."""
    from groupcheck.mutants import MUTANTS
    from groupcheck.vectors.load import load_dir, load_explained
    from groupcheck.vectors.run import mutant_failures

    files = load_dir(directory)
    explained = load_explained(directory)
    return {name: mutant_failures(files, explained, m.rules) for name, m in MUTANTS.items()}


def mutants_markdown(table: dict[str, list[str]]) -> str:
    """The table of vectors each mutant fails (docs/vectors.md)."""
    lines = ["| mutant | vectors failed | first of them |", "|---|---|---|"]
    for name, failed in table.items():
        first = ", ".join(f"`{k}`" for k in failed[:2]) + (", …" if len(failed) > 2 else "")
        lines.append(f"| `{name}` | {len(failed)} | {first or '—'} |")
    caught = sum(bool(f) for f in table.values())
    lines.append(f"| **{caught} of {len(table)} mutants fail a vector** | | |")
    return "\n".join(lines)


def cmd_mutants(args: argparse.Namespace) -> int:
    """``groupcheck vectors mutants``."""
    table = mutant_table(args.dir)
    if args.json:
        print(json.dumps({"mutants": table}, indent=2))
    elif args.markdown:
        print(mutants_markdown(table))
    else:
        for name, failed in table.items():
            first = ", ".join(failed[:3]) + (", …" if len(failed) > 3 else "")
            print(f"{name}: {len(failed)} vectors" + (f" ({first})" if failed else ""))
        caught = sum(bool(f) for f in table.values())
        print(f"{caught} of {len(table)} mutants fail at least one vector")
    return exitcodes.OK
