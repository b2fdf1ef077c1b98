"""What a collective sends on a few ranks, ``{(src, dst): (bytes, messages)}``: the expected
tables the real-MPI tuning tests compare Open MPI's counters and MPICH's transport trace with.
The binomial trees differ between the two libraries and stay with each library's helpers."""


def flat(m, P=4):
    """The root sends m to every other rank."""
    return {(0, d): (m, 1) for d in range(1, P)}


def chain(m, s=None, P=4):
    """Each rank forwards m to the next, in segments of s bytes (one message without s)."""
    k = 1 if s is None else -(-m // s)
    return {(r, r + 1): (m, k) for r in range(P - 1)}


def ring(m, P=4):
    """The ring allgather: P − 1 blocks of m to the right neighbour."""
    return {(r, (r + 1) % P): ((P - 1) * m, P - 1) for r in range(P)}


def recursive_doubling(m, P=4):
    """The recursive-doubling allgather on 4 ranks: m to the partner r xor 1, then 2m to r xor 2."""
    out = {}
    for r in range(P):
        out[(r, r ^ 1)] = (m, 1)
        out[(r, r ^ 2)] = (2 * m, 1)
    return out
