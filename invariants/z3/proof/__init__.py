"""Z3 as a prover: a symbolic transition relation of the KIP-848 coordinator core,
inductive invariants for groups of any size, and counterexamples to induction.

* :mod:`.state` — the symbolic state (members and partitions as uninterpreted sorts, epochs
  integers) and the projection of a model ``State`` onto it;
* :mod:`.transition` — the transition relation, one disjunct per action family named after
  ``model.actions``;
* :mod:`.reading` — the quantified Z3 reading of an ``invariants.expr`` property over a
  symbolic state (the third reading of a property, next to the Python predicate and the
  finite unrolling of ``invariants.z3.encode``);
* :mod:`.obligations` — the one runner of proof obligations (premise ⇒ conclusion, one Z3
  query each in a context of its own): three-way verdicts, CTIs through the family's
  decoder;
* :mod:`.induction` — the invariant's obligations (initiation and consecution per invariant
  conjunct and action family, step properties per family) and their decoded CTIs;
* :mod:`.agreement` — the relation against the Python model on concrete steps;
* :mod:`.crosscheck` — the same over a config's seeded walks, per action family
  (``groupcheck prove --agreement``);
* :mod:`.clients` — a client layer (a diagnosis model) locating where
  ``OwnedPartitionsAreHeld`` stops being inductive (F1);
* :mod:`.bmc` — bounded model checking over the relation, replayed through the Python
  coordinator.

The abstraction and the strengthening lemmas are described in docs/invariants.md
("Proofs for groups of any size").
"""
