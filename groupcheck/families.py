"""The commands' facets of each protocol family (issue 39), registered where they are
written and keyed by ``model.family.ProtocolFamily.name`` (``invariants.families``
explains the tables): ``SAFETY``, how ``groupcheck validate`` checks a trace of the family
in safety mode (``groupcheck.validate.safety``, ``safety_classic``, ``safety_mixed``), and
``AGREEMENT``, how ``groupcheck prove --agreement`` checks the family's symbolic relation
against the model (``groupcheck.symbolic.agreement``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from invariants.families import FacetTable

if TYPE_CHECKING:
    from groupcheck.validate.report import Report
    from groupcheck.validate.timing import TimingOptions
    from model.trace import TraceHeader

SafetyCheck = Callable[[str, "TraceHeader", Iterator[str], int, "TimingOptions | None"], "Report"]
"""Safety mode on the events of a trace whose header (line 1) has been read: ``(file,
header, lines from line 2, settle, timing)``."""

SAFETY: FacetTable[SafetyCheck] = FacetTable(
    "safety check (groupcheck.validate)",
    (
        "groupcheck.validate.safety",
        "groupcheck.validate.safety_classic",
        "groupcheck.validate.safety_mixed",
    ),
)
"""Safety mode's check of each family's traces (by the trace header's ``protocol``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgreementFacet:
    """``prove --agreement`` on one family: ``check(config, variant, budget)`` walks the
    model and checks each step against the family's relation; ``outside(config)`` says why
    the relation cannot check a config (None: it can); ``bfs_by_default``: whether the
    check also runs a BFS when ``--bfs`` is not given."""

    check: Callable[[Any, str | None, dict[str, Any]], Any]
    outside: Callable[[Any], str | None]
    bfs_by_default: bool


AGREEMENT: FacetTable[AgreementFacet] = FacetTable(
    "agreement check (groupcheck.symbolic.agreement)", ("groupcheck.symbolic.agreement",)
)
"""``prove --agreement``'s check of each family's symbolic relation."""
