"""Back ends of the cost IR: the reference interpreter (the oracle), the LLVM JIT, and the
printers in the papers' notation (text and LaTeX)."""
