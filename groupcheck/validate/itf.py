"""ITF mode: check a state sequence (``invariants.itf``) against the model's properties.

An ITF trace — from Apalache, Quint, TLC's ITF export, or ``groupcheck explore``'s
``trace.itf.json`` — is one JSON document, read whole: at most :data:`MAX_ITF_BYTES`, and
strictly (``model.trace.strict_json``: a key given twice, NaN, a lone surrogate is an
error at its line and column). Every state property must hold on every state and every
step property on every pair of consecutive states; a finding's line is the state index.
"""

from __future__ import annotations

from groupcheck.validate.report import Finding, Report
from invariants.expr import StepSnapshot
from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES
from model.trace import TraceError
from model.trace.lines import decode_utf8
from model.trace.strict_json import JsonTextError, loads
from reports.escape import cut, visible

MAX_ITF_BYTES = 64 * 2**20
"""The largest ITF document read (64 MiB): it is decoded whole, into several times as
much memory. The ITF traces of counterexamples are a few hundred KiB."""

MAX_MESSAGE = 2000
"""A finding's message (which names the document's own values) is cut to this length."""


def _message(text: str) -> str:
    return visible(cut(text, MAX_MESSAGE))


def parse_itf(file: str, data: bytes) -> object | Report:
    """The JSON document ``data`` holds, or a report of why it is not one."""
    try:
        doc: object = loads(decode_utf8(data))
    except TraceError as e:
        return Report(file, "itf", error=f"{file}:{e}")
    except JsonTextError as e:
        return Report(file, "itf", error=f"{file}:{e.line}:{e.column}: {e.reason}")
    return doc


def validate_itf(file: str, doc: object) -> Report:
    """Check an ITF state sequence (``invariants.itf``): every state property on every state,
    every step property on every pair of consecutive states. ``line`` is the state index."""
    from invariants.itf import ItfError, from_itf  # noqa: PLC0415  kept off `groupcheck --help`'s startup

    report = Report(file, "itf")
    try:
        if not isinstance(doc, dict):
            raise ItfError("not an ITF trace: expected a JSON object")
        snaps = from_itf(doc)
    except ItfError as e:
        report.error = f"{file}: {e}"
        return report
    except RecursionError:
        report.error = f"{file}: an ITF value nested too deeply"
        return report
    for i, snap in enumerate(snaps):
        report.events += 1
        for prop in STATE_PROPERTIES:
            if not prop.holds(snap):
                report.violations.append(Finding(file, i, prop.name, _message(prop.explain(snap))))
        if i:
            step = StepSnapshot(snaps[i - 1], snap)
            for prop in STEP_PROPERTIES:
                if not prop.holds(step):
                    report.violations.append(
                        Finding(file, i, prop.name, _message(prop.explain(step)))
                    )
    return report
