"""The classic protocol's presets (JoinGroup / SyncGroup), each registered where it is
declared (``model.preset_registry``); ``model.presets`` collects them into ``PRESETS``.

Classic groups, eager and cooperative (KIP-429), with client-side assignors run by the
leader; the classic mutant scenarios (groupcheck/mutants/catalogue.py). The presets of
offset expiry and group deletion in a classic group are shared with the consumer
protocol's and live in ``model/presets.py``.
"""

from __future__ import annotations

from dataclasses import replace

from model.config import ClientSpec, Config
from model.preset_registry import of_kind, register

CLASSIC_EAGER = register(
    Config(
        name="CLASSIC_EAGER",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("range",)),
            ClientSpec("B", ("foo",), assignors=("range",), subscribed=False),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
        max_restarts=0,
    ),
    kind="classic",
)
"""Eager rebalancing with the range assignor: B may join (A revokes everything before it
rejoins), someone may leave or crash."""

CLASSIC_COOPERATIVE = register(
    Config(
        name="CLASSIC_COOPERATIVE",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("B", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
        max_restarts=0,
    ),
    kind="classic",
)
"""Incremental cooperative rebalancing (KIP-429): A keeps what it owns across B's join,
revokes one partition after the first rebalance and a follow-up rebalance gives it to B."""

CLASSIC_STATIC = register(
    Config(
        name="CLASSIC_STATIC",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), instance_id="a", assignors=("cooperative-sticky",)),
            ClientSpec("B", ("foo",), instance_id="b", assignors=("cooperative-sticky",)),
        ),
        max_perturbations=3,
        perturbations=frozenset({"Crash", "Restart", "LoseMessage"}),
        max_restarts=1,
        warm_start=True,
    ),
    kind="classic",
)
"""Two static members (KIP-345) of a group already formed: a restarted instance replaces
its old member id without a rebalance in a STABLE group; the old id is fenced
(FENCED_INSTANCE_ID)."""

UPGRADE_TWO_BOUNCES = register(
    Config(
        name="UPGRADE_TWO_BOUNCES",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec(
                "A",
                ("foo",),
                assignors=("range",),
                kip429=False,
                bounces=(("range", "cooperative-sticky"), ("cooperative-sticky",)),
            ),
            ClientSpec(
                "B",
                ("foo",),
                assignors=("range",),
                kip429=False,
                bounces=(("range", "cooperative-sticky"), ("cooperative-sticky",)),
            ),
        ),
        max_perturbations=4,
        perturbations=frozenset({"Bounce", "AddPartitions"}),
        max_partitions_per_topic=3,
        warm_start=True,
    ),
    kind="classic",
)
"""KIP-429's upgrade path: byte code without KIP-429 running ``range`` is bounced to
``range, cooperative-sticky`` (still EAGER), then to ``cooperative-sticky`` alone
(COOPERATIVE), one instance at a time once the group settled; a partition may be added
on the way. Starts from the group formed on the old byte code."""

UPGRADE_ONE_BOUNCE = register(
    Config(
        name="UPGRADE_ONE_BOUNCE",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 4),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("cooperative-sticky",), kip429=False),
            ClientSpec(
                "B",
                ("foo",),
                assignors=("cooperative-sticky",),
                kip429=False,
                bounces=(("cooperative-sticky",),),
            ),
            ClientSpec(
                "C", ("foo",), assignors=("cooperative-sticky",), kip429=False, subscribed=False
            ),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Bounce", "Subscribe"}),
        warm_start=True,
    ),
    kind="classic",
)
"""The upgrade done wrong, in one bounce: an assignor that gained COOPERATIVE support
(as ``cooperative-sticky`` stands for here) is kept while the byte code is upgraded, so
a bounced member follows COOPERATIVE and keeps its partitions while the leader, still on
the old byte code, assigns as if everyone had revoked (KIP-429 "Compatibility and Upgrade
Path"). A and B start on four partitions; B is bounced; C may join."""

CLASSIC: tuple[Config, ...] = of_kind("classic")
"""The classic protocol's presets."""


# The classic protocol's mutant scenarios (groupcheck/mutants/catalogue.py).

MUTC_STICKY = register(
    Config(
        name="MUTC_STICKY",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("sticky",)),
            ClientSpec("B", ("foo",), assignors=("sticky",)),
        ),
        max_perturbations=2,
        perturbations=frozenset({"AddPartitions", "LoseMessage"}),
        live_timers=True,
        max_partitions_per_topic=3,
        warm_start=True,
    ),
    kind="classic-scenario",
)
"""Eager ``sticky`` (KIP-341) in a formed group: a partition is added; a lost request lets
the coordinator's timer remove a live member, which rejoins with the previous assignment
of an older generation in its user data."""

MUTC_COOPERATIVE = register(
    Config(
        name="MUTC_COOPERATIVE",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("B", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "LoseMessage"}),
        live_timers=True,
        max_restarts=0,
    ),
    kind="classic-scenario",
)
"""``cooperative-sticky``: B joins (A revokes one partition in a follow-up rebalance); a
lost request lets the coordinator's timer remove a live member, which rejoins with owned
partitions of an older generation."""

MUTC_STATIC = register(
    Config(
        name="MUTC_STATIC",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), instance_id="a", assignors=("range",)),
            ClientSpec("B", ("foo",), instance_id="b", assignors=("range",)),
            ClientSpec("C", ("foo",), assignors=("range",), subscribed=False),
        ),
        max_perturbations=3,
        perturbations=frozenset({"Subscribe", "Crash", "Restart"}),
        max_restarts=1,
        warm_start=True,
    ),
    kind="classic-scenario",
)
"""Two static members of a formed group; a dynamic member may join while a static member's
process is replaced by a new one."""

MUTC_STALL = register(
    replace(
        MUTC_STICKY,
        name="MUTC_STALL",
        clients=(
            ClientSpec("A", ("foo",), assignors=("range",)),
            ClientSpec("B", ("foo",), assignors=("range",), subscribed=False),
        ),
        perturbations=frozenset({"Subscribe", "StallAssignment"}),
        live_timers=False,
    ),
    kind="classic-scenario",
)
"""B joins; a member's application may hang after its JoinGroup response, before it sends
SyncGroup, while its heartbeat thread keeps the session."""

MUTC_MISSED_ROUND = register(
    Config(
        name="MUTC_MISSED_ROUND",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 3),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("B", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("C", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "LoseMessage"}),
        warm_start=True,
        max_restarts=0,
    ),
    kind="classic-scenario",
)
"""``cooperative-sticky`` with three members: A and B form the group on three partitions,
C joins. A lost JoinGroup response makes a member miss a round: it joins the next one
still owning, and claiming, the partitions of an older generation while the others claim
theirs at the newer one (KAFKA-14639)."""

MUTC_LATE_SYNC = register(
    replace(
        MUTC_MISSED_ROUND,
        name="MUTC_LATE_SYNC",
        max_perturbations=1,
        perturbations=frozenset({"Subscribe"}),
    ),
    kind="classic-scenario",
)
"""As ``MUTC_MISSED_ROUND`` without lost messages: C joins, and a member whose SyncGroup
arrives after the next rebalance started (a member revoking a partition rejoins at once)
is answered REBALANCE_IN_PROGRESS (KAFKA-14016)."""

MUTC_TWO_PROCESSES = register(
    Config(
        name="MUTC_TWO_PROCESSES",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), instance_id="a", assignors=("range",)),
            ClientSpec("A2", ("foo",), instance_id="a", assignors=("range",), subscribed=False),
            ClientSpec("C", ("foo",), assignors=("range",), subscribed=False),
        ),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe"}),
        warm_start=True,
        max_restarts=0,
    ),
    kind="classic-scenario",
)
"""Two live processes of one static instance ``a`` (KAFKA-8500): A forms the group; a
second process A2 of the same instance may start while A still runs, and a dynamic member
C may join, so A2's JoinGroup can arrive in any group state."""

MUTC_LEAVE = register(
    Config(
        name="MUTC_LEAVE",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 3),),
        clients=(
            ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("B", ("foo",), assignors=("cooperative-sticky",)),
            ClientSpec("C", ("foo",), assignors=("cooperative-sticky",)),
        ),
        max_perturbations=1,
        perturbations=frozenset({"Leave"}),
        warm_start=True,
        max_restarts=0,
        required_witnesses=("CooperativeMemberKeepsPartition", "GroupConverges"),
    ),
    kind="classic-scenario",
)
"""``cooperative-sticky`` with three members on three partitions, formed first; one member
leaves and the others share its partition, keeping their own. Nobody revokes anything, so
no follow-up rebalance (the FollowUpRebalance witness) is reachable."""

CLASSIC_SCENARIOS: tuple[Config, ...] = of_kind("classic-scenario")
"""The classic protocol's mutant scenarios, as presets of their own."""
