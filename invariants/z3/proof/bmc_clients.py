"""A client layer for bounded model checking: the Java client's heartbeat report,
reconciliation and revocation commit over the symbolic coordinator core.

The core's heartbeat takes *any* request (``invariants.z3.proof.transition``), so a rule
of the client — what it reports as owned, when it acknowledges — makes no difference to
it, and a property of what a client consumes cannot be read on it. This layer adds, per
client of the configuration, the fields ``model.consumer.client`` keeps for that: its status
(JOINING, RECONCILING, ACKNOWLEDGING, STABLE), member epoch, the partitions it consumes
(``owns``, the vocabulary's ``client_owns``), those it is still revoking (``revoking``:
their offsets being committed), the last target received (``target``), the target being
applied (``reconciling``), the revocation commit in flight with its epoch, and what its
last heartbeat reported (``sent``, so that an unchanged report is sent as null). Like the
diagnosis layer (``invariants.z3.proof.clients``) it reads the client vocabulary through
``invariants.z3.proof.reading`` on the ``Client`` sort; the client of member ``m<i>`` is the
configuration's client whose member id is the universe's ``i``-th.

Its steps, for a client ``c`` of member ``m`` (``model.consumer.client``,
``model.consumer.system``):

``SendHeartbeat``
  ``build_heartbeat`` (``reported_partitions``; the epoch, 0 when JOINING; null owned
  partitions when unchanged since the last report): the request in flight;
``DeliverHeartbeat``
  the coordinator's heartbeat family on it, with the client's subscription, accepted: the
  response in flight (the new member epoch; the assignment when ``send_assignment``);
``HeartbeatResponse``
  ``on_heartbeat_response``: the new member epoch; a new assignment starts RECONCILING;
``ClientHeartbeat``
  the three at once, when nothing else of the client's is in flight;
``Reconcile``
  ``reconcile``: with partitions to revoke at an epoch > 0 (and
  ``Config.commit_on_revoke``) the client stops consuming them and sends the commit of
  their offsets; otherwise it takes the target at once and acknowledges with its next
  heartbeat;
``DeliverCommit``
  the coordinator's offset-commit family on that commit: its response in flight;
``CommitResponse``
  ``on_commit_response`` / ``finish_reconcile``: the target is taken, the revocation done.

With ``Layer.leaves`` (for the variants of ``LEAVE_VARIANTS``, on a configuration that
allows ``Leave``) a client may also leave, as ``model.consumer.system`` lets it:

``Leave``
  ``leave`` (``unsubscribe()``): PREPARE_LEAVING, a perturbation of the configuration's
  budget (each client not subscribed from the start spends one too);
``ReleaseAssignment``
  ``release_assignment`` (``AbstractMembershipManager.leaveGroup``): LEAVING, with no
  target, nothing consumed, reconciled or revoked;
``ClientLeave``
  the leave heartbeat (``build_heartbeat`` of LEAVING: member epoch -1, the client
  UNSUBSCRIBED at epoch 0 once it is sent), the coordinator's leave family on it
  (``GroupMetadataManager.consumerGroupLeave``: the member removed) and the response
  (epoch -1), which ``on_heartbeat_response`` ignores in UNSUBSCRIBED — sent, delivered and
  answered in one step.

With ``Layer.lossy`` (the lasso search of ``invariants.z3.proof.bmc_lasso``, on a
configuration that allows ``LoseMessage``) a joining client's heartbeat response may be
lost and its request time out (``LoseResponse``: ``client.disconnect``), a heartbeat may be
answered with a fencing error (``FencedHeartbeat``: ``on_heartbeat_error``, FENCED at epoch
0 with nothing) and a fenced client rejoins (``Rejoin``: ``client.rejoin``): the exceptions
to the restriction below.

The client epochs are read by ``client_epoch`` (``invariants.z3.proof.reading``), so the
step property ``ClientEpochMonotone`` is a goal of the layer with leaves
(``CLIENT_STEP_GOALS``).

With ``Layer.polls`` (for ``POLL_VARIANTS``, on a configuration that allows
``PollTimerExpires``) a client's poll timer may expire, as ``model.consumer.system`` lets it:

``PollTimerExpires``
  ``poll_timer_expires`` (``transitionToSendingLeaveGroup(dueToExpiredPollTimer=true)``):
  LEAVING at once, without releasing — a perturbation of the budget, of a client in the
  group at an epoch > 0;
``StaleLeave``
  the leave heartbeat (``build_heartbeat`` of LEAVING after the poll timer: member epoch
  -1, the client STALE at epoch 0 once it is sent, its partitions lost:
  ``lose_partitions``), the coordinator's leave family on it (the member removed) and the
  response, which ``on_heartbeat_response`` ignores in STALE — sent, delivered and
  answered in one step; the client is a zombie (``Client.expired``, its member gone) until
  it sends a heartbeat at epoch 0;
``Poll``
  ``poll`` (``maybeRejoinStaleMember``): a STALE client whose ``onPartitionsLost`` ran
  rejoins, JOINING at epoch 0.

``JoiningClientOwnsNothing`` is then a goal too (``POLL_GOALS``). With ``Layer.callbacks``
(``Config.callback_steps``, for ``CALLBACK_VARIANTS`` only) a reconciliation without a
revocation commit, and the end of one, start ``onPartitionsRevoked`` or
``onPartitionsAssigned``, a stale leave queues ``onPartitionsLost`` behind the callback
that runs, and

``CompleteCallback``
  ``complete_callback``: the reconciliation goes on (or is applied), or is dropped when
  the client left RECONCILING or rejoined meanwhile (``reconciliation_aborted``).

Each channel delivers in order (``model.network.deliverable``): a client's heartbeat and
commit reach the coordinator in the order sent, and their responses come back in that
order. Steps of different clients of which one is local to its client
(``LOCAL_FAMILIES``) commute; ``bmc.Unrolling`` keeps only their order by client.

It is a *restriction* of the model's clients (nothing is lost or times out, every
heartbeat is accepted, no client crashes or is fenced, no auto-commit, every client
subscribed from the start; a client leaves only with ``Layer.leaves``, only while it
consumes nothing and has nothing in flight or being reconciled — so its release commits
nothing — with its leave heartbeat sent, delivered and answered at once, and it does not
subscribe again; a poll timer expires only with ``Layer.polls``, once per client and only
while nothing of the client's is in flight, its leave heartbeat sent, delivered and
answered at once; callbacks are steps only with ``Layer.callbacks``), so "no violation within ``k``
steps" speaks of this layer only; a path found is replayed by the Python clients and
coordinator (:func:`replay_clients`) and lifted to a model trace like the core's paths.
``Options.variant`` may name a client-side mutant of ``groupcheck/mutants/catalogue.py``
(``CLIENT_VARIANTS``): the rule it breaks is encoded here; the coordinator's families are
the reference ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.expr import StepSnapshot, compile_expr
from invariants.properties import (
    CLIENT_EPOCH_MONOTONE,
    JOINING_OWNS_NOTHING,
    OWNED_PARTITIONS_ARE_HELD,
    REVOKED_BEFORE_REASSIGNED,
)
from invariants.z3.proof.induction import Conjunct, _property
from invariants.z3.proof.reading import CLIENT
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    BoolRef,
    ExprRef,
    Partition,
    SymState,
    Universe,
)
from invariants.z3.proof.transition import (
    Family,
    Options,
    _remove,
    heartbeat,
    offset_commit,
    stutter,
)
from model.config import Config
from model.consumer.system import consumer_initial
from model.status import ClientStatus

JOINING, RECONCILING, ACKNOWLEDGING, STABLE = 0, 1, 2, 3
PREPARE_LEAVING, LEAVING, UNSUBSCRIBED, STALE = 4, 5, 6, 7
FENCED = 8
STATUS_NAMES = (
    "JOINING",
    "RECONCILING",
    "ACKNOWLEDGING",
    "STABLE",
    "PREPARE_LEAVING",
    "LEAVING",
    "UNSUBSCRIBED",
    "STALE",
    "FENCED",
)
NO_CALLBACK, REVOKED_CALLBACK, ASSIGNED_CALLBACK, LOST_CALLBACK = 0, 1, 2, 3
CALLBACK_NAMES = (None, "onPartitionsRevoked", "onPartitionsAssigned", "onPartitionsLost")
"""The rebalance callback a client runs (``Client.callback``; ``model.consumer.client``'s names)."""

CLIENT_VARIANTS = {
    "client-acks-before-revoking": "while RECONCILING, a heartbeat reports the received "
    "target as owned (the acknowledgement races the revocation)",
    "ack-while-revoking": "a heartbeat reports the partitions being revoked as gone while "
    "their offsets are still being committed",
    "adopt-negative-epoch": "the response to the leave heartbeat (epoch -1) sets the "
    "client's member epoch (KAFKA-19335)",
    "poll-timeout-keeps-partitions": "a client whose poll timer expired keeps its "
    "partitions when its leave heartbeat makes it STALE (no onPartitionsLost), and into "
    "its rejoin",
    "callback-ignores-abort": "the end of a rebalance callback applies its reconciliation "
    "although the client was fenced, left or rejoined meanwhile "
    "(maybeAbortReconciliation dropped)",
}
"""The catalogue mutants with a symbolic variant in the client layer."""

LEAVE_VARIANTS = frozenset({"adopt-negative-epoch"})
"""The client-side variants the layer unrolls with its clients' leaves (``Layer.leaves``)."""

POLL_VARIANTS = frozenset({"poll-timeout-keeps-partitions", "callback-ignores-abort"})
"""The client-side variants the layer unrolls with its clients' poll timers
(``Layer.polls``)."""

CALLBACK_VARIANTS = frozenset({"callback-ignores-abort"})
"""The client-side variants the layer unrolls with rebalance callbacks as steps
(``Layer.callbacks``, on a configuration with ``Config.callback_steps``)."""

CLIENT_GOALS: tuple[Conjunct, ...] = (
    _property(OWNED_PARTITIONS_ARE_HELD),
    _property(REVOKED_BEFORE_REASSIGNED),
)
"""The client properties BMC reads with the client layer on."""

POLL_GOALS: tuple[Conjunct, ...] = (_property(JOINING_OWNS_NOTHING),)
"""The client properties BMC reads with the layer's poll timers on (a client rejoins)."""

CLIENT_STEP_GOALS: tuple[Conjunct, ...] = (_property(CLIENT_EPOCH_MONOTONE),)
"""The client step properties BMC reads with the client layer on (one client process
each: ``client_incarnation`` is 0)."""

LOCAL_FAMILIES = frozenset(
    {
        "SendHeartbeat",
        "HeartbeatResponse",
        "Reconcile",
        "CommitResponse",
        "Leave",
        "ReleaseAssignment",
        "PollTimerExpires",
        "Poll",
        "CompleteCallback",
    }
)
"""The layer's steps that change only their client's fields (not the coordinator's).
``Leave`` also reads how many clients have left, which no other client's local step
changes (only a leave makes a client PREPARE_LEAVING), so these steps still commute;
``PollTimerExpires`` likewise reads how many poll timers expired, which only a
``PollTimerExpires`` changes."""

CLIENT_FAMILIES = (
    "ClientHeartbeat",
    "SendHeartbeat",
    "DeliverHeartbeat",
    "HeartbeatResponse",
    "Reconcile",
    "DeliverCommit",
    "CommitResponse",
    "Leave",
    "ReleaseAssignment",
    "ClientLeave",
    "PollTimerExpires",
    "StaleLeave",
    "Poll",
    "CompleteCallback",
)

_p = z3.Const("p", PARTITION)


@dataclass(frozen=True)
class ClientVars:
    """The client layer's fields in one symbolic state (functions of a client, and of a
    partition for sets). ``cmem`` is shared by every state: a client keeps its member id."""

    cmem: Any
    status: Any
    epoch: Any
    owns: Any
    revoking: Any
    target: Any
    has_target: Any
    reconciling: Any
    has_reconciling: Any
    committing: Any
    commit_epoch: Any
    sent_ok: Any
    sent: Any
    req: Any
    req_epoch: Any
    req_null: Any
    req_full: Any
    req_owned: Any
    resp: Any
    resp_epoch: Any
    resp_has_assignment: Any
    resp_assignment: Any
    commit_resp: Any
    hb_ahead: Any
    """The heartbeat in flight (request or response) was sent before the revocation commit
    in flight: each channel delivers in order (``model.network.deliverable``), and the
    coordinator answers in the order it is delivered to, so the heartbeat stays ahead."""
    zombie: Any
    """``Client.expired`` while the client's member is gone: its poll timer made it leave
    and its leave was delivered, and it has sent no heartbeat at epoch 0 since (the
    layer removes a member only with such a leave)."""
    poll_expired: Any
    timer_spent: Any
    """The client's poll timer expired once (the layer lets it expire once per client)."""
    callback: Any
    lost_queued: Any
    rejoined: Any
    """``Client.rejoined_while_reconciling``."""

    @staticmethod
    def fresh(tag: str, cmem: Any) -> ClientVars:
        C, P, B, Z = CLIENT, PARTITION, z3.BoolSort(), z3.IntSort()

        def f(name: str, *sorts: Any) -> Any:
            return z3.Function(f"client.{name}.{tag}", *sorts)

        return ClientVars(
            cmem=cmem,
            status=f("status", C, Z),
            epoch=f("epoch", C, Z),
            owns=f("owns", C, P, B),
            revoking=f("revoking", C, P, B),
            target=f("target", C, P, B),
            has_target=f("has_target", C, B),
            reconciling=f("reconciling", C, P, B),
            has_reconciling=f("has_reconciling", C, B),
            committing=f("committing", C, B),
            commit_epoch=f("commit_epoch", C, Z),
            sent_ok=f("sent_ok", C, B),
            sent=f("sent", C, P, B),
            req=f("request", C, B),
            req_epoch=f("request_epoch", C, Z),
            req_null=f("request_null", C, B),
            req_full=f("request_full", C, B),
            req_owned=f("request_owned", C, P, B),
            resp=f("response", C, B),
            resp_epoch=f("response_epoch", C, Z),
            resp_has_assignment=f("response_has_assignment", C, B),
            resp_assignment=f("response_assignment", C, P, B),
            commit_resp=f("commit_response", C, B),
            hb_ahead=f("heartbeat_ahead", C, B),
            zombie=f("zombie", C, B),
            poll_expired=f("poll_expired", C, B),
            timer_spent=f("timer_spent", C, B),
            callback=f("callback", C, Z),
            lost_queued=f("lost_queued", C, B),
            rejoined=f("rejoined", C, B),
        )

    # The vocabulary (invariants.z3.proof.reading): every client synced.
    def active(self, c: ExprRef) -> BoolRef:
        """Not a zombie (``zombie``: ``Client.expired`` and its member gone)."""
        return z3.Not(self.zombie(c))

    def revoking_now(self, c: ExprRef, q: ExprRef) -> BoolRef:
        """``client_revoking``: RECONCILING and still revoking (``snapshot.client_view``)."""
        return z3.And(self.status(c) == RECONCILING, self.revoking(c, q))

    def joining(self, c: ExprRef) -> BoolRef:
        return self.status(c) == JOINING

    def incarnation(self, c: ExprRef) -> ExprRef:
        """``client_incarnation``: no client restarts in the layer."""
        return z3.IntVal(0)


_UNARY = (
    "status",
    "epoch",
    "has_target",
    "has_reconciling",
    "committing",
    "commit_epoch",
    "sent_ok",
    "req",
    "req_epoch",
    "req_null",
    "req_full",
    "resp",
    "resp_epoch",
    "resp_has_assignment",
    "commit_resp",
    "hb_ahead",
    "zombie",
    "poll_expired",
    "timer_spent",
    "callback",
    "lost_queued",
    "rejoined",
)
_BINARY = ("owns", "revoking", "target", "reconciling", "sent", "req_owned", "resp_assignment")


def _same(a: ClientVars, b: ClientVars, c: ExprRef, skip: frozenset[str] = frozenset()) -> BoolRef:
    out: list[BoolRef] = [getattr(b, n)(c) == getattr(a, n)(c) for n in _UNARY if n not in skip]
    out += [
        z3.ForAll([_p], getattr(b, n)(c, _p) == getattr(a, n)(c, _p))
        for n in _BINARY
        if n not in skip
    ]
    return z3.And(*out)


_DONE = frozenset({"has_reconciling", "reconciling", "revoking", "rejoined"})
"""The fields ``Layer._done`` sets."""


def _set(f: Callable[[ExprRef], BoolRef], g: Callable[[ExprRef], BoolRef]) -> BoolRef:
    return z3.ForAll([_p], f(_p) == g(_p))


@dataclass(frozen=True)
class Layer:
    """The clients of a configuration on a finite universe: client ``i`` is the client of
    the universe's member ``member_names[i]``, subscribed to ``subscribed[i]``. With
    ``leaves`` a client may leave (``Leave``, ``ReleaseAssignment``, ``ClientLeave``), at
    most ``leave_budget`` of them in a path."""

    consts: tuple[ExprRef, ...]
    members: tuple[ExprRef, ...]
    member_names: tuple[str, ...]
    client_names: tuple[str, ...]
    subscribed: tuple[frozenset[Partition], ...]
    config: Config
    cmem: Any
    pconsts: dict[Partition, ExprRef]
    leaves: bool = False
    leave_budget: int = 0
    polls: bool = False
    """The clients' poll timers may expire (``PollTimerExpires``, ``StaleLeave``, ``Poll``),
    at most ``poll_budget`` of them in a path, each client's once."""
    poll_budget: int = 0
    callbacks: bool = False
    """Rebalance callbacks run as steps (``Config.callback_steps``: ``CompleteCallback``)."""
    lossy: bool = False
    """A joining client's heartbeat response may be lost (``LoseResponse``, then its request
    times out), a heartbeat may be fenced (``FencedHeartbeat``) and a fenced client rejoins
    (``Rejoin``; ``loss_steps``): ``Layer.of``'s ``lossy``, on a configuration
    that allows ``LoseMessage``.
    The losses are perturbations: the unrolling does not count them (its user bounds them by
    ``loss_budget``)."""
    loss_budget: int = 0

    @staticmethod
    def of(
        config: Config, universe: Universe, variant: str | None = None, *, lossy: bool = False
    ) -> Layer:
        """The layer of ``config``'s clients; their leaves only for a variant that needs
        them (``LEAVE_VARIANTS``) on a configuration that allows ``Leave``, their poll
        timers only for one of ``POLL_VARIANTS`` on a configuration that allows
        ``PollTimerExpires``: the model spends a perturbation on each leave, each expiry
        and each subscription of a client not subscribed from the start
        (``system._perturbations``). Rebalance callbacks are steps as the configuration
        says (``Config.callback_steps``), which the layer has for ``CALLBACK_VARIANTS``
        only (else ``ValueError``)."""
        state = consumer_initial(config)
        by_member = {c.member_id: c for c in state.clients}
        names = tuple(m for m in universe.members if m in by_member)
        subscribed = []
        for m in names:
            topics = by_member[m].subscription
            subscribed.append(frozenset(p for p in universe.partitions if p[0] in topics))
        late = sum(1 for c in state.clients if c.status is ClientStatus.UNSUBSCRIBED)
        leaves = variant in LEAVE_VARIANTS and config.allows("Leave")
        polls = variant in POLL_VARIANTS and config.allows("PollTimerExpires")
        if config.callback_steps and variant not in CALLBACK_VARIANTS:
            raise ValueError(
                "the client layer has rebalance callbacks as steps only for "
                + ", ".join(sorted(CALLBACK_VARIANTS))
            )
        budget = max(0, config.max_perturbations - late)
        lossy = lossy and config.allows("LoseMessage")
        return Layer(
            consts=tuple(z3.Const(f"client:{m}", CLIENT) for m in names),
            members=tuple(universe.member_consts[m] for m in names),
            member_names=names,
            client_names=tuple(by_member[m].name for m in names),
            subscribed=tuple(subscribed),
            config=config,
            cmem=z3.Function("client.member", CLIENT, MEMBER),
            pconsts=dict(universe.partition_consts),
            leaves=leaves,
            leave_budget=budget if leaves else 0,
            polls=polls,
            poll_budget=budget if polls else 0,
            callbacks=config.callback_steps,
            lossy=lossy,
            loss_budget=budget if lossy else 0,
        )

    def inline(self) -> dict[str, ExprRef]:
        """``cmem`` of each client constant: its member constant (by the client's name)."""
        return {str(c): m for c, m in zip(self.consts, self.members, strict=True)}

    def fresh(self, tag: str) -> ClientVars:
        return ClientVars.fresh(tag, self.cmem)

    def initial(self, a: ClientVars) -> BoolRef:
        """``system.consumer_initial``: every client subscribed (an UNSUBSCRIBED client of
        the configuration subscribes first, a step that leaves the group alone), JOINING at
        epoch 0, consuming, revoking, having received and sent nothing."""
        out: list[BoolRef] = []
        for c in self.consts:
            out += [
                a.status(c) == JOINING,
                a.epoch(c) == 0,
                z3.Not(a.has_target(c)),
                z3.Not(a.has_reconciling(c)),
                z3.Not(a.committing(c)),
                z3.Not(a.sent_ok(c)),
                z3.Not(a.req(c)),
                z3.Not(a.resp(c)),
                z3.Not(a.commit_resp(c)),
                a.commit_epoch(c) == 0,
                a.req_epoch(c) == 0,
                z3.Not(a.zombie(c)),
                z3.Not(a.poll_expired(c)),
                z3.Not(a.timer_spent(c)),
                a.callback(c) == NO_CALLBACK,
                z3.Not(a.lost_queued(c)),
                z3.Not(a.rejoined(c)),
            ]
            out += [z3.ForAll([_p], z3.Not(getattr(a, n)(c, _p))) for n in _BINARY]
        return z3.And(*out)

    def frame(self, a: ClientVars, b: ClientVars, but: ExprRef | None = None) -> BoolRef:
        """Every client but ``but`` unchanged."""
        return z3.And(*[_same(a, b, c) for c in self.consts if but is None or not c.eq(but)])

    def steps(
        self,
        pre: SymState,
        post: SymState,
        a: ClientVars,
        b: ClientVars,
        o: Options,
        heartbeat_of: Callable[[Family], tuple[Family, BoolRef]],
    ) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
        """Every step of the layer from (``pre``, ``a``) to (``post``, ``b``): the family
        (its parameters read as the core's), the binding of its member parameter to the
        client's member, and the formula. ``heartbeat_of`` restricts the core's heartbeat
        to what the replay drives and adds the unrolling's ghost."""
        out: list[tuple[Family, list[tuple[Any, Any]], BoolRef]] = []
        # Only the core families the layer drives.
        core = {
            f.name: f
            for f in (heartbeat(pre, post, o), offset_commit(pre, post, o), stutter(pre, post, o))
        }
        if self.leaves or self.polls:
            leave = _remove(pre, post, o, "DeliverMessage.leave", answers=True)
            core[leave.name] = leave
        for c, m, sub in zip(self.consts, self.members, self.subscribed, strict=True):
            out += self._client_steps(pre, post, a, b, o, core, heartbeat_of, c, m, sub)
        return out

    def _client_steps(
        self,
        pre: SymState,
        post: SymState,
        a: ClientVars,
        b: ClientVars,
        o: Options,
        core: dict[str, Family],
        heartbeat_of: Callable[[Family], tuple[Family, BoolRef]],
        c: ExprRef,
        m: ExprRef,
        sub: frozenset[Partition],
    ) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
        """The steps of client ``c`` (of member ``m``, subscribed to ``sub``)."""
        cfg = self.config
        out: list[tuple[Family, list[tuple[Any, Any]], BoolRef]] = []
        st = a.status(c)
        in_rec = z3.Or(st == RECONCILING, st == ACKNOWLEDGING)

        def reported(q: ExprRef) -> BoolRef:
            # model.consumer.client.reported_partitions
            extra = z3.And(
                z3.BoolVal(cfg.report_pending_additions),
                a.has_target(c),
                in_rec,
                z3.Or(a.target(c, q), z3.And(a.has_reconciling(c), a.reconciling(c, q))),
            )
            return z3.Or(a.owns(c, q), a.revoking(c, q), extra)

        # build_heartbeat: a full request at epoch 0 (JOINING sends 0); null owned
        # partitions when the report is the one last sent.
        full = z3.Or(st == JOINING, a.epoch(c) == 0)
        null = z3.And(z3.Not(full), a.sent_ok(c), z3.ForAll([_p], a.sent(c, _p) == reported(_p)))
        sent_owned: Callable[[ExprRef], BoolRef] = reported
        sent_null: BoolRef = null
        if o.variant == "client-acks-before-revoking":
            acks = z3.And(st == RECONCILING, a.has_target(c))

            def early(q: ExprRef) -> BoolRef:
                return z3.If(acks, a.target(c, q), reported(q))

            sent_owned, sent_null = early, z3.And(z3.Not(acks), null)
        elif o.variant == "ack-while-revoking":

            def gone(q: ExprRef) -> BoolRef:
                return z3.And(reported(q), z3.Not(a.revoking(c, q)))

            sent_owned = gone
        epoch = z3.If(st == JOINING, 0, a.epoch(c))
        # ACKNOWLEDGING becomes STABLE, or RECONCILING when a newer target waits.
        built = z3.If(
            st == ACKNOWLEDGING,
            z3.If(
                z3.And(a.has_target(c), z3.ForAll([_p], a.target(c, _p) == a.owns(c, _p))),
                z3.IntVal(STABLE),
                z3.IntVal(RECONCILING),
            ),
            st,
        )

        def handled(
            fam: Family,
            *,
            epoch: ExprRef,
            null: BoolRef,
            owned: Callable[[ExprRef], BoolRef],
        ) -> BoolRef:
            """The coordinator's heartbeat on the request, accepted."""
            par = fam.params
            return z3.And(
                fam.formula,
                fam.facts["accepted"],
                par["epoch"] == epoch,
                par["owned_null"] == null,
                _set(par["owned"], owned),
                _set(par["names"], lambda q: self._member_of(q, sub)),
                z3.Not(par["regex"]),
            )

        def answered(epoch: ExprRef, full: BoolRef) -> BoolRef:
            """The response carries the assignment (``send_assignment``)."""
            changed = z3.Exists([_p], post.assigned(m, _p) != pre.assigned(m, _p))
            return z3.Or(epoch == 0, full, changed)

        def read_response(
            *,
            epoch: ExprRef,
            has: BoolRef,
            assignment: Callable[[ExprRef], BoolRef],
            status: ExprRef,
        ) -> BoolRef:
            """``on_heartbeat_response`` of a successful response (the client's status
            before it: ``status``): the new member epoch; a new assignment starts
            RECONCILING."""
            same = z3.And(a.has_target(c), z3.ForAll([_p], a.target(c, _p) == assignment(_p)))
            takes = z3.And(has, z3.Not(same))
            return z3.And(
                b.epoch(c) == epoch,
                b.status(c) == z3.If(takes, z3.IntVal(RECONCILING), status),
                b.has_target(c) == z3.Or(a.has_target(c), takes),
                _set(
                    lambda q: b.target(c, q),
                    lambda q: z3.If(takes, assignment(q), a.target(c, q)),
                ),
            )

        # A heartbeat at epoch 0 is a rejoin: no zombie any more (system._send_heartbeat).
        sending = frozenset({"status", "sent_ok", "sent", "zombie"})
        unzombied = b.zombie(c) == z3.And(a.zombie(c), epoch != 0)
        reading = frozenset({"status", "epoch", "has_target", "target"})
        # ClientHeartbeat: sent, delivered and answered in one step (nothing else of the
        # client's in flight, so the order of the channels holds).
        hb, ghost = heartbeat_of(core["DeliverMessage.heartbeat"])
        # Only the heartbeats of a client in the group here (the leave's: ClientLeave,
        # StaleLeave).
        beats = st <= STABLE if self.leaves or self.polls or self.lossy else z3.BoolVal(True)
        heartbeat = z3.And(
            beats,
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            z3.Not(a.committing(c)),
            z3.Not(a.commit_resp(c)),
            ghost,
            handled(hb, epoch=epoch, null=sent_null, owned=sent_owned),
            read_response(
                epoch=post.epoch(m),
                has=answered(epoch, full),
                assignment=lambda q: post.assigned(m, q),
                status=built,
            ),
            b.sent_ok(c),
            _set(lambda q: b.sent(c, q), reported),
            unzombied,
            _same(a, b, c, sending | reading),
            self.frame(a, b, c),
        )
        out.append((replace(hb, name="ClientHeartbeat"), [(hb.params["member"], m)], heartbeat))
        # SendHeartbeat: the request in flight (one heartbeat in flight per client).
        x = z3.Const(f"SendHeartbeat.member@{post.tag}", MEMBER)
        send = z3.And(
            beats,
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            b.req(c),
            b.req_epoch(c) == epoch,
            b.req_null(c) == sent_null,
            b.req_full(c) == full,
            _set(lambda q: b.req_owned(c, q), sent_owned),
            b.status(c) == built,
            b.sent_ok(c),
            _set(lambda q: b.sent(c, q), reported),
            b.hb_ahead(c) == z3.Not(z3.Or(a.committing(c), a.commit_resp(c))),
            unzombied,
            _same(
                a,
                b,
                c,
                sending | {"req", "req_epoch", "req_null", "req_full", "req_owned", "hb_ahead"},
            ),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("SendHeartbeat", send, {"member": x}), [(x, m)], send))
        # DeliverHeartbeat: the coordinator handles the request; its response in flight.
        hb2, ghost2 = heartbeat_of(core["DeliverMessage.heartbeat"])
        delivered = z3.And(
            a.req(c),
            z3.Not(z3.And(a.committing(c), z3.Not(a.hb_ahead(c)))),
            ghost2,
            handled(
                hb2,
                epoch=a.req_epoch(c),
                null=a.req_null(c),
                owned=lambda q: a.req_owned(c, q),
            ),
            z3.Not(b.req(c)),
            b.resp(c),
            b.resp_epoch(c) == post.epoch(m),
            b.resp_has_assignment(c) == answered(a.req_epoch(c), a.req_full(c)),
            _set(lambda q: b.resp_assignment(c, q), lambda q: post.assigned(m, q)),
            _same(
                a,
                b,
                c,
                frozenset({"req", "resp", "resp_epoch", "resp_has_assignment", "resp_assignment"}),
            ),
            self.frame(a, b, c),
        )
        out.append((replace(hb2, name="DeliverHeartbeat"), [(hb2.params["member"], m)], delivered))
        # HeartbeatResponse: the client reads it.
        y = z3.Const(f"HeartbeatResponse.member@{post.tag}", MEMBER)
        response = z3.And(
            a.resp(c),
            z3.Not(z3.And(a.commit_resp(c), z3.Not(a.hb_ahead(c)))),
            read_response(
                epoch=a.resp_epoch(c),
                has=a.resp_has_assignment(c),
                assignment=lambda q: a.resp_assignment(c, q),
                status=st,
            ),
            z3.Not(b.resp(c)),
            _same(a, b, c, reading | {"resp"}),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("HeartbeatResponse", response, {"member": y}), [(y, m)], response))

        # Reconcile (model.consumer.client.reconcile, without callback steps)
        def revoked(q: ExprRef) -> BoolRef:
            return z3.And(a.owns(c, q), z3.Not(a.target(c, q)))

        commits = z3.And(
            z3.Exists([_p], revoked(_p)),
            z3.BoolVal(cfg.commit_on_revoke),
            a.epoch(c) > 0,
        )
        started = z3.And(
            _set(lambda q: b.owns(c, q), lambda q: z3.And(a.owns(c, q), z3.Not(revoked(q)))),
            _set(lambda q: b.reconciling(c, q), lambda q: a.target(c, q)),
            b.has_reconciling(c),
            _set(lambda q: b.revoking(c, q), revoked),
            b.committing(c),
            b.commit_epoch(c) == a.epoch(c),
            b.hb_ahead(c) == z3.Or(a.req(c), a.resp(c)),
            _same(
                a,
                b,
                c,
                frozenset(
                    {
                        "owns",
                        "reconciling",
                        "has_reconciling",
                        "revoking",
                        "committing",
                        "commit_epoch",
                        "hb_ahead",
                    }
                ),
            ),
        )
        applied = z3.And(
            _set(lambda q: b.owns(c, q), lambda q: a.target(c, q)),
            b.status(c) == ACKNOWLEDGING,
            z3.Not(b.has_reconciling(c)),
            z3.ForAll([_p], z3.Not(b.reconciling(c, _p))),
            z3.Not(b.sent_ok(c)),
            _same(
                a,
                b,
                c,
                frozenset({"owns", "status", "has_reconciling", "reconciling", "sent_ok"}),
            ),
        )
        if self.callbacks:
            # Revoke, then assign, each callback a step of its own (CompleteCallback).
            applied = z3.And(
                _set(lambda q: b.owns(c, q), lambda q: z3.And(a.owns(c, q), z3.Not(revoked(q)))),
                _set(lambda q: b.reconciling(c, q), lambda q: a.target(c, q)),
                b.has_reconciling(c),
                _set(lambda q: b.revoking(c, q), revoked),
                b.callback(c)
                == z3.If(
                    z3.Exists([_p], revoked(_p)),
                    z3.IntVal(REVOKED_CALLBACK),
                    z3.IntVal(ASSIGNED_CALLBACK),
                ),
                _same(
                    a,
                    b,
                    c,
                    frozenset({"owns", "reconciling", "has_reconciling", "revoking", "callback"}),
                ),
            )
        r = z3.Const(f"Reconcile.member@{post.tag}", MEMBER)
        reconcile = z3.And(
            st == RECONCILING,
            a.callback(c) == NO_CALLBACK,
            z3.Not(a.has_reconciling(c)),
            z3.Not(a.committing(c)),
            z3.Not(a.commit_resp(c)),
            a.has_target(c),
            z3.If(commits, started, applied),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("Reconcile", reconcile, {"member": r}), [(r, m)], reconcile))

        # DeliverCommit: the coordinator's offset commit of the revoked partitions.
        oc = core["DeliverMessage.offset_commit"]
        commit = z3.And(
            a.committing(c),
            z3.Not(z3.And(a.req(c), a.hb_ahead(c))),
            oc.formula,
            oc.params["epoch"] == a.commit_epoch(c),
            _set(oc.params["partitions"], lambda q: a.revoking(c, q)),
            z3.Not(b.committing(c)),
            b.commit_resp(c),
            _same(a, b, c, frozenset({"committing", "commit_resp"})),
            self.frame(a, b, c),
        )
        out.append((replace(oc, name="DeliverCommit"), [(oc.params["member"], m)], commit))
        # CommitResponse: on_commit_response, finish_reconcile.
        z = z3.Const(f"CommitResponse.member@{post.tag}", MEMBER)
        # Without callback steps: the target taken, ACKNOWLEDGING.
        finish = z3.And(
            _set(lambda q: b.owns(c, q), lambda q: a.reconciling(c, q)),
            z3.Not(b.has_reconciling(c)),
            z3.ForAll([_p], z3.And(z3.Not(b.reconciling(c, _p)), z3.Not(b.revoking(c, _p)))),
            b.status(c) == z3.If(st == RECONCILING, z3.IntVal(ACKNOWLEDGING), st),
            z3.Not(b.sent_ok(c)),
            _same(
                a,
                b,
                c,
                frozenset(
                    {
                        "owns",
                        "has_reconciling",
                        "reconciling",
                        "revoking",
                        "commit_resp",
                        "status",
                        "sent_ok",
                    }
                ),
            ),
        )
        if self.callbacks:
            # With callback steps: onPartitionsRevoked starts — unless the reconciliation
            # was aborted meanwhile (maybeReconcile after the commit).
            finish = z3.If(
                self._aborted(a, c),
                z3.And(self._done(a, b, c), _same(a, b, c, _DONE | {"commit_resp"})),
                z3.And(
                    b.callback(c)
                    == z3.If(
                        a.callback(c) == NO_CALLBACK, z3.IntVal(REVOKED_CALLBACK), a.callback(c)
                    ),
                    _same(a, b, c, frozenset({"callback", "commit_resp"})),
                ),
            )
        done = z3.And(
            a.commit_resp(c),
            z3.Not(z3.And(a.resp(c), a.hb_ahead(c))),
            z3.Not(b.commit_resp(c)),
            z3.If(a.has_reconciling(c), finish, _same(a, b, c, frozenset({"commit_resp"}))),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("CommitResponse", done, {"member": z}), [(z, m)], done))
        if self.polls:
            out += self._poll_steps(pre, post, a, b, o, core, c, m)
        if self.callbacks:
            out += self._callback_steps(pre, post, a, b, o, core, c, m)
        if self.leaves:
            out += self._leave_steps(pre, post, a, b, o, core, c, m)
        if self.lossy:
            out += loss_steps(self, pre, post, a, b, core, heartbeat_of, c, m, sub)
        return out

    def _leave_steps(
        self,
        pre: SymState,
        post: SymState,
        a: ClientVars,
        b: ClientVars,
        o: Options,
        core: dict[str, Family],
        c: ExprRef,
        m: ExprRef,
    ) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
        """The leave of client ``c`` (of member ``m``): ``Leave``, ``ReleaseAssignment`` and
        ``ClientLeave`` (``model.consumer.client.leave``, ``release_assignment``, the leave
        heartbeat of ``build_heartbeat`` and ``on_heartbeat_response``)."""
        out: list[tuple[Family, list[tuple[Any, Any]], BoolRef]] = []
        st = a.status(c)
        left = z3.Sum(*[z3.If(a.status(d) >= PREPARE_LEAVING, 1, 0) for d in self.consts])
        # Leave (model.consumer.client.leave: unsubscribe(), AbstractMembershipManager.leaveGroup's
        # start): a perturbation of a client in the group (system._perturbations). Here
        # only with nothing of the client's in flight or being reconciled, and nothing
        # consumed: its release then commits nothing.
        x = z3.Const(f"Leave.member@{post.tag}", MEMBER)
        leave = z3.And(
            st <= STABLE,
            left < self.leave_budget,
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            z3.Not(a.committing(c)),
            z3.Not(a.commit_resp(c)),
            z3.Not(a.has_reconciling(c)),
            z3.ForAll([_p], z3.Not(a.owns(c, _p))),
            b.status(c) == PREPARE_LEAVING,
            _same(a, b, c, frozenset({"status"})),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("Leave", leave, {"member": x}), [(x, m)], leave))
        # ReleaseAssignment (model.consumer.client.release_assignment, onPartitionsRevoked before
        # leaving): PREPARE_LEAVING → LEAVING, no target, nothing reconciled or revoked.
        y = z3.Const(f"ReleaseAssignment.member@{post.tag}", MEMBER)
        release = z3.And(
            st == PREPARE_LEAVING,
            z3.Not(a.has_reconciling(c)),
            b.status(c) == LEAVING,
            z3.Not(b.has_target(c)),
            z3.ForAll(
                [_p],
                z3.And(
                    z3.Not(b.target(c, _p)),
                    z3.Not(b.reconciling(c, _p)),
                    z3.Not(b.revoking(c, _p)),
                    z3.Not(b.owns(c, _p)),
                ),
            ),
            _same(
                a,
                b,
                c,
                frozenset({"status", "has_target", "target", "reconciling", "revoking", "owns"}),
            ),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("ReleaseAssignment", release, {"member": y}), [(y, m)], release))
        # ClientLeave: the leave heartbeat (build_heartbeat of LEAVING: epoch -1, the client
        # UNSUBSCRIBED at epoch 0 once it is sent), the coordinator's leave
        # (GroupMetadataManager.consumerGroupLeave: the member removed) and its response
        # (epoch -1), which on_heartbeat_response ignores in UNSUBSCRIBED; sent, delivered
        # and answered in one step. Accepted: the coordinator knows the member.
        lf = core["DeliverMessage.leave"]
        gone = lf.params["member"]
        negative = o.variant == "adopt-negative-epoch"
        client_leave = z3.And(
            st == LEAVING,
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            lf.formula,
            z3.Not(lf.params["regexes_dropped"]),
            pre.is_member(gone),
            z3.Not(post.is_member(gone)),
            b.status(c) == UNSUBSCRIBED,
            # KAFKA-19335's mutant: the response's negative epoch is taken.
            b.epoch(c) == (-1 if negative else 0),
            z3.Not(b.sent_ok(c)),
            _same(a, b, c, frozenset({"status", "epoch", "sent_ok"})),
            self.frame(a, b, c),
        )
        out.append((replace(lf, name="ClientLeave"), [(gone, m)], client_leave))
        return out

    @staticmethod
    def _aborted(a: ClientVars, c: ExprRef) -> BoolRef:
        """``reconciliation_aborted``: the client left RECONCILING or rejoined meanwhile."""
        return z3.Or(a.status(c) != RECONCILING, a.rejoined(c))

    @staticmethod
    def _done(a: ClientVars, b: ClientVars, c: ExprRef) -> BoolRef:
        """``_reconciliation_done``: nothing reconciled or revoked, no rejoin pending."""
        return z3.And(
            z3.Not(b.has_reconciling(c)),
            z3.ForAll([_p], z3.And(z3.Not(b.reconciling(c, _p)), z3.Not(b.revoking(c, _p)))),
            z3.Not(b.rejoined(c)),
        )

    def _poll_steps(
        self,
        pre: SymState,
        post: SymState,
        a: ClientVars,
        b: ClientVars,
        o: Options,
        core: dict[str, Family],
        c: ExprRef,
        m: ExprRef,
    ) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
        """The poll timer of client ``c`` (of member ``m``): ``PollTimerExpires``,
        ``StaleLeave`` and ``Poll`` (``model.consumer.client.poll_timer_expires``, the leave
        heartbeat of ``build_heartbeat`` with ``poll_expired``, ``poll``)."""
        out: list[tuple[Family, list[tuple[Any, Any]], BoolRef]] = []
        st = a.status(c)
        # PollTimerExpires (model.consumer.client.poll_timer_expires, transitionToSendingLeaveGroup
        # with dueToExpiredPollTimer): a perturbation of a client in the group at an epoch
        # > 0 (system._perturbations) — LEAVING at once, without releasing first. Here only
        # with nothing of the client's in flight, and once per client.
        spent = z3.Sum(*[z3.If(a.timer_spent(d), 1, 0) for d in self.consts])
        x = z3.Const(f"PollTimerExpires.member@{post.tag}", MEMBER)
        expires = z3.And(
            z3.Or(st == RECONCILING, st == ACKNOWLEDGING, st == STABLE),
            a.epoch(c) > 0,
            z3.Not(a.timer_spent(c)),
            spent < self.poll_budget,
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            z3.Not(a.committing(c)),
            z3.Not(a.commit_resp(c)),
            b.status(c) == LEAVING,
            b.poll_expired(c),
            b.timer_spent(c),
            _same(a, b, c, frozenset({"status", "poll_expired", "timer_spent"})),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("PollTimerExpires", expires, {"member": x}), [(x, m)], expires))
        # StaleLeave: the leave heartbeat of a client whose poll timer expired
        # (build_heartbeat of LEAVING with poll_expired: member epoch -1; the client STALE
        # at epoch 0 once it is sent, its partitions lost: lose_partitions,
        # onPartitionsLost), the coordinator's leave (the member removed) and the response
        # (epoch -1), which on_heartbeat_response ignores in STALE; sent, delivered and
        # answered in one step. The client is a zombie until it heartbeats at epoch 0.
        lf = core["DeliverMessage.leave"]
        gone = lf.params["member"]
        keeps = o.variant == "poll-timeout-keeps-partitions"
        changed = {"status", "epoch", "zombie", "has_target", "target", "revoking", "sent_ok"}
        lost: list[BoolRef] = [
            z3.Not(b.has_target(c)),
            z3.ForAll([_p], z3.And(z3.Not(b.target(c, _p)), z3.Not(b.revoking(c, _p)))),
            z3.Not(b.sent_ok(c)),
        ]
        if not keeps:
            changed.add("owns")
            lost.append(z3.ForAll([_p], z3.Not(b.owns(c, _p))))
        if not self.callbacks:
            changed |= {"has_reconciling", "reconciling"}
            lost += [z3.Not(b.has_reconciling(c)), z3.ForAll([_p], z3.Not(b.reconciling(c, _p)))]
        elif not keeps:
            # onPartitionsLost as a step of its own, after the callback that runs (if any).
            changed |= {"callback", "lost_queued"}
            running = a.callback(c) != NO_CALLBACK
            lost += [
                b.callback(c) == z3.If(running, a.callback(c), z3.IntVal(LOST_CALLBACK)),
                b.lost_queued(c) == z3.Or(a.lost_queued(c), running),
            ]
        else:
            # The mutant drops the callbacks with the loss.
            changed |= {"callback", "lost_queued"}
            lost += [b.callback(c) == NO_CALLBACK, z3.Not(b.lost_queued(c))]
        stale = z3.And(
            st == LEAVING,
            a.poll_expired(c),
            z3.Not(a.req(c)),
            z3.Not(a.resp(c)),
            lf.formula,
            z3.Not(lf.params["regexes_dropped"]),
            pre.is_member(gone),
            z3.Not(post.is_member(gone)),
            b.status(c) == STALE,
            b.epoch(c) == 0,
            b.zombie(c),
            *lost,
            _same(a, b, c, frozenset(changed)),
            self.frame(a, b, c),
        )
        out.append((replace(lf, name="StaleLeave"), [(gone, m)], stale))
        # Poll (model.consumer.client.poll: maybeRejoinStaleMember → transitionToJoining): the next
        # poll of a STALE client whose onPartitionsLost ran rejoins at epoch 0; a
        # reconciliation still in progress is not to be applied any more.
        y = z3.Const(f"Poll.member@{post.tag}", MEMBER)
        poll = z3.And(
            st == STALE,
            a.callback(c) == NO_CALLBACK,
            z3.Not(a.lost_queued(c)),
            b.status(c) == JOINING,
            b.epoch(c) == 0,
            z3.Not(b.poll_expired(c)),
            z3.Not(b.sent_ok(c)),
            b.rejoined(c) == a.has_reconciling(c),
            _same(a, b, c, frozenset({"status", "epoch", "poll_expired", "sent_ok", "rejoined"})),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        out.append((Family("Poll", poll, {"member": y}), [(y, m)], poll))
        return out

    def _callback_steps(
        self,
        pre: SymState,
        post: SymState,
        a: ClientVars,
        b: ClientVars,
        o: Options,
        core: dict[str, Family],
        c: ExprRef,
        m: ExprRef,
    ) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
        """``CompleteCallback`` of client ``c`` (``model.consumer.client.complete_callback``): the
        application finishes its callback and the step that waited for it goes on."""
        st = a.status(c)
        cb = a.callback(c)
        ignores = o.variant == "callback-ignores-abort"
        of_reconciliation = z3.Or(cb == REVOKED_CALLBACK, cb == ASSIGNED_CALLBACK)
        # The mutant reads the reconciliation's callbacks as if the client were still
        # RECONCILING and had not rejoined (maybeAbortReconciliation dropped).
        eff_st = z3.If(of_reconciliation, z3.IntVal(RECONCILING), st) if ignores else st
        eff_rejoined = (
            z3.And(z3.Not(of_reconciliation), a.rejoined(c)) if ignores else a.rejoined(c)
        )
        aborted = z3.Or(eff_st != RECONCILING, eff_rejoined)
        # After onPartitionsAssigned the target is taken and the client acknowledges.
        applies = z3.And(cb == ASSIGNED_CALLBACK, z3.Not(aborted), a.has_reconciling(c))
        # After onPartitionsRevoked onPartitionsAssigned runs (still reported as owned).
        assigns = z3.And(cb == REVOKED_CALLBACK, z3.Not(aborted))
        done = z3.And(of_reconciliation, z3.Not(assigns))
        mid = z3.If(assigns, z3.IntVal(ASSIGNED_CALLBACK), z3.IntVal(NO_CALLBACK))
        # onPartitionsLost starts next when it was queued (a FENCED client would rejoin
        # after it; the layer has none).
        nxt = z3.If(z3.And(mid == NO_CALLBACK, a.lost_queued(c)), z3.IntVal(LOST_CALLBACK), mid)
        status = z3.If(applies, z3.IntVal(ACKNOWLEDGING), eff_st)
        if ignores:
            status = z3.If(
                z3.And(of_reconciliation, st != RECONCILING, nxt == NO_CALLBACK),
                z3.IntVal(ACKNOWLEDGING),
                status,
            )
        x = z3.Const(f"CompleteCallback.member@{post.tag}", MEMBER)
        complete = z3.And(
            cb != NO_CALLBACK,
            b.callback(c) == nxt,
            b.lost_queued(c) == z3.And(a.lost_queued(c), mid != NO_CALLBACK),
            b.status(c) == status,
            _set(
                lambda q: b.owns(c, q), lambda q: z3.If(applies, a.reconciling(c, q), a.owns(c, q))
            ),
            b.has_reconciling(c) == z3.And(z3.Not(done), a.has_reconciling(c)),
            _set(
                lambda q: b.reconciling(c, q), lambda q: z3.And(z3.Not(done), a.reconciling(c, q))
            ),
            _set(lambda q: b.revoking(c, q), lambda q: z3.And(z3.Not(done), a.revoking(c, q))),
            b.rejoined(c) == z3.And(z3.Not(done), eff_rejoined),
            b.sent_ok(c) == z3.And(z3.Not(applies), a.sent_ok(c)),
            _same(
                a,
                b,
                c,
                frozenset(
                    {
                        "callback",
                        "lost_queued",
                        "status",
                        "owns",
                        "has_reconciling",
                        "reconciling",
                        "revoking",
                        "rejoined",
                        "sent_ok",
                    }
                ),
            ),
            core["Unchanged"].formula,
            self.frame(a, b, c),
        )
        return [(Family("CompleteCallback", complete, {"member": x}), [(x, m)], complete)]

    def _member_of(self, q: ExprRef, sub: frozenset[Partition]) -> BoolRef:
        """``q`` is one of the partitions of ``sub`` (the universe's constants)."""
        return z3.Or(*[q == self.pconsts[p] for p in sorted(sub)]) if sub else z3.BoolVal(False)

    def decode(self, reading: Any, a: ClientVars, universe: Universe) -> tuple[ClientValue, ...]:
        """The clients' values in a model (partitions named ``("p", i)`` as ``decode``)."""
        ps = list(universe.partition_consts.values())

        def yes(x: Any) -> bool:
            return bool(z3.is_true(reading.eval(x, model_completion=True)))

        def num(x: Any) -> int:
            return int(reading.eval(x, model_completion=True).as_long())

        def parts(f: Any, c: ExprRef) -> frozenset[Partition]:
            return frozenset(("p", i) for i, q in enumerate(ps) if yes(f(c, q)))

        out = []
        for i, c in enumerate(self.consts):
            out.append(
                ClientValue(
                    name=self.client_names[i],
                    member=f"m{list(universe.members).index(self.member_names[i])}",
                    status=STATUS_NAMES[num(a.status(c))],
                    epoch=num(a.epoch(c)),
                    owns=parts(a.owns, c),
                    revoking=parts(a.revoking, c),
                    target=parts(a.target, c) if yes(a.has_target(c)) else None,
                    request=(
                        (num(a.req_epoch(c)), None if yes(a.req_null(c)) else parts(a.req_owned, c))
                        if yes(a.req(c))
                        else None
                    ),
                    response=(
                        (
                            num(a.resp_epoch(c)),
                            parts(a.resp_assignment, c) if yes(a.resp_has_assignment(c)) else None,
                        )
                        if yes(a.resp(c))
                        else None
                    ),
                    commit=(
                        "in flight"
                        if yes(a.committing(c))
                        else "answered"
                        if yes(a.commit_resp(c))
                        else None
                    ),
                    zombie=yes(a.zombie(c)),
                    callback=CALLBACK_NAMES[num(a.callback(c))],
                    lost_queued=yes(a.lost_queued(c)),
                )
            )
        return tuple(out)


def confirmed_clients(goal: str, snaps: list[Any]) -> bool:
    """Whether the Python reading of a client goal fails on the last replayed state (a
    step goal: on the last replayed step)."""
    step = next((c for c in CLIENT_STEP_GOALS if c.name == goal), None)
    if step is not None:
        return not compile_expr(step.expr)(StepSnapshot(snaps[-2], snaps[-1]), {})
    conj = next(c for c in (*CLIENT_GOALS, *POLL_GOALS) if c.name == goal)
    return not compile_expr(conj.expr)(snaps[-1], {})


@dataclass(frozen=True)
class ClientValue:
    """A client of a path: the fields the replay compares."""

    name: str
    member: str
    status: str
    epoch: int
    owns: frozenset[Partition]
    revoking: frozenset[Partition]
    target: frozenset[Partition] | None
    request: tuple[int, frozenset[Partition] | None] | None = None
    """The heartbeat in flight: its member epoch and owned partitions (None: null)."""
    response: tuple[int, frozenset[Partition] | None] | None = None
    """The heartbeat response in flight: its member epoch and assignment (None: none)."""
    commit: str | None = None
    """The revocation commit: "in flight", "answered" (its response in flight) or None."""
    zombie: bool = False
    """Its poll timer made it leave, its member is gone and it has not rejoined yet."""
    callback: str | None = None
    """The rebalance callback it runs (``Config.callback_steps``)."""
    lost_queued: bool = False
    """``onPartitionsLost`` waits for the callback that runs."""

    def render(self) -> str:
        def ps(s: frozenset[Partition]) -> str:
            return "{" + ", ".join(f"p{i}" for _, i in sorted(s)) + "}"

        target = "none" if self.target is None else ps(self.target)
        flight = ""
        if self.request is not None:
            e, owned = self.request
            shown = "null" if owned is None else ps(owned)
            flight = f", heartbeat in flight (epoch {e}, owned {shown})"
        if self.response is not None:
            e, asg = self.response
            shown = "none" if asg is None else ps(asg)
            flight += f", response in flight (epoch {e}, assignment {shown})"
        if self.commit is not None:
            flight += f", revocation commit {self.commit}"
        if self.callback is not None:
            flight += f", running {self.callback}"
        if self.lost_queued:
            flight += ", onPartitionsLost queued"
        if self.zombie:
            flight += ", a zombie"
        return (
            f"client {self.name} ({self.member}): {self.status} epoch {self.epoch}, consumes "
            f"{ps(self.owns)}, revoking {ps(self.revoking)}, target {target}{flight}"
        )


# --------------------------------------------------------------------------- replay


_lasso_p = z3.Const("lasso.p", PARTITION)
"""The bound partition of ``loss_steps``' quantifiers (the same constant as
``bmc_lasso``'s)."""


def loss_steps(
    layer: Layer,
    pre: SymState,
    post: SymState,
    a: ClientVars,
    b: ClientVars,
    core: dict[str, Family],
    heartbeat_of: Callable[[Family], tuple[Family, BoolRef]],
    c: ExprRef,
    m: ExprRef,
    sub: frozenset[Partition],
) -> list[tuple[Family, list[tuple[Any, Any]], BoolRef]]:
    """The lossy steps of client ``c`` (of member ``m``), with the reference client
    rules: ``LoseResponse`` (``LoseMessage`` of a joining client's heartbeat response,
    then ``RequestTimeout``: ``client.disconnect``, the next heartbeat full),
    ``FencedHeartbeat`` (a heartbeat sent, delivered and answered with
    FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: ``on_heartbeat_error`` makes the client
    FENCED at epoch 0, ``lose_partitions``) and ``Rejoin`` (``client.rejoin``)."""
    cfg = layer.config
    out: list[tuple[Family, list[tuple[Any, Any]], BoolRef]] = []
    st = a.status(c)
    idle = z3.And(
        z3.Not(a.req(c)), z3.Not(a.resp(c)), z3.Not(a.committing(c)), z3.Not(a.commit_resp(c))
    )
    x = z3.Const(f"LoseResponse.member@{post.tag}", MEMBER)
    lose = z3.And(
        st == JOINING,
        a.resp(c),
        z3.Not(a.req(c)),
        z3.Not(a.committing(c)),
        z3.Not(a.commit_resp(c)),
        z3.Not(b.resp(c)),
        z3.Not(b.sent_ok(c)),
        _same(a, b, c, frozenset({"resp", "sent_ok"})),
        core["Unchanged"].formula,
        layer.frame(a, b, c),
    )
    out.append((Family("LoseResponse", lose, {"member": x}), [(x, m)], lose))

    def reported(q: ExprRef) -> BoolRef:
        # model.consumer.client.reported_partitions
        extra = z3.And(
            z3.BoolVal(cfg.report_pending_additions),
            a.has_target(c),
            z3.Or(st == RECONCILING, st == ACKNOWLEDGING),
            z3.Or(a.target(c, q), z3.And(a.has_reconciling(c), a.reconciling(c, q))),
        )
        return z3.Or(a.owns(c, q), a.revoking(c, q), extra)

    full = z3.Or(st == JOINING, a.epoch(c) == 0)
    null = z3.And(
        z3.Not(full), a.sent_ok(c), z3.ForAll([_lasso_p], a.sent(c, _lasso_p) == reported(_lasso_p))
    )
    hb, ghost = heartbeat_of(core["DeliverMessage.heartbeat"])
    par = hb.params
    fenced = z3.And(
        st <= STABLE,
        idle,
        ghost,
        hb.formula,
        hb.facts["fenced"],
        par["epoch"] == z3.If(st == JOINING, 0, a.epoch(c)),
        par["owned_null"] == null,
        _set(par["owned"], reported),
        _set(par["names"], lambda q: layer._member_of(q, sub)),
        z3.Not(par["regex"]),
        b.status(c) == FENCED,
        b.epoch(c) == 0,
        z3.Not(b.has_target(c)),
        z3.Not(b.has_reconciling(c)),
        z3.Not(b.sent_ok(c)),
        z3.ForAll(
            [_lasso_p],
            z3.And(
                z3.Not(b.owns(c, _lasso_p)),
                z3.Not(b.revoking(c, _lasso_p)),
                z3.Not(b.target(c, _lasso_p)),
                z3.Not(b.reconciling(c, _lasso_p)),
            ),
        ),
        _same(
            a,
            b,
            c,
            frozenset(
                {
                    "status",
                    "epoch",
                    "has_target",
                    "has_reconciling",
                    "sent_ok",
                    "owns",
                    "revoking",
                    "target",
                    "reconciling",
                }
            ),
        ),
        layer.frame(a, b, c),
    )
    out.append((replace(hb, name="FencedHeartbeat"), [(par["member"], m)], fenced))
    y = z3.Const(f"Rejoin.member@{post.tag}", MEMBER)
    rejoin = z3.And(
        st == FENCED,
        b.status(c) == JOINING,
        _same(a, b, c, frozenset({"status"})),
        core["Unchanged"].formula,
        layer.frame(a, b, c),
    )
    out.append((Family("Rejoin", rejoin, {"member": y}), [(y, m)], rejoin))
    return out
