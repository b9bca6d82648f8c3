"""The commands over the symbolic relations (``invariants.z3.proof``): ``prove``
(``prove_cmd``), ``explore --engine bmc`` (``bmc_cmd``; its Convergence lassos in
``lasso_cmd``), and the one table of what they refuse (``capabilities``)."""
