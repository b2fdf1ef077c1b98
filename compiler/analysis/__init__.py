"""Analysis and rewriting of the cost IR: rewrite rules proved with Z3 (:mod:`rules`), the
simplifier, the SMT encoding, proofs of user claims and explanations of derivations."""
