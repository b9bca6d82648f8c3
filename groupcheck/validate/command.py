"""``groupcheck validate FILE…``: validate trace files, or standard input (``-``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groupcheck.argtypes import add_timing_options, add_validation_options, non_negative
from groupcheck.validate.files import validate_path
from groupcheck.validate.report import overall
from groupcheck.validate.timing import TimingOptions
from reports.escape import visible

DESCRIPTION = (
    "Validate trace files (docs/trace-format.md); '-' reads standard input. Each file, "
    "and the whole run, is ok, violation, inconclusive or malformed. Exit 0 when every file "
    "is ok; 1 when a property is violated (file, line, property, message); 2 when an input "
    "is malformed or unreadable (FILE:LINE:COLUMN and the reason; the other files are still "
    "validated); 3 when nothing is violated but a check could not be completed (safety "
    "mode: fewer than --settle events after the last perturbation, or no quiet window long "
    "enough, so convergence was not checked); 4 on an internal error."
)


def register(sub: Any) -> None:
    """Add the ``validate`` command."""
    p = sub.add_parser(
        "validate",
        help="validate trace files against the reference model",
        description=DESCRIPTION,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="trace file, or - for standard input")
    add_validation_options(p)
    add_timing_options(p)
    p.add_argument(
        "--reference",
        action="store_true",
        help="conformance: replay under the reference rules even when the header names the "
        "mutant or rules file the trace was made under (where does that change depart?)",
    )
    p.add_argument(
        "--epoch-layout",
        choices=("auto", "kip-848", "kafka-4.3"),
        default="auto",
        help="coordinator: where a new group's epochs start (auto: as the first join shows)",
    )
    p.add_argument(
        "--assignment-interval-ms",
        type=non_negative,
        metavar="MS",
        help="coordinator: KIP-1263's assignment interval the coordinator applied (0: no "
        "batching; supplies or overrides the header's assignment_interval_ms; not on the wire)",
    )
    p.add_argument(
        "--all-divergences",
        action="store_true",
        help="coordinator: go on after the first divergence and list the later ones as "
        "notes (the replayed group may differ from the implementation's by then)",
    )
    p.add_argument(
        "--client-profile",
        choices=("auto", "java", "librdkafka"),
        default="auto",
        help="client: whose client the members are (auto: librdkafka when the header's "
        "implementation.clients names librdkafka only, else java); librdkafka admits the "
        "documented differences RK1-RK5 of docs/fidelity.md and reports any other",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (docs/json/validate.schema.json; docs/json.md)",
    )
    p.set_defaults(handler=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every file; a failure of the validator itself is raised (``main`` reports
    it as an internal error, exit status 4)."""
    timing = TimingOptions(
        args.session_timeout_ms,
        args.rebalance_timeout_ms,
        args.heartbeat_interval_ms,
        args.clock_tolerance_ms,
        args.fail_on_zombie,
        args.settle_ms,
    )
    reports = [
        validate_path(
            name,
            args.mode,
            args.settle,
            args.format,
            reference=args.reference,
            timing=timing,
            epoch_layout=args.epoch_layout,
            all_divergences=args.all_divergences,
            assignment_interval_ms=args.assignment_interval_ms,
            client_profile=args.client_profile,
        )
        for name in args.files
    ]
    result, code = overall(reports)
    if args.json:
        from groupcheck.jsonout import emit

        emit("validate", _document(reports, result))

        for r in reports:  # a refused file is one line on stderr, with --json too
            if r.error:
                print(visible(f"groupcheck: error: {r.error}"), file=sys.stderr)
    else:
        _print_text(reports, result)
    return code


def _document(reports: list[Any], result: str) -> dict[str, Any]:
    events = sum(r.events for r in reports)
    modes = ", ".join(sorted({r.mode for r in reports}))
    return {
        "result": result,
        "checked": f"{events} events of {len(reports)} file(s) ({modes})",
        "events": events,
        "violations": [v.to_json() for r in reports for v in r.violations],
        "errors": [r.error for r in reports if r.error],
        "reasons": [f"{r.file}: {reason}" for r in reports for reason in r.reasons],
        "notes": [note for r in reports for note in r.notes],
        "zombie_windows": [z.to_json() for r in reports for z in r.zombie_windows],
        "files": [r.to_json() for r in reports],
    }


def _print_text(reports: list[Any], result: str) -> None:
    for r in reports:
        for v in r.violations:
            print(visible(f"{v.file}:{v.line}: {v.property}: {v.message}"))
        for z in r.zombie_windows:
            print(visible(f"zombie-window: {z.file}:{z.line}: {z.property}: {z.message}"))
        if r.timing is not None and r.timing.get("session_timeout_ms") is None:
            if r.timing.get("timestamps"):
                print(
                    visible(
                        f"timing: {r.file}: unknown — the events have timestamps but no "
                        "session timeout is known (the header's session_timeout_ms, or "
                        "--session-timeout-ms): hand-overs of unreleased partitions are not "
                        "classified"
                    )
                )
        elif r.timing is not None:
            t = r.timing
            print(
                visible(
                    f"timing: {r.file}: session timeout {t['session_timeout_ms']} ms "
                    f"({t['sources'].get('session_timeout_ms')}), clock tolerance "
                    f"{t['clock_tolerance_ms']} ms; hand-overs of unreleased partitions: "
                    + _classes(r.handovers)
                )
            )
        if r.error:
            print(visible(f"groupcheck: error: {r.error}"), file=sys.stderr)
        for reason in r.reasons:  # with a violation or an error, they are by the way
            label = "inconclusive" if r.result == "inconclusive" else "note"
            print(visible(f"{label}: {r.file}: {reason}"))
        for note in r.notes:
            print(visible(f"note: {note}"))
        if r.convergence is not None and r.error is None:
            print(visible(f"convergence: {r.file}: {_convergence(r.convergence)}"))
    events = sum(r.events for r in reports)
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.result] = counts.get(r.result, 0) + 1
    files = ", ".join(f"{n} {name}" for name, n in counts.items())
    said = {
        "ok": "nothing violated",
        "violation": "a property is violated",
        "inconclusive": "nothing violated, but not everything could be checked",
        "malformed": "an input is malformed or unreadable",
    }.get(result, result)
    print(f"{result}: {said} ({events} events in {len(reports)} file(s): {files})")


def _convergence(c: dict[str, Any]) -> str:
    """Whether ``Observed.Convergence`` was checked, in words."""
    asked = f"--settle {c['settle']}" + (
        f", --settle-ms {c['settle_ms']}" if c.get("settle_ms") else ""
    )
    checked, unchecked = c["windows_checked"], c["windows_unchecked"]
    said = "checked" if c["checked"] else "not checked (see inconclusive)"
    if not c["checked"] and checked:
        said = "checked only in part (see inconclusive)"
    return (
        f"{said}: {checked} quiet window(s) checked, {unchecked} with members in the group "
        f"too short to check ({asked})"
    )


def _classes(handovers: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for h in handovers:
        counts[h["classification"]] = counts.get(h["classification"], 0) + 1
    return ", ".join(f"{n} {c}" for c, n in sorted(counts.items())) or "none"
