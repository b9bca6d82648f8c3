"""The result of a pipeline job — ok, violation or inconclusive (``invariants.verdict``) —
its reasons, and the exit status (``groupcheck.exitcodes``).

A sweep (``explore``) is

- a **violation** when a run violated a property;
- otherwise **inconclusive** when a run raised an error (a crash of the model: exit status
  4, an internal error), when the runs of some cell together missed a ``SOMETIMES``
  witness (``invariants.liveness.WITNESSES``): that cell's runs may be vacuous, or when a
  run's Convergence was left undecided (``converged`` null with no violation and no
  error: the fair schedule's bound cut it without showing a fair loop or a stuck state —
  a Convergence violation is claimed only when shown);
- otherwise **ok**.

A corpus (``validate``) is a violation when a trace violates a property; otherwise
inconclusive when a trace is inconclusive (say, too few events after the last perturbation
to require convergence) or malformed (not validated: exit status 2); otherwise ok.

Trace verdicts come in two spellings: ``ok | violation | inconclusive | malformed`` and the
older ``valid | violations | malformed`` (``groupcheck.validate.Report.result``), where a
``valid`` trace whose notes say convergence was inconclusive is inconclusive. Both are
read (parts written before the change count the same), and rows are written in the first.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from groupcheck import exitcodes
from invariants.liveness import WITNESSES, required_witnesses
from invariants.verdict import Result
from model.presets import PRESETS
from model.settings import option_value

if TYPE_CHECKING:
    import pyarrow as pa

MAX_REASONS = 20
"""Cells named one by one in the reasons; the summary's ``missed_witnesses`` has them all."""

TRACE_VERDICTS = ("ok", "violation", "inconclusive", "malformed")

_SPELLINGS = {
    "ok": "ok",
    "valid": "ok",
    "violation": "violation",
    "violations": "violation",
    "inconclusive": "inconclusive",
    "malformed": "malformed",
}


def trace_verdict(result: str, notes: Iterable[str] = ()) -> str:
    """One trace's verdict in the spelling ``ok | violation | inconclusive | malformed``."""
    verdict = _SPELLINGS.get(result)
    if verdict is None:
        raise ValueError(f"unknown trace verdict {result!r}")
    if result == "valid" and any("inconclusive" in note for note in notes):
        return "inconclusive"
    return verdict


# --------------------------------------------------------------------------- sweeps


def required_of_cell(cell: Mapping[str, Any]) -> frozenset[str]:
    """The witnesses a cell (as a plan's JSON lists it: preset and options) must hit
    (``invariants.liveness.required_witnesses``: the ones its config can show)."""
    options = cell.get("options", {})
    changes = {k: option_value(k, v, f"cell {cell.get('label')!r}") for k, v in options.items()}
    return required_witnesses(replace(PRESETS[cell["preset"]], **changes))


def explore_verdict(
    runs: pa.Table,
    labels: Mapping[int, str],
    required: Mapping[int, Collection[str]] | None = None,
) -> dict[str, Any]:
    """The findings and result of a sweep from its run rows (columns ``cell``, ``seed``,
    ``witnesses``, ``violation``, ``error`` and, when present, ``converged``); ``labels``
    names each cell, ``required`` says which witnesses each cell must hit (every witness
    when not given)."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task
    import pyarrow.compute as pc  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    counts = pc.value_counts(runs["violation"].drop_null()).to_pylist()
    by_property = {d["values"]: d["counts"] for d in counts}
    violations = sum(by_property.values())
    errored = runs.filter(pc.is_valid(runs["error"]))
    errors = errored.num_rows

    names = [w.prop.name for w in WITNESSES]
    parents = pc.list_parent_indices(runs["witnesses"])
    hits = pa.table(
        {
            "cell": pc.take(runs["cell"], parents),
            "witness": pc.list_flatten(runs["witnesses"]),
        }
    )
    distinct = hits.group_by(["cell", "witness"]).aggregate([])
    hit: dict[int, set[str]] = {}
    for cell, witness in zip(
        distinct["cell"].to_pylist(), distinct["witness"].to_pylist(), strict=True
    ):
        hit.setdefault(cell, set()).add(witness)
    cells = sorted(pc.unique(runs["cell"]).to_pylist())
    missed: list[dict[str, Any]] = []
    for c in cells:
        wanted = required.get(c, names) if required is not None else names
        lost = [n for n in names if n in wanted and n not in hit.get(c, set())]
        if lost:
            missed.append({"cell": c, "config": labels.get(c, str(c)), "missed": lost})

    reasons: list[str] = []
    if errors:
        first = errored.slice(0, 1).select(["cell", "seed", "error"]).to_pylist()[0]
        reasons.append(
            f"{errors} runs raised an error (a model crash, an internal error); the first: "
            f"{labels.get(first['cell'], first['cell'])} seed {first['seed']}: {first['error']}"
        )
    if missed:
        reasons.append(
            f"{len(missed)} of {len(cells)} cells missed SOMETIMES witnesses "
            "(their runs may be vacuous)"
        )
        reasons += [f"{m['config']}: missed {', '.join(m['missed'])}" for m in missed[:MAX_REASONS]]
        if len(missed) > MAX_REASONS:
            reasons.append(
                f"… and {len(missed) - MAX_REASONS} more cells (missed_witnesses lists them all)"
            )
    if "converged" in runs.column_names:
        unmeasured = pc.and_(pc.is_null(runs["converged"]), pc.is_null(runs["violation"]))
        undecided = runs.filter(pc.and_(unmeasured, pc.is_null(runs["error"]))).num_rows
        if undecided:
            reasons.append(
                f"{undecided} runs left Convergence undecided: the fair schedule's bound cut "
                "it without showing a fair loop or a stuck state"
            )
    if violations:
        result = Result.VIOLATION
        reasons = []
    else:
        result = Result.INCONCLUSIVE if reasons else Result.OK
    return {
        "result": str(result),
        "reasons": reasons,
        "runs": runs.num_rows,
        "violations": violations,
        "by_property": dict(sorted(by_property.items())),
        "errors": errors,
        "missed_witnesses": missed,
    }


def explore_exit(summary: Mapping[str, Any]) -> int:
    """Violation 1; else a run that raised an error 4; else inconclusive 3; else 0."""
    crashed = exitcodes.INTERNAL_ERROR if summary["errors"] else exitcodes.OK
    return exitcodes.worst(exitcodes.exit_code(summary["result"]), crashed)


# --------------------------------------------------------------------------- corpora


def validate_verdict(traces: pa.Table) -> dict[str, Any]:
    """The counts and result of a corpus from its trace rows (columns ``result``,
    ``notes``, ``violations``, and ``error``, which names a malformed trace's file)."""
    import pyarrow.compute as pc  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    verdicts = [
        trace_verdict(r, n or ())
        for r, n in zip(traces["result"].to_pylist(), traces["notes"].to_pylist(), strict=True)
    ]
    count = {v: verdicts.count(v) for v in TRACE_VERDICTS}
    flat = pc.list_flatten(traces["violations"])
    props = pc.value_counts(pc.struct_field(flat, "property")).to_pylist() if len(flat) else []
    reasons: list[str] = []
    first_malformed = None
    if count["malformed"]:
        # The first malformed trace's error names its file, line and column (issue 42).
        errors = (
            traces["error"].to_pylist()
            if "error" in traces.column_names
            else [None] * len(verdicts)
        )
        first_malformed = next(
            (e for v, e in zip(verdicts, errors, strict=True) if v == "malformed" and e), None
        )
        reasons.append(
            f"{count['malformed']} traces are malformed or unreadable (not validated)"
            + (f"; the first: {first_malformed}" if first_malformed else "")
        )
    if count["inconclusive"]:
        notes = traces["notes"].to_pylist()
        first = next(
            (n for v, n in zip(verdicts, notes, strict=True) if n and v == "inconclusive"), None
        )
        reasons.append(
            f"{count['inconclusive']} traces are inconclusive"
            + (f"; the first: {first[0]}" if first else "")
        )
    if count["violation"]:
        result = Result.VIOLATION
        reasons = []
    else:
        result = Result.INCONCLUSIVE if reasons else Result.OK
    return {
        "result": str(result),
        "reasons": reasons,
        "traces": traces.num_rows,
        "ok": count["ok"],
        "with_violations": count["violation"],
        "inconclusive": count["inconclusive"],
        "malformed": count["malformed"],
        "first_malformed": first_malformed,
        "by_property": dict(sorted((d["values"], d["counts"]) for d in props)),
    }


def validate_exit(summary: Mapping[str, Any]) -> int:
    """Violation 1; else a malformed trace 2; else inconclusive 3; else 0."""
    return exitcodes.worst(
        exitcodes.VIOLATION if summary["with_violations"] else exitcodes.OK,
        exitcodes.BAD_INPUT if summary["malformed"] else exitcodes.OK,
        exitcodes.INCONCLUSIVE if summary["inconclusive"] else exitcodes.OK,
    )
