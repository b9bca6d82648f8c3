"""The reports' facets of each protocol family (issue 39), registered where they are
written and keyed by ``model.family.ProtocolFamily.name`` (``invariants.families``
explains the tables): ``RENDER``, how a path of the family is drawn
(``reports.render.view``), and ``EXPLAIN``, how its steps are told
(``reports.render.explain``). A mixed path is drawn as its group's family
(``ProtocolFamily.one_family``), so ``mixed`` has no facet here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from invariants.families import FacetTable


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderFacet:
    """How ``reports.render.view`` draws a path of one family: its ``protocol`` label
    (``TraceView.protocol``), who consumes what (``ownership``), what the coordinator
    assigns (``coordinator_assignment``), the note a step adds to its label
    (``step_note``), what the coordinator withholds from a client as of its last request
    (``withheld``; None: the family's responses say it themselves), a row's generation
    (``generation``), and whether its charts count in generations (``in_generations``:
    the generation row, commit labels, captions and colours of a classic chart)."""

    protocol: str
    in_generations: bool
    ownership: Callable[[Any], Any]
    coordinator_assignment: Callable[[Any], Any]
    step_note: Callable[[Any, Any], str]
    withheld: Callable[[Any, str], Any] | None
    generation: Callable[[Any], int | None]


RENDER: FacetTable[RenderFacet] = FacetTable(
    "render facet (reports.render.view)", ("reports.render.view",)
)
"""The drawing of each family with states of its own group type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplainFacet:
    """How ``reports.render.explain`` tells a path of one family: what a step changed
    (``changes``), the opening line (``opening``) and what a skipped step left unchanged
    (``unchanged``)."""

    changes: Callable[[Any, Any], list[str]]
    opening: Callable[[Any], str]
    unchanged: str


EXPLAIN: FacetTable[ExplainFacet] = FacetTable(
    "explain facet (reports.render.explain)", ("reports.render.explain",)
)
"""The telling of each family with states of its own group type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseStudyFacet:
    """How ``reports.casestudy`` shows a state of one family: as JSON-ready data
    (``group_view``) and in the KIP-848 case-study layout (``render_group``)."""

    group_view: Callable[[Any], dict[str, Any]]
    render_group: Callable[[Any], str]


CASESTUDY: FacetTable[CaseStudyFacet] = FacetTable(
    "case-study facet (reports.casestudy)", ("reports.casestudy", "reports.mixed_casestudy")
)
"""The case-study reading of each family (``mixed`` shows its group's family's layout)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LassoFacet:
    """How ``reports.render.lasso`` tells a fair loop of one family: what a state lacks
    for convergence, by who (``gaps``), and whether the loop's entry is searched for why a
    client is stuck (``why_stuck``: the KIP-848 heartbeats of the loop)."""

    gaps: Callable[[Any], dict[tuple[str, str], str]]
    why_stuck: bool


LASSO: FacetTable[LassoFacet] = FacetTable(
    "lasso facet (reports.render.lasso)", ("reports.render.lasso",)
)
"""The telling of each family's fair loops."""


WORDING: FacetTable[Mapping[str, tuple[str, str]]] = FacetTable(
    "property wording (reports.render.report)", ("reports.render.report",)
)
"""(description, reference) of the properties a family shares with the consumer protocol,
in the family's own terms, where the properties' own (KIP-848's member epochs and target
assignment) do not fit: ``reports.render.report.CLASSIC_TEXT``. A family without one is
told in the properties' own words."""
