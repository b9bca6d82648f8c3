"""The mixed family's facet of ``reports.casestudy`` (KIP-848 "Online Migration"): a
mixed state as JSON-ready data (``mixed_group_view``), its group as the group's family
shows it and the clients of both protocols each as its own protocol shows them; in the
case-study layout, a mixed state is shown as its group's family (``render_group``)."""

from __future__ import annotations

from typing import Any

from model.classic.records import ClassicGroup
from model.migration.records import MixedState
from model.migration.system import (
    EMPTY_CLASSIC_GROUP,
    EMPTY_CONSUMER_GROUP,
    classic_view,
    consumer_view,
)
from reports.casestudy import classic_group_view, group_view, render_group
from reports.families import CASESTUDY, CaseStudyFacet


def mixed_group_view(state: MixedState) -> dict[str, Any]:
    """A mixed state: its group as its type renders it (``protocol`` says which), with the
    clients of both protocols, each as its own protocol renders it."""
    g = state.group
    if isinstance(g, ClassicGroup):
        out = classic_group_view(classic_view(state, g))
        others = group_view(consumer_view(state, EMPTY_CONSUMER_GROUP))["clients"]
        out["protocol"] = "classic"
    else:
        out = group_view(consumer_view(state, g))
        others = classic_group_view(classic_view(state, EMPTY_CLASSIC_GROUP))["clients"]
        out["protocol"] = "consumer"
        for mid, m in g.members.items():
            if m.classic is not None:
                out["members"][mid]["classic_protocols"] = list(m.classic.supported_protocols)
    out["clients"] = {**out["clients"], **others}
    out["in_flight"] = len(state.network)
    return out


CASESTUDY.register("mixed", CaseStudyFacet(group_view=mixed_group_view, render_group=render_group))
