"""Named properties of the protocol: safety, convergence and witnesses, read in Python and in Z3."""
