"""The doc's notation of an expression (``reports.catalogue.formula``): precedence, the
reach of a quantifier, the abbreviations (``fresh``, chained comparisons, ``↔``)."""

from __future__ import annotations

from invariants.expr import Cmp, Const, Fn, Implies, Not, Or, Rel, Var, all_of, exists, forall
from invariants.properties import FRESH_TARGET
from reports.catalogue import formula

m, p = Var("m", "member"), Var("p", "partition")
A, B, C = Rel("a", (m,)), Rel("b", (m,)), Rel("c", (m,), "post")


def test_precedence_and_quantifier_reach() -> None:
    assert formula(Implies(all_of(A, Or((B, C))), A)) == "a(m) ∧ (b(m) ∨ c″(m)) → a(m)"
    assert formula(Or((all_of(A, B), C))) == "(a(m) ∧ b(m)) ∨ c″(m)"
    assert formula(Implies(Implies(A, B), C)) == "(a(m) → b(m)) → c″(m)"
    assert formula(Implies(A, Implies(B, C))) == "a(m) → b(m) → c″(m)"
    # a quantifier's body reaches to the end: in parentheses anywhere but at the end
    assert formula(Implies(exists(m)(A), forall(p)(B))) == "(∃m. a(m)) → ∀p. b(m)"
    assert formula(all_of(Not(exists(m)(A)), B)) == "¬(∃m. a(m)) ∧ b(m)"
    assert formula(all_of(B, Not(exists(m)(A)))) == "b(m) ∧ ¬∃m. a(m)"
    assert formula(Not(all_of(A, B))) == "¬(a(m) ∧ b(m))"


def test_abbreviations() -> None:
    x, y, z = Fn("x", (m,), "pre"), Fn("y"), Const(-2)
    assert formula(all_of(Cmp("<=", Const(0), x), Cmp("<=", x, y), Cmp("<", y, z), A)) == (
        "0 ≤ x′(m) ≤ y() < −2 ∧ a(m)"
    )
    assert formula(all_of(Cmp("<=", Const(0), x), Cmp(">=", x, y))) == "0 ≤ x′(m) ∧ x′(m) ≥ y()"
    assert formula(all_of(A, Or((all_of(B, C), all_of(Not(B), Not(C)))))) == (
        "a(m) ∧ (b(m) ↔ c″(m))"
    )
    assert formula(Implies(FRESH_TARGET, A)) == "fresh → a(m)"
