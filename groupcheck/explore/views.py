"""The views an exhaustive search meets, numbered, with their memoised verdicts.

Properties read a state only through its snapshot, which is a function of the state's
``snapshot_key`` (the group, the topics and a few fields of each client): many states
differ only in messages in flight or client bookkeeping the properties do not read. Each
distinct key is projected once and numbered; state verdicts are memoised per view, step
verdicts per pair of views. The serial engine (``groupcheck.explore.bfs``) keeps one table,
each parallel worker (``groupcheck.explore.pbfs``) its own.
"""

from __future__ import annotations

from collections.abc import Hashable

from invariants.check import Checker, Violation
from invariants.expr import Snapshot
from invariants.families import SNAPSHOTS, SnapshotFacet
from invariants.snapshot import project_key
from model.actions import Action
from model.system import AnyState


class Views:
    """Snapshot keys met so far, numbered in the order met, and the verdicts on them."""

    __slots__ = (
        "checker",
        "facet",
        "index",
        "keys",
        "snapshots",
        "state_verdicts",
        "step_verdicts",
    )

    def __init__(self, checker: Checker) -> None:
        self.checker = checker
        self.index: dict[Hashable, int] = {}
        self.keys: list[Hashable] = []
        self.snapshots: list[Snapshot] = []
        self.state_verdicts: list[list[Violation] | None] = []
        self.step_verdicts: dict[tuple[int, int], list[Violation]] = {}
        self.facet: SnapshotFacet | None = None
        """The snapshot reading of the search's family (``invariants.families.SNAPSHOTS``),
        resolved at the first state: every state of one search is of one family."""

    def _facet(self, s: AnyState) -> SnapshotFacet:
        facet = self.facet
        if facet is None:
            facet = self.facet = SNAPSHOTS.of_state(s)
        return facet

    def number(self, key: Hashable) -> int:
        """The number of snapshot key ``key`` (projected when first met)."""
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.keys)
            self.keys.append(key)
            self.snapshots.append(project_key(key))  # type: ignore[arg-type]
            self.state_verdicts.append(None)
        return i

    def of(self, s: AnyState) -> int:
        """The view of state ``s``."""
        return self.number(self._facet(s).key(s))

    def after(self, pre_view: int, pre: AnyState, post: AnyState) -> int:
        """The view of ``post``, a successor of ``pre`` (whose view is ``pre_view``): the
        clients the step left as they were keep their part of the key
        (``invariants.snapshot.snapshot_key_after``)."""
        return self.number(self._facet(post).key_after(self.keys[pre_view], pre, post))

    def check_state(self, s: AnyState, view: int) -> list[Violation]:
        """The state properties on ``s``, whose view is ``view``."""
        verdict = self.state_verdicts[view]
        if verdict is None:
            verdict = self.state_verdicts[view] = self.checker.check_state(s, self.snapshots[view])
        return verdict

    def check_step(
        self, pre: AnyState, a: int, action: Action, post: AnyState, b: int
    ) -> list[Violation]:
        """The step properties on a transition from the state of view ``a`` to one of view
        ``b``; a memoised verdict still records the witnesses the step shows."""
        verdict = self.step_verdicts.get((a, b))
        if verdict is None:
            verdict = self.step_verdicts[a, b] = self.checker.check_step(
                pre, action, post, self.snapshots[a], self.snapshots[b]
            )
        else:
            self.checker.note_witnesses(pre, action, post)
        return verdict
