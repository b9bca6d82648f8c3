"""The commands' facets of each protocol family (issue 39), registered where they are
written and keyed by ``model.family.ProtocolFamily.name`` (``invariants.families``
explains the tables): ``SAFETY``, how ``groupcheck validate`` checks a trace of the family
in safety mode (``groupcheck.validate.safety``, ``safety_classic``, ``safety_mixed``),
``AGREEMENT``, how ``groupcheck prove --agreement`` checks the family's symbolic relation
against the model (``groupcheck.symbolic.agreement``), ``CAPTURE``, how ``groupcheck
capture`` records the family's groups (``groupcheck.capture.proxy``), and the facets only
the consumer family (KIP-848) has: ``TIMED``, its discrete-event simulation
(``groupcheck.timed``), ``TLA``, its projection onto ``tla/KIP848.tla``'s variables
(``groupcheck.tla``), and ``STATISTICS``, the KIP-848 reconciliation measures of a sweep's
run (``groupcheck.pipeline.runs``). A command that needs a facet its config's family lacks
refuses the config by name (:func:`facet_for`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from invariants.families import FacetTable
from model.status import ConfigError

if TYPE_CHECKING:
    from groupcheck.validate.report import Report
    from groupcheck.validate.timing import TimingOptions
    from model.config import Config
    from model.trace import TraceHeader

T = TypeVar("T")


def facet_for(table: FacetTable[T], config: Config) -> T:
    """The facet of ``config``'s family in ``table``; a family without one is a
    ``ConfigError`` naming the families that have one (``FacetTable.named``)."""
    try:
        return table.of_config(config)
    except LookupError as e:
        raise ConfigError(str(e)) from None


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


@dataclass(frozen=True, slots=True, kw_only=True)
class CoordinatorFacet:
    """How ``groupcheck validate --mode coordinator`` replays a trace of one family:
    ``replay(file, header, events, report, timing, all_divergences, **consumer_options)``
    on its decoded events, and whether the replay can be ``streamed`` (memory bounded by a
    window of events: ``groupcheck.validate.coordinator_mode._stream``)."""

    replay: Callable[..., Report]
    streamed: bool


COORDINATOR: FacetTable[CoordinatorFacet] = FacetTable(
    "coordinator replay (groupcheck.validate)",
    ("groupcheck.validate.coordinator_mode", "groupcheck.validate.mixed_coordinator"),
)
"""Coordinator mode's replay of each family's traces: the KIP-848 replay
(``coordinator_mode``), and the classic and mixed captures' through the mixed family's
system (``mixed_coordinator``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureFacet:
    """How ``groupcheck capture`` records a group of one family: the command's options
    that select the family's trace (``options``: ``--mixed`` for a group whose members
    speak both protocols), and whether it writes an OffsetCommit (a request of both
    protocols) in the classic protocol (``classic_commit(proxy, exchange)``: a consumer
    trace's never, a classic trace's always, a mixed trace's when a classic client holds
    its member id), and the header key the ``--session-timeout-ms`` option is written
    under (``session_timeout_key``: a mixed trace's ``consumer_session_timeout_ms``, the
    consumer group's, its classic members' own being on the wire)."""

    options: tuple[str, ...]
    classic_commit: Callable[[Any, Any], bool]
    session_timeout_key: str


CAPTURE: FacetTable[CaptureFacet] = FacetTable(
    "capture facet (groupcheck.capture.proxy)", ("groupcheck.capture.proxy",)
)
"""How each family's groups are captured (``groupcheck.capture.proxy``,
``groupcheck.kafka.run``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedFacet:
    """How ``groupcheck.timed.engine`` runs a family: its ``initial``, ``enabled`` and
    ``step`` on the states whose heartbeats, deliveries and assignor runs the simulation
    times (``model.system``'s functions of the family, typed for its states)."""

    initial: Callable[[Any], Any]
    enabled: Callable[[Any, Any], tuple[Any, ...]]
    step: Callable[[Any, Any, Any], Any]


TIMED: FacetTable[TimedFacet] = FacetTable(
    "timed simulation (groupcheck.timed.engine)", ("groupcheck.timed.engine",)
)
"""The timed simulation of each family that has one (the consumer family's: KIP-848
heartbeats and KIP-1263 assignor timing)."""

TLA: FacetTable[Callable[[Any, int], Any]] = FacetTable(
    "TLA+ projection (groupcheck.tla.project)", ("groupcheck.tla.project",)
)
"""``project(state, partitions)``: a state of the family as ``tla/KIP848.tla``'s
variables, for each family the spec models (the consumer family)."""

STATISTICS: FacetTable[Callable[[Any, Any, Any], None]] = FacetTable(
    "run statistics (groupcheck.pipeline.runs)", ("groupcheck.pipeline.runs",)
)
"""``tally(trajectory, pre, post)``: the family's measures of one step of a sweep's run
(``groupcheck.pipeline.runs.Trajectory``: revocations and waits on unreleased
partitions, KIP-848 notions); a family without them counts none."""


CHECK_WORDING: FacetTable[Mapping[str, tuple[str, str]]] = FacetTable(
    "safety-check wording (groupcheck.validate)", ("groupcheck.validate.safety_classic",)
)
"""(description, reference) of the safety-mode checks of a family's traces that share a
name with the consumer protocol's and are told otherwise (``safety_classic``'s
``CLASSIC_OBSERVED_CHECKS``); a family without them is told in the consumer checks'
words."""
