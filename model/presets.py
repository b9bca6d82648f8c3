"""Named configurations. Presets bound perturbations, never progress (README.md,
Conventions).

``KIP848_CASE_STUDY`` reproduces the KIP text's own step structure: the target assignment
is computed as a separate coordinator step and epochs start at 0.
"""

from __future__ import annotations

from model.config import ClientSpec, Config
from model.status import ConfigError

TINY = Config(
    name="TINY",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
    max_restarts=0,
)
"""Two clients, one topic of two partitions; B may join, someone may leave or crash."""

SMALL = Config(
    name="SMALL",
    topics=(("foo", 3),),
    clients=(
        ClientSpec("A", ("foo",)),
        ClientSpec("B", ("foo",)),
        ClientSpec("C", ("foo",), subscribed=False),
    ),
    max_perturbations=4,
    perturbations=frozenset({"Subscribe", "Leave", "Crash", "Restart", "LoseMessage"}),
    auto_commit=True,
)
"""Three clients over three partitions, with joins, leaves, crashes and message loss."""

STATIC = Config(
    name="STATIC",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="b"),
    ),
    max_perturbations=3,
    perturbations=frozenset({"TemporaryLeave", "Subscribe", "Crash", "Restart", "LoseMessage"}),
)
"""Two static members that leave temporarily (-2), crash and come back."""

LOSSY = Config(
    name="LOSSY",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=3,
    perturbations=frozenset({"LoseMessage", "AbandonRequest", "Leave", "Subscribe"}),
    reorder=True,
    auto_commit=True,
)
"""Two clients over a network that loses messages and delivers abandoned requests late
and out of order."""

TOPICS = Config(
    name="TOPICS",
    topics=(("foo", 1), ("bar", 1)),
    clients=(ClientSpec("A", ("foo", "bar")), ClientSpec("B", ("foo",))),
    max_perturbations=3,
    perturbations=frozenset(
        {"ChangeSubscription", "AddPartitions", "RecreateTopic", "ChangeServerAssignor"}
    ),
    subscription_choices=(("foo",), ("foo", "bar"), ("bar",)),
    max_partitions_per_topic=2,
)
"""Subscription changes, partitions added, a topic recreated, an assignor switch."""

KIP848_CASE_STUDY = Config(
    name="KIP848_CASE_STUDY",
    topics=(("foo", 3),),
    clients=(
        ClientSpec("A", ("foo",), subscribed=False),
        ClientSpec("B", ("foo",), subscribed=False),
        ClientSpec("C", ("foo",), subscribed=False),
    ),
    max_perturbations=3,
    perturbations=frozenset({"Subscribe"}),
    compute_target_in_heartbeat=False,
    reconcile_while_assigning=False,
    epoch_layout="kip-848",
)
"""The KIP-848 "Basic" case study: A, B and C join one by one; the target assignment is
a step of its own."""

PRESETS: dict[str, Config] = {
    c.name: c for c in (TINY, SMALL, STATIC, LOSSY, TOPICS, KIP848_CASE_STUDY)
}


def preset(name: str) -> Config:
    """The preset called ``name`` (case-insensitive)."""
    config = PRESETS.get(name.upper())
    if config is None:
        raise ConfigError(f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}")
    return config
