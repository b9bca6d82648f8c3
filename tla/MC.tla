-------------------------------- MODULE MC --------------------------------
(***************************************************************************)
(* The model module the .cfg files instantiate.  Clients are model values  *)
(* so that TLC's symmetry reduction may permute them.                      *)
(***************************************************************************)
EXTENDS KIP848Properties

CONSTANTS A, B, C

Order2 == <<A, B>>
Order3 == <<A, B, C>>

\* Interchangeable clients (same subscription, same initial status).  The uniform
\* assignor breaks ties by member order, so this reduction is exact only up to those
\* tie-breaks (the Python engine's --symmetry has the same caveat).
SymmetryAB == Permutations({A, B})
SymmetryBC == Permutations({B, C})
SymmetryABC == Permutations({A, B, C})

=============================================================================
