"""The names of the vocabulary properties are written in: its relations and functions
(docs/invariants.md; each family's projection gives them a meaning:
``invariants/snapshot.py`` for KIP-848, ``invariants/classic_snapshot.py`` for the classic
protocol). Kept apart from the projections so that each reads them without importing
another family's."""

from __future__ import annotations

RELATIONS = (
    "client_owns",
    "client_member",
    "client_in_group",
    "is_member",
    "assigned",
    "revoking",
    "holds",
    "target",
    "subscribed",
    "exists",
    "committed_by",
    "stable",
    "unrevoked",
    "unreleased",
    "server_error",
    "zombie",
    "client_revoking",
    "client_joining",
    "client_synced",
    "claims",
    "under_share",
    "epoch_clash",
    "commit_by_epoch_holder",
    "indexed",
)
"""Every relation of the vocabulary (the table above)."""

UNARY_RELATIONS = frozenset(
    {
        "client_in_group",
        "is_member",
        "exists",
        "stable",
        "unrevoked",
        "unreleased",
        "server_error",
        "zombie",
        "client_joining",
        "client_synced",
        "under_share",
        "indexed",
    }
)

FUNCTIONS = (
    "group_epoch",
    "assignment_epoch",
    "group_status",
    "member_epoch",
    "client_epoch",
    "client_incarnation",
    "committed_epoch",
    "instance",
    "assigned_since",
    "holder_commit_rejected",
    "assignor_runs",
    "sticky_assignor",
    "group_deletions",
    "policy_breached",
    "assignor_outdated",
    "index_entries",
)
"""Every function of the vocabulary."""

BINARY_FUNCTIONS = frozenset({"assigned_since"})
"""Functions of two arguments (the others take none or one)."""

NULLARY_FUNCTIONS = frozenset(
    {
        "group_epoch",
        "assignment_epoch",
        "group_status",
        "holder_commit_rejected",
        "assignor_runs",
        "sticky_assignor",
        "group_deletions",
        "policy_breached",
        "assignor_outdated",
    }
)
