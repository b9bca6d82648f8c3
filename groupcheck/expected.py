"""``groupcheck presets``: every preset's expected verdict under the reference rules
(``model.presets.EXPECTED``), as a table in docs/presets.md, and the check that runs them.

``groupcheck presets table --into docs/presets.md`` rewrites the table between the markers
``<!-- presets-table:begin -->`` and ``<!-- presets-table:end -->``;
``groupcheck presets check NAME ...`` explores each preset as its expectations say (bfs to
exhaustion, or the declared walks) and exits 1 when a verdict differs from the expected
one. tests/groupcheck/test_preset_verdicts.py checks that the table is current and runs the
expectations cheap enough for CI (``Expected.ci_max_states``, and the walks)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from groupcheck import exitcodes
from model.presets import BENCHMARK_PRESETS, EXPECTED, PRESETS, Expected, preset

BEGIN, END = "<!-- presets-table:begin -->", "<!-- presets-table:end -->"
TEST = "tests/groupcheck/test_preset_verdicts.py"


def expected_text(e: Expected) -> str:
    """The verdict in words: ``ok``, ``violation of P``, or a bounded expectation's."""
    if e.depth is not None:
        return f"inconclusive: no violation within {e.depth} steps; nothing claimed beyond"
    return "ok" if e.verdict == "ok" else f"violation of `{e.property}`"


def engine_text(e: Expected) -> str:
    """The engine and what fixes its run (seed, walks, ``--only``)."""
    text = e.engine
    if e.engine == "walk":
        text += f" (seed {e.seed}, {e.walks} walk{'s' if e.walks != 1 else ''})"
    if e.only:
        text += f", `--only {e.only}`"
    return text


def in_ci(e: Expected) -> bool:
    """Whether tests/groupcheck/test_preset_verdicts.py runs the expectation."""
    if e.checked_by is not None and e.ci_max_states is None:
        return False
    return e.ci_max_states is not None or e.engine == "walk" or e.depth is not None


def ci_text(e: Expected) -> str:
    """Where CI checks the verdict."""
    if e.depth is not None and e.checked_by is None:
        states = f", {e.states:,} states" if e.states is not None else ""
        return f"{TEST} (to depth {e.depth}{states})"
    if e.ci_max_states is not None or (e.engine == "walk" and e.checked_by is None):
        bound = f" (≤ {e.ci_max_states:,} states)" if e.ci_max_states is not None else ""
        return f"{TEST}{bound}"
    if e.checked_by:
        return e.checked_by
    if e.states is None:
        return "not in CI (too large); no complete run recorded yet"
    return "not in CI (too large)" + ("; `make bench`" if e.states > 1_000_000 else "")


def full_text(name: str, e: Expected) -> str:
    """The command that checks the verdict in full, what a complete run visited, and the
    largest run made."""
    states = f"; {e.states:,} states" if e.states is not None and e.depth is None else ""
    bound = ""
    if e.depth is not None:
        within = f", {e.states:,} states" if e.states is not None else ""
        bound = f" (to depth {e.depth}{within})"
    run = f"; measured: {e.run}" if e.run is not None else ""
    return f"`groupcheck presets check {name}`{bound}{states}{run}"


def table() -> str:
    """The markdown table of every preset's expected verdicts."""
    rows = [
        "| preset | engine | expected | finding | checked in CI by | full check |",
        "|---|---|---|---|---|---|",
    ]
    for name in (*PRESETS, *BENCHMARK_PRESETS):
        for e in EXPECTED[name]:
            finding = e.finding or "—"
            if finding.startswith("F") and finding[1:].isdigit():
                finding = f"[{finding}](findings.md)"
            rows.append(
                f"| {name} | {engine_text(e)} | {expected_text(e)} | {finding} "
                f"| {ci_text(e)} | {full_text(name, e)} |"
            )
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Checked:
    """One expectation run: whether the verdict matched, and what was found."""

    matches: bool
    found: str


def check(name: str, e: Expected, *, max_states: int | None = None) -> Checked:
    """Run ``e`` on the preset ``name`` with the reference rules. bfs runs to exhaustion,
    or within ``max_states`` (then an "ok" that did not exhaust does not match), or, for a
    bounded expectation, to ``e.depth``; walk runs the declared seed and walks.
    ``matches``: the verdict (and property) is the expected one — for a bounded one, no
    violation and every state within the depth visited."""
    from groupcheck.explore.bfs import bfs
    from groupcheck.explore.run import Selection
    from groupcheck.explore.walk import walk

    config = preset(name)
    selection = Selection.of([e.only] if e.only else None)
    if e.engine == "bfs":
        result = bfs(
            config,
            max_states=max_states,
            max_depth=e.depth,
            checker_factory=selection.checker,
            check_convergence=selection.convergence,
        )
    elif e.engine == "walk":
        result = walk(
            config,
            seed=e.seed,
            walks=e.walks,
            checker_factory=selection.checker,
            check_convergence=selection.convergence,
        )
    else:
        raise ValueError(f"{name}: unknown engine {e.engine!r}")
    found = result.result + (f" of {result.property}" if result.property else "")
    if result.missed_witnesses:
        found += f" (witnesses missed: {', '.join(result.missed_witnesses)})"
    if result.distinct_states is not None:
        found += f", {result.distinct_states} states"
    if e.depth is not None:
        found = f"within {e.depth} steps: {found}"
        within = result.checked.startswith(f"every state within {e.depth} steps")
        matches = result.property is None and (within or bool(result.exhausted))
    else:
        matches = result.result == e.verdict and result.property == e.property
    return Checked(matches, found)


def register(sub: Any) -> None:
    """Add the ``presets`` command and its subcommands."""
    p = sub.add_parser(
        "presets",
        help="the presets' expected verdicts under the reference rules (docs/presets.md)",
        description=(
            "Every preset declares its expected verdict under the reference rules per "
            "engine (model/presets.py, EXPECTED). 'table' prints them as markdown; 'check' "
            "runs them. Exit status: 0 every verdict as expected, 1 one differs, 2 bad input."
        ),
    )
    psub = p.add_subparsers(dest="presets_command", metavar="SUBCOMMAND", required=True)
    tab = psub.add_parser("table", help="print the table of expected verdicts")
    tab.add_argument(
        "--into",
        metavar="FILE",
        help=f"replace the table between the markers {BEGIN} and {END} in FILE",
    )
    tab.set_defaults(handler=cmd_table)
    chk = psub.add_parser("check", help="run presets' expectations and compare the verdicts")
    chk.add_argument("names", nargs="+", metavar="PRESET")
    chk.set_defaults(handler=cmd_check)


def cmd_table(args: argparse.Namespace) -> int:
    from reports.publish import write_between_markers

    text = table()
    if args.into is None:
        print(text, end="")
        return 0
    write_between_markers(args.into, BEGIN, END, text)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    names = [preset(n).name for n in args.names]  # unknown names: ConfigError, exit 2
    code = exitcodes.OK
    for name in names:
        for e in EXPECTED[name]:
            got = check(name, e)
            mark = "as expected" if got.matches else "DIFFERS"
            print(
                f"{name} {engine_text(e)}: expected {expected_text(e)}; found {got.found}: {mark}"
            )
            if not got.matches:
                code = exitcodes.VIOLATION
    return code
