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


def schedule_pairs(ref: str, P: int, m: int, params=None, mapping: str = "sequential(4)") -> dict:
    """``{(src, dst): (bytes, messages)}`` of a stdlib schedule (``"coll/allreduce:mpich_ring"``) at
    (P, m) with ``params``, from its stages as ``tlop explain`` lists them: every send, a
    ``weight 2`` send (an exchange in τ-Lop) counted once each way, as the sendrecv it stands for."""
    from collections import Counter

    import tlop
    from tlop.analysis.stages import explain_stages
    from tlop.backends.binding import as_mapping, bind_mapping
    from tlop.runtime.profile import load_profile

    module, _, name = ref.partition(":")
    h = tlop.load(module, model="taulop")[name]
    names = {p.name for p in h.params}
    values = {"P": P, "m": m, **{k: v for k, v in (params or {}).items() if k in names}}
    values = {k: v for k, v in values.items() if k in names}
    mp = as_mapping(mapping)
    env = h.bind({k: str(v) for k, v in values.items()}, strings=True)
    bound = bind_mapping(h.ir, env, mp)
    shown = {p.name: str(values.get(p.name, env[p.name])) for p in h.ir.params}
    e = explain_stages(h.module.program, h.ir, load_profile("metropolis"), mp, bound, shown, shown)
    nbytes, count = Counter(), Counter()
    for s in e.stages:
        for src, dst, size, w, _ch, _ph in s.sends:
            for pair in ([(src, dst)] if w == 1 else [(src, dst), (dst, src)]):
                nbytes[pair] += int(size)
                count[pair] += 1
    return {p: (nbytes[p], count[p]) for p in count}
