"""Bounded model checking of Convergence: a search for lassos of the client layer.

Convergence (``invariants.liveness``) asks that, once perturbations stop, a fair schedule
of progress steps reach a converged state. A counterexample of bounded length is a
*lasso* (Biere, Cimatti, Clarke, Zhu, "Symbolic model checking without BDDs", TACAS 1999):
a path ``s0 … sk`` whose last state is an earlier one, ``sk = sj`` (``j < k``), so that the
loop ``sj … sk`` can be run for ever, where

* every step of the loop is a progress step (nothing of the perturbation budget: no
  ``Leave``, no lost message);
* no state of the loop is converged (:func:`converged`, ``invariants.liveness.converged``
  read on the layer: the group STABLE or EMPTY at its group epoch and loaded, every client
  in the group — FENCED included — STABLE at its member's epoch, consuming exactly its
  member's assigned partitions);
* the loop is weakly fair: every client step (:data:`FAIRNESS`: a client's heartbeat, its
  delivery and response, its reconciliation, its commit's delivery and response, its
  release and leave heartbeat, its rejoin) whose client-side precondition holds in every
  state of the loop is taken somewhere in it. The precondition is read on the client
  alone (its status and what it has in flight), not on the coordinator's answer: a step
  the coordinator would refuse in every loop state still has to be taken, so such a loop
  is not found.

The loop runs over the client layer (``invariants.z3.proof.bmc_clients``): its clients
are the Java client's rules, deterministic given what the coordinator answers. Over the
core alone (any request) a client that never acknowledges would make a loop under the
reference rules too. On a configuration that loses messages the layer is the lossy one
(``Layer.lossy``: a joining client's lost response, a fenced heartbeat, the rejoin), its
losses within the configuration's perturbation budget.

:func:`search_lasso` runs the one lasso search (``invariants.z3.lasso``) over the
layer's parts (:class:`ClientLayerLasso`): for ``k = 1, 2, …, depth``, whether the
unrolling of ``k`` steps has such a lasso (one query per ``k``, the loop entry ``j``
chosen by the solver), so the first one found is a shortest. "ok" means: no fair
non-converging lasso of at most ``depth`` steps over the layer (the layer's restrictions,
``bmc_clients``, apply); it says nothing of longer loops or of what the layer leaves out.
The unrolling's
partial-order reduction (``bmc.Unrolling``: one order of neighbouring steps that commute)
applies to a lasso's steps as to any path's; it keeps every state a path reaches, but that
it keeps every loop's shape is not proved.

A lasso is confirmed in Python: :func:`replay_lasso` plays the whole path through the
Python clients and coordinator (``bmc_clients.replay_clients``: every state must be the
path's, so the Python loop closes too), and the caller lifts the prefix to a model trace
and runs ``invariants.liveness``'s fair schedule from its last state
(``groupcheck.explore.lift.lift_lasso``): the lasso is a violation only if that schedule
does not converge.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import z3

from invariants.z3 import lasso as lassos
from invariants.z3.engine import SymPath
from invariants.z3.lasso import Confirmation, Fairness, Lasso, LassoOutcome
from invariants.z3.proof.bmc import Unrolling, bmc_unrolling
from invariants.z3.proof.bmc_client_replay import replay_clients
from invariants.z3.proof.bmc_clients import (
    FENCED,
    JOINING,
    LEAVING,
    PREPARE_LEAVING,
    RECONCILING,
    STABLE,
    ClientVars,
    Layer,
)
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    SymState,
    Universe,
)
from invariants.z3.proof.state import STABLE as MEMBER_STABLE
from invariants.z3.proof.transition import Options, unchanged

CONVERGENCE = lassos.CONVERGENCE

LASSO_VARIANTS = {
    "ack-ignored": "the coordinator never takes a revocation acknowledgement: the revoking "
    "member, its client and the member waiting for the partition loop for ever",
    "reject-epoch-zero-rejoin": "a fenced member's rejoin at epoch 0 is fenced again: its "
    "client loops between fenced and joining",
}
"""The catalogue mutants whose kill is Convergence only, with the loop BMC finds; the steps
of each one's shortest lasso are its catalogue entry's ``Mutant.lasso_depth``."""


PERTURBATIONS = frozenset({"Leave", "LoseResponse"})
"""The layer's steps that spend the perturbation budget (none may be in the loop)."""

FAIRNESS: dict[str, tuple[str, ...]] = {
    "heartbeat": ("ClientHeartbeat", "SendHeartbeat", "FencedHeartbeat"),
    "delivery": ("DeliverHeartbeat",),
    "response": ("HeartbeatResponse",),
    "reconcile": ("Reconcile",),
    "commit delivery": ("DeliverCommit",),
    "commit response": ("CommitResponse",),
    "release": ("ReleaseAssignment",),
    "leave heartbeat": ("ClientLeave",),
    "rejoin": ("Rejoin",),
}
"""A client's progress steps for weak fairness, each with the layer's families that take
it (a heartbeat sent, delivered and answered at once takes the client's heartbeat)."""

_p = z3.Const("lasso.p", PARTITION)
_m = z3.Const("lasso.m", MEMBER)


def guard(a: ClientVars, c: Any, step: str, layer: Layer) -> Any:
    """The client-side precondition of one of the client's ``FAIRNESS`` steps in the
    state of the clients ``a`` (``bmc_clients.Layer._client_steps``)."""
    st = a.status(c)
    beats = st <= STABLE if layer.leaves or layer.polls or layer.lossy else z3.BoolVal(True)
    if step == "heartbeat":
        return z3.And(beats, z3.Not(a.req(c)), z3.Not(a.resp(c)))
    if step == "delivery":
        return z3.And(a.req(c), z3.Not(z3.And(a.committing(c), z3.Not(a.hb_ahead(c)))))
    if step == "response":
        return z3.And(a.resp(c), z3.Not(z3.And(a.commit_resp(c), z3.Not(a.hb_ahead(c)))))
    if step == "reconcile":
        return z3.And(
            st == RECONCILING,
            z3.Not(a.has_reconciling(c)),
            z3.Not(a.committing(c)),
            z3.Not(a.commit_resp(c)),
            a.has_target(c),
        )
    if step == "commit delivery":
        return z3.And(a.committing(c), z3.Not(z3.And(a.req(c), a.hb_ahead(c))))
    if step == "commit response":
        return z3.And(a.commit_resp(c), z3.Not(z3.And(a.resp(c), a.hb_ahead(c))))
    if step == "release":
        if not layer.leaves:
            return z3.BoolVal(False)
        return z3.And(st == PREPARE_LEAVING, z3.Not(a.has_reconciling(c)))
    if step == "rejoin":
        return z3.And(z3.BoolVal(layer.lossy), st == FENCED)
    if step == "leave heartbeat":
        if not layer.leaves:
            return z3.BoolVal(False)
        return z3.And(st == LEAVING, z3.Not(a.req(c)), z3.Not(a.resp(c)))
    raise ValueError(f"no client step {step!r}")


def converged(s: SymState, a: ClientVars, layer: Layer) -> Any:
    """``invariants.liveness.converged`` on the layer: the group EMPTY, or STABLE
    (``coordinator.group_status``: every member STABLE at the assignment epoch, which is
    the group epoch); the coordinator not loading; every client in the group
    (``client.IN_GROUP``) STABLE, its member in the group at the client's epoch and
    assigned exactly what the client consumes. (The layer has no regular expressions,
    stalled or dead clients.)"""
    stable_group = z3.And(
        s.group_epoch == s.assignment_epoch,
        z3.ForAll(
            [_m],
            z3.Implies(
                s.is_member(_m),
                z3.And(s.mstate(_m) == MEMBER_STABLE, s.epoch(_m) == s.assignment_epoch),
            ),
        ),
    )
    empty = z3.ForAll([_m], z3.Not(s.is_member(_m)))
    out = [z3.Or(empty, stable_group), z3.Not(s.loading)]
    for c, m in zip(layer.consts, layer.members, strict=True):
        st = a.status(c)
        in_group = z3.Or(z3.And(st >= JOINING, st <= STABLE), st == FENCED)
        settled = z3.And(
            st == STABLE,
            s.is_member(m),
            a.epoch(c) == s.epoch(m),
            z3.ForAll([_p], a.owns(c, _p) == s.assigned(m, _p)),
        )
        out.append(z3.Implies(in_group, settled))
    return z3.And(*out)


@dataclass
class ClientLayerLasso:
    """The client layer's parts of the lasso search (``invariants.z3.lasso``): its
    unrolling, with the perturbation budget on every path; the loop closed on the core's
    state, the ghosts and the clients; no converged state and no perturbation in the loop;
    :data:`FAIRNESS` per client; ``confirm`` (None: the caller confirms the lasso,
    ``groupcheck.symbolic.lasso_cmd.lasso_row``)."""

    run: Unrolling
    layer: Layer
    confirm: Callable[[Lasso], Confirmation] | None = None
    losses: list[Any] = field(default_factory=list)

    @property
    def solver(self) -> Any:
        return self.run.solver

    def extend(self) -> None:
        run, layer = self.run, self.layer
        run.extend()
        if layer.lossy:
            # The perturbation budget: at most loss_budget lost responses on the path.
            self.losses += [flag for flag, fam, _ in run.choices[-1] if fam.name == "LoseResponse"]
            count = z3.Sum(*[z3.If(f, 1, 0) for f in self.losses])
            run.add(count <= layer.loss_budget)

    def grounded(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def encode(self, formula: Any) -> Any:
        return self.run.encode(formula)

    def closes(self, j: int, k: int, shift: Any) -> Any:
        run, s, a = self.run, self.run.states, self.run.clients
        return z3.And(
            unchanged(s[j], s[k]), run.ghosts[j].same(run.ghosts[k]), self.layer.frame(a[j], a[k])
        )

    def shift_range(self, shift: Any) -> Any:
        return None

    def looping(self, i: int) -> Any:
        s, a = self.run.states, self.run.clients
        return z3.And(z3.Not(converged(s[i], a[i], self.layer)), z3.Not(_perturbation(self.run, i)))

    def leading(self, i: int) -> Any:
        return None

    def fairness(self) -> list[Fairness]:
        run, layer = self.run, self.layer
        out = []
        for c, m in zip(layer.consts, layer.members, strict=True):
            for step, fams in FAIRNESS.items():
                out.append(
                    Fairness(
                        taken=partial(_taken, run, families=fams, member=m),
                        enabled=partial(_enabled, run, client=c, step=step, layer=layer),
                    )
                )
        return out

    def path(self, model: Any, goal: str) -> SymPath[Any]:
        return self.run.path(model, goal)


def _taken(run: Unrolling, i: int, *, families: tuple[str, ...], member: Any) -> Any:
    """Step ``i`` of the unrolling is one of ``families`` for ``member``."""
    flags = [
        flag
        for flag, fam, binding in run.choices[i]
        if fam.name in families and binding and binding[0][1].eq(member)
    ]
    return z3.Or(*flags) if flags else z3.BoolVal(False)


def _enabled(run: Unrolling, i: int, *, client: Any, step: str, layer: Layer) -> Any:
    """The client-side precondition of ``step`` for ``client`` in state ``i``."""
    return guard(run.clients[i], client, step, layer)


def _perturbation(run: Unrolling, i: int) -> Any:
    flags = [flag for flag, fam, _ in run.choices[i] if fam.name in PERTURBATIONS]
    return z3.Or(*flags) if flags else z3.BoolVal(False)


def search_lasso(
    depth: int,
    options: Options,
    *,
    universe: Universe,
    layer: Layer,
    group_epoch: int | None = None,
    timeout_ms: int = 60_000,
    confirm: Callable[[Lasso], Confirmation] | None = None,
) -> LassoOutcome:
    """The shortest fair non-converging lasso of the client layer (in steps, up to
    ``depth``): ``invariants.z3.lasso.search_lasso`` over :class:`ClientLayerLasso`
    (module docstring); with ``confirm``, the first lasso it does not confirm ends the
    search inconclusive (no block: the confirmer judges one lasso)."""
    if layer.polls or layer.callbacks:
        raise ValueError(
            "the lasso search has no poll timers or rebalance callbacks as steps in its "
            "fairness (FAIRNESS)"
        )
    start = time.monotonic()
    run = bmc_unrolling(
        options,
        depth,
        universe=universe,
        group_epoch=group_epoch,
        timeout_ms=timeout_ms,
        layer=layer,
    )
    out = lassos.search_lasso(ClientLayerLasso(run, layer, confirm), depth)
    out.seconds = time.monotonic() - start
    return out


def replay_lasso(lasso: Lasso, rules: Any, config: Any, *, after_assignor: Any = None) -> bool:
    """Play the lasso's path through the Python clients and coordinator
    (``bmc_clients.replay_clients``; raises ``bmc.ReplayDiverged`` where a state differs
    from the path's) and say whether the Python loop closes: the Python snapshot of the
    last state is that of the loop's entry."""
    _, snaps = replay_clients(lasso.path, rules, config, after_assignor=after_assignor)
    return bool(snaps[-1] == snaps[lasso.loop])


# --------------------------------------------------------------------------- lossy layer
