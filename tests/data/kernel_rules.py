"""Replacements of the reconciliation kernel written against ``model/sets.py``
(``model.consumer.reconcile.kernel_rule``): ``prove --rules`` and ``explore --engine bmc --rules``
read them with the Z3 backend, the explicit engines with frozensets.

SAME: the reference kernel, restated (revoke first, then assign what is free).
EAGER: revokes without waiting — a member that must revoke jumps to the target epoch at
once, its revoked partitions released before its client acknowledged (the catalogue's
``revoke-without-waiting`` kernel, restated).
MIXED: EAGER plus a client rule: the symbolic engines cannot read the client rule.
PLAIN: the reference rule as a plain function of a Member: the symbolic engines cannot
read it.
PYIF: a kernel with a Python ``if`` on a truth value: it runs on frozensets, but Z3
cannot read it.
STALE: a replacement of the offset-commit check (``model.consumer.coordinator.commit_kernel_rule``)
accepting a known member's commit at any epoch (the catalogue's
``accept-stale-commit-epoch``, restated).
"""

from model.consumer import coordinator as co
from model.consumer import reconcile as rc
from model.rules import DEFAULT_RULES
from model.status import MemberState


def same(ops, member, **kw):
    """The reference kernel."""
    return rc.reconcile_kernel(ops, member, **kw)


def eager(ops, member, *, target_epoch, **kw):
    """The reference kernel, but a member left revoking is made STABLE at the target
    epoch with nothing pending."""
    out = rc.reconcile_kernel(ops, member, target_epoch=target_epoch, **kw)
    return ops.ite(
        ops.in_state(out, MemberState.UNREVOKED_PARTITIONS),
        lambda: ops.with_epoch(
            out, target_epoch, state=ops.state(MemberState.STABLE), revoking=ops.empty()
        ),
        lambda: out,
    )


SAME = {"reconcile": rc.kernel_rule(same)}
EAGER = {"reconcile": rc.kernel_rule(eager)}
MIXED = {
    "reconcile": rc.kernel_rule(eager),
    "client_build_heartbeat": DEFAULT_RULES.client_build_heartbeat,
}


def plain(member, **kw):
    """The reference rule as a plain function of a Member: no kernel to read."""
    return rc.reconcile(member, **kw)


PLAIN = {"reconcile": plain}


def pyif(ops, member, **kw):
    """The reference kernel, with a Python ``if`` on a truth value of the interface."""
    out = rc.reconcile_kernel(ops, member, **kw)
    if ops.nonempty(ops.revoking(out)):
        return out
    return out


PYIF = {"reconcile": rc.kernel_rule(pyif)}


def stale(ops, *, epoch, known, nobody, **kw):
    """The offset-commit check accepting a known member's commit at any epoch."""
    return ops.any_(ops.all_(ops.lt(epoch, 0), nobody), known)


STALE = {"validate_offset_commit": co.commit_kernel_rule(stale)}
