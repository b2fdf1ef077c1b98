"""tlop: a compiler for communication-cost models of parallel algorithms."""
