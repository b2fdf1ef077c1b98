"""Ryu's shortest ``repr`` of doubles, and CSV lines of them, as LLVM IR.

What it does: :func:`build_ir` emits the module :mod:`tlop.backends.jit.floatrepr` compiles:
``tlop_float_repr`` (the texts of many doubles, ``\\n``-separated) and ``tlop_csv_lines`` (CSV
lines of float and text columns), both on ``_format_one``, Ryu's ``d2d`` (Ulf Adams, PLDI 2018;
``ulfjack/ryu`` ``ryu/d2s.c``, ``d2s_intrinsics.h``, ``common.h``; the 128-bit tables of
``d2s_full_table.h`` computed by :func:`pow5_tables` from their definition) followed by
CPython's layout of the digits (``format_float_short`` in ``Python/pystrtod.c``, mode ``'r'``).

What it does not do: compile, cache or call the module, or size its buffers
(:mod:`tlop.backends.jit.floatrepr`).
"""

from __future__ import annotations

from llvmlite import ir

__all__ = ["build_ir", "pow5_tables"]

_SYMBOL = "tlop_float_repr"
_LINES = "tlop_csv_lines"

I1, I8, I32, I64, I128 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.IntType(128)
F64 = ir.DoubleType()
_INV_BITCOUNT = _POW5_BITCOUNT = 125  # d2s_full_table.h
_INV_SIZE, _POW5_SIZE = 342, 326


def _pow5bits(e: int) -> int:
    return ((e * 1217359) >> 19) + 1


def pow5_tables() -> tuple:
    """(DOUBLE_POW5_INV_SPLIT, DOUBLE_POW5_SPLIT) as Python ints (each entry's 128 bits):
    ⌊2^(pow5bits(i) − 1 + 125) / 5^i⌋ + 1 and the top 125 bits of 5^i (Ryu's generator)."""
    inv = [(1 << (_pow5bits(i) - 1 + _INV_BITCOUNT)) // 5 ** i + 1 for i in range(_INV_SIZE)]
    split = []
    for i in range(_POW5_SIZE):
        shift = _pow5bits(i) - _POW5_BITCOUNT
        split.append(5 ** i >> shift if shift >= 0 else 5 ** i << -shift)
    return inv, split


def _c(v: int, ty=I64):
    return ir.Constant(ty, v)


def build_ir() -> str:
    """The LLVM IR of ``i64 tlop_float_repr(double* x, i64 n, i8* out, i8* nan, i64 nanlen)``:
    the texts of ``x[0 … n−1]`` separated by ``\\n`` in ``out`` (at least ``n · MAX_CHARS`` bytes,
    plus ``nanlen`` per value), NaN written as the ``nanlen`` bytes at ``nan``; returns the
    number of bytes written."""
    mod = ir.Module(name="tlop_float_repr")
    inv, split = pow5_tables()
    tinv = ir.GlobalVariable(mod, ir.ArrayType(I128, _INV_SIZE), "ryu_pow5_inv")
    tinv.initializer = ir.Constant(ir.ArrayType(I128, _INV_SIZE), [_c(v, I128) for v in inv])
    tinv.global_constant = True
    tinv.linkage = "internal"
    tpow = ir.GlobalVariable(mod, ir.ArrayType(I128, _POW5_SIZE), "ryu_pow5")
    tpow.initializer = ir.Constant(ir.ArrayType(I128, _POW5_SIZE), [_c(v, I128) for v in split])
    tpow.global_constant = True
    tpow.linkage = "internal"

    one = _format_one(mod, tinv, tpow)

    fn = ir.Function(mod, ir.FunctionType(I64, [F64.as_pointer(), I64, I8.as_pointer(), I8.as_pointer(), I64]),
                     _SYMBOL)
    x, n, out, nan, nanlen = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pos = b.alloca(I64)
    b.store(_c(0), pos)
    i = b.alloca(I64)
    b.store(_c(0), i)
    t = b.alloca(I64)
    head, body, done = (fn.append_basic_block(k) for k in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed("<", b.load(i), n), body, done)
    b.position_at_end(body)
    k = b.load(i)
    with b.if_then(b.icmp_signed(">", k, _c(0))):
        p = b.load(pos)
        b.store(_c(10, I8), b.gep(out, [p]))
        b.store(b.add(p, _c(1)), pos)
    v = b.load(b.gep(x, [k]))
    dst = b.gep(out, [b.load(pos)])
    with b.if_else(b.fcmp_unordered("uno", v, v)) as (isnan, number):
        with isnan:
            b.store(_c(0), t)
            h2, b2, d2 = (fn.append_basic_block(k) for k in ("nan_head", "nan_body", "nan_done"))
            b.branch(h2)
            b.position_at_end(h2)
            b.cbranch(b.icmp_signed("<", b.load(t), nanlen), b2, d2)
            b.position_at_end(b2)
            b.store(b.load(b.gep(nan, [b.load(t)])), b.gep(dst, [b.load(t)]))
            b.store(b.add(b.load(t), _c(1)), t)
            b.branch(h2)
            b.position_at_end(d2)
            b.store(b.add(b.load(pos), nanlen), pos)
        with number:
            b.store(b.add(b.load(pos), b.call(one, [v, dst])), pos)
    b.store(b.add(k, _c(1)), i)
    b.branch(head)
    b.position_at_end(done)
    b.ret(b.load(pos))
    _lines_function(mod, one)
    return str(mod)


def _lines_function(mod, one):
    """``i64 tlop_csv_lines(i64 n, i64 ncols, i64* kinds, i8** cols, i8** tabs, i64** offs, i8* out,
    i8** same)``:
    ``n`` CSV lines, each the ``ncols`` cells of one point joined by ``,`` and ended by ``\n``.
    Column ``c`` of kind 0 is a double array (``cols[c]``) written as ``repr`` writes it, NaN as
    the bytes ``tabs[c][offs[c][0] … offs[c][1]−1]``; of kind 1 an i64 index array into a table of
    texts, entry ``i`` being ``tabs[c][offs[c][i] … offs[c][i+1]−1]``.  A number column whose
    ``same[c]`` is not null copies, at the rows where ``same[c][row]`` is not 0, the text of the
    line's first number cell (the caller's promise: the same value) instead of formatting it
    again.  Returns the bytes written."""
    i8p, i64p = I8.as_pointer(), I64.as_pointer()
    fn = ir.Function(mod, ir.FunctionType(I64, [I64, I64, i64p, i8p.as_pointer(), i8p.as_pointer(),
                                                 i64p.as_pointer(), i8p, i8p.as_pointer()]), _LINES)
    n, ncols, kinds, cols, tabs, offs, out, same = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    V = _Vars(b)
    pos = V.new(I64, _c(0))
    j = V.new(I64, _c(0))
    c = V.new(I64, _c(0))
    t = V.new(I64, _c(0))
    first = V.new(I64, _c(-1))  # where the line's first number cell starts (-1: none yet)
    first_end = V.new(I64, _c(0))

    def put(ch):
        p = b.load(pos)
        b.store(_c(ch, I8), b.gep(out, [p]))
        b.store(b.add(p, _c(1)), pos)

    def loop(name, cond, body):
        h, bd, dn = (fn.append_basic_block(f"{name}_{k}") for k in ("head", "body", "done"))
        b.branch(h)
        b.position_at_end(h)
        b.cbranch(cond(), bd, dn)
        b.position_at_end(bd)
        body()
        b.branch(h)
        b.position_at_end(dn)

    def copy(src, lo, hi):
        b.store(lo, t)

        def body():
            p = b.load(pos)
            b.store(b.load(b.gep(src, [b.load(t)])), b.gep(out, [p]))
            b.store(b.add(p, _c(1)), pos)
            b.store(b.add(b.load(t), _c(1)), t)

        loop("copy", lambda: b.icmp_signed("<", b.load(t), hi), body)

    def point():
        b.store(_c(0), c)

        def cell():
            k = b.load(c)
            with b.if_then(b.icmp_signed(">", k, _c(0))):
                put(ord(","))
            col = b.load(b.gep(cols, [k]))
            tab = b.load(b.gep(tabs, [k]))
            off = b.load(b.gep(offs, [k]))
            row = b.load(j)
            with b.if_else(b.icmp_signed("==", b.load(b.gep(kinds, [k])), _c(0))) as (number, text):
                with number:
                    v = b.load(b.gep(b.bitcast(col, F64.as_pointer()), [row]))
                    flags = b.load(b.gep(same, [k]))
                    has = b.icmp_unsigned("!=", b.ptrtoint(flags, I64), _c(0))
                    safe = b.select(has, flags, b.gep(out, [_c(0)]))  # never read when ``has`` is false
                    reuse = b.and_(b.and_(has, b.icmp_signed(">=", b.load(first), _c(0))),
                                   b.icmp_unsigned("!=", b.load(b.gep(safe, [b.select(has, row, _c(0))])), _c(0, I8)))
                    start = b.load(pos)
                    with b.if_else(reuse) as (again, fresh):
                        with again:
                            copy(out, b.load(first), b.load(first_end))
                        with fresh:
                            with b.if_else(b.fcmp_unordered("uno", v, v)) as (isnan, value):
                                with isnan:
                                    copy(tab, b.load(off), b.load(b.gep(off, [_c(1)])))
                                with value:
                                    p = b.load(pos)
                                    b.store(b.add(p, b.call(one, [v, b.gep(out, [p])])), pos)
                    with b.if_then(b.icmp_signed("<", b.load(first), _c(0))):
                        b.store(start, first)
                        b.store(b.load(pos), first_end)
                with text:
                    i = b.load(b.gep(b.bitcast(col, I64.as_pointer()), [row]))
                    copy(tab, b.load(b.gep(off, [i])), b.load(b.gep(off, [b.add(i, _c(1))])))
            b.store(b.add(k, _c(1)), c)

        b.store(_c(-1), first)
        loop("cell", lambda: b.icmp_signed("<", b.load(c), ncols), cell)
        put(10)
        b.store(b.add(b.load(j), _c(1)), j)

    loop("point", lambda: b.icmp_signed("<", b.load(j), n), point)
    b.ret(b.load(pos))


class _Vars:
    """Mutable locals (allocas; LLVM promotes them to registers)."""

    def __init__(self, b):
        self.b = b

    def new(self, ty, init, count=None):
        with self.b.goto_entry_block():
            a = self.b.alloca(ty, count)
        if init is not None:
            self.b.store(init, a)
        return a


def _format_one(mod, tinv, tpow):
    """``i64 one(double v, i8* dst)``: repr(v) (v not NaN) at ``dst``; returns its length."""
    fn = ir.Function(mod, ir.FunctionType(I64, [F64, I8.as_pointer()]), "tlop_float_repr_one")
    fn.linkage = "internal"
    v, dst = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    V = _Vars(b)
    bits = b.bitcast(v, I64)
    sign = b.icmp_unsigned("!=", b.lshr(bits, _c(63)), _c(0))
    mant = b.and_(bits, _c((1 << 52) - 1))
    expo = b.and_(b.lshr(bits, _c(52)), _c(0x7FF))
    pos = V.new(I64, _c(0))

    def put(ch):
        p = b.load(pos)
        b.store(ch if isinstance(ch, ir.Value) else _c(ch, I8), b.gep(dst, [p]))
        b.store(b.add(p, _c(1)), pos)

    def put_text(text: str):
        for ch in text.encode():
            put(ch)

    with b.if_then(sign):
        put(ord("-"))
    special = b.icmp_unsigned("==", expo, _c(0x7FF))
    zero = b.and_(b.icmp_unsigned("==", expo, _c(0)), b.icmp_unsigned("==", mant, _c(0)))
    with b.if_then(special):
        put_text("inf")  # NaN never reaches here
        b.ret(b.load(pos))
    with b.if_then(zero):
        put_text("0.0")
        b.ret(b.load(pos))

    # ---------------------------------------------------------------- Ryu d2d (d2s.c)
    is_sub = b.icmp_unsigned("==", expo, _c(0))
    e2 = b.select(is_sub, _c(1 - 1023 - 52 - 2), b.sub(expo, _c(1023 + 52 + 2)))
    m2 = b.select(is_sub, mant, b.or_(mant, _c(1 << 52)))
    even = b.icmp_unsigned("==", b.and_(m2, _c(1)), _c(0))
    accept = even
    mv = b.mul(m2, _c(4))
    mmshift = b.zext(b.or_(b.icmp_unsigned("!=", mant, _c(0)), b.icmp_unsigned("<=", expo, _c(1))), I64)
    vr, vp, vm = V.new(I64, _c(0)), V.new(I64, _c(0)), V.new(I64, _c(0))
    e10 = V.new(I64, _c(0))
    vm_tz = V.new(I1, _c(0, I1))
    vr_tz = V.new(I1, _c(0, I1))

    def mul_shift(m, mul, j):
        """mulShift64: ((m·lo >> 64) + m·hi) >> (j − 64), 128-bit."""
        mm = b.zext(m, I128)
        lo = b.zext(b.trunc(mul, I64), I128)
        hi = b.lshr(mul, _c(64, I128))
        b0 = b.mul(mm, lo)
        b2 = b.mul(mm, hi)
        r = b.lshr(b.add(b.lshr(b0, _c(64, I128)), b2), b.zext(b.sub(j, _c(64)), I128))
        return b.trunc(r, I64)

    def mul_shift_all(mul, j):
        b.store(mul_shift(b.add(mv, _c(2)), mul, j), vp)
        b.store(mul_shift(b.sub(b.sub(mv, _c(1)), mmshift), mul, j), vm)
        b.store(mul_shift(mv, mul, j), vr)

    def pow5_factor_at_least(value, p):
        """multipleOfPowerOf5(value, p): pow5Factor(value) >= p (value != 0)."""
        cnt = V.new(I64, _c(0))
        val = V.new(I64, value)
        h, body, out = (fn.append_basic_block(k) for k in ("p5_head", "p5_body", "p5_out"))
        b.branch(h)
        b.position_at_end(h)
        nv = b.mul(b.load(val), _c(14757395258967641293))
        b.store(nv, val)
        b.cbranch(b.icmp_unsigned(">", nv, _c(3689348814741910323)), out, body)
        b.position_at_end(body)
        b.store(b.add(b.load(cnt), _c(1)), cnt)
        b.branch(h)
        b.position_at_end(out)
        return b.icmp_unsigned(">=", b.load(cnt), p)

    def pow5bits(e):
        return b.add(b.lshr(b.mul(e, _c(1217359)), _c(19)), _c(1))

    with b.if_else(b.icmp_signed(">=", e2, _c(0))) as (pos_e, neg_e):
        with pos_e:
            q = b.sub(b.lshr(b.mul(e2, _c(78913)), _c(18)), b.zext(b.icmp_signed(">", e2, _c(3)), I64))
            b.store(q, e10)
            k = b.sub(b.add(_c(_INV_BITCOUNT), pow5bits(q)), _c(1))
            i = b.add(b.add(b.neg(e2), q), k)
            mul = b.load(b.gep(tinv, [_c(0), q]))
            mul_shift_all(mul, i)
            with b.if_then(b.icmp_unsigned("<=", q, _c(21))):
                mod5 = b.urem(mv, _c(5))
                with b.if_else(b.icmp_unsigned("==", mod5, _c(0))) as (m5, other):
                    with m5:
                        b.store(pow5_factor_at_least(mv, q), vr_tz)
                    with other:
                        with b.if_else(accept) as (acc, notacc):
                            with acc:
                                b.store(pow5_factor_at_least(b.sub(b.sub(mv, _c(1)), mmshift), q), vm_tz)
                            with notacc:
                                f = pow5_factor_at_least(b.add(mv, _c(2)), q)
                                b.store(b.sub(b.load(vp), b.zext(f, I64)), vp)
        with neg_e:
            ne2 = b.neg(e2)
            q = b.sub(b.lshr(b.mul(ne2, _c(732923)), _c(20)), b.zext(b.icmp_signed(">", ne2, _c(1)), I64))
            b.store(b.add(q, e2), e10)
            i = b.sub(ne2, q)
            k = b.sub(pow5bits(i), _c(_POW5_BITCOUNT))
            j = b.sub(q, k)
            mul = b.load(b.gep(tpow, [_c(0), i]))
            mul_shift_all(mul, j)
            with b.if_else(b.icmp_unsigned("<=", q, _c(1))) as (small, larger):
                with small:
                    b.store(_c(1, I1), vr_tz)
                    with b.if_else(accept) as (acc, notacc):
                        with acc:
                            b.store(b.icmp_unsigned("==", mmshift, _c(1)), vm_tz)
                        with notacc:
                            b.store(b.sub(b.load(vp), _c(1)), vp)
                with larger:
                    with b.if_then(b.icmp_unsigned("<", q, _c(63))):
                        maskq = b.sub(b.shl(_c(1), q), _c(1))
                        b.store(b.icmp_unsigned("==", b.and_(mv, maskq), _c(0)), vr_tz)

    # Step 4: the shortest representation in the interval
    removed = V.new(I64, _c(0))
    last = V.new(I64, _c(0))
    output = V.new(I64, _c(0))

    def loop(cond_and_body):
        """while (cond_and_body() returns True after doing its step)."""
        h, body, out = (fn.append_basic_block(k) for k in ("rm_head", "rm_body", "rm_out"))
        b.branch(h)
        b.position_at_end(h)
        go, step = cond_and_body()
        b.cbranch(go, body, out)
        b.position_at_end(body)
        step()
        b.branch(h)
        b.position_at_end(out)

    ten = _c(10)
    with b.if_else(b.or_(b.load(vm_tz), b.load(vr_tz))) as (general, common):
        with general:
            def g1():
                vpd, vmd = b.udiv(b.load(vp), ten), b.udiv(b.load(vm), ten)

                def step():
                    vmm = b.sub(b.load(vm), b.mul(vmd, ten))
                    vrd = b.udiv(b.load(vr), ten)
                    vrm = b.sub(b.load(vr), b.mul(vrd, ten))
                    b.store(b.and_(b.load(vm_tz), b.icmp_unsigned("==", vmm, _c(0))), vm_tz)
                    b.store(b.and_(b.load(vr_tz), b.icmp_unsigned("==", b.load(last), _c(0))), vr_tz)
                    b.store(vrm, last)
                    b.store(vrd, vr)
                    b.store(vpd, vp)
                    b.store(vmd, vm)
                    b.store(b.add(b.load(removed), _c(1)), removed)
                return b.icmp_unsigned(">", vpd, vmd), step

            loop(g1)
            with b.if_then(b.load(vm_tz)):
                def g2():
                    vmd = b.udiv(b.load(vm), ten)
                    vmm = b.sub(b.load(vm), b.mul(vmd, ten))

                    def step():
                        vpd = b.udiv(b.load(vp), ten)
                        vrd = b.udiv(b.load(vr), ten)
                        vrm = b.sub(b.load(vr), b.mul(vrd, ten))
                        b.store(b.and_(b.load(vr_tz), b.icmp_unsigned("==", b.load(last), _c(0))), vr_tz)
                        b.store(vrm, last)
                        b.store(vrd, vr)
                        b.store(vpd, vp)
                        b.store(vmd, vm)
                        b.store(b.add(b.load(removed), _c(1)), removed)
                    return b.icmp_unsigned("==", vmm, _c(0)), step

                loop(g2)
            r = b.load(vr)
            half_even = b.and_(b.and_(b.load(vr_tz), b.icmp_unsigned("==", b.load(last), _c(5))),
                               b.icmp_unsigned("==", b.and_(r, _c(1)), _c(0)))
            with b.if_then(half_even):
                b.store(_c(4), last)
            outside = b.and_(b.icmp_unsigned("==", r, b.load(vm)),
                             b.or_(b.not_(accept), b.not_(b.load(vm_tz))))
            up = b.or_(outside, b.icmp_unsigned(">=", b.load(last), _c(5)))
            b.store(b.add(r, b.zext(up, I64)), output)
        with common:
            round_up = V.new(I1, _c(0, I1))
            hundred = _c(100)
            vpd, vmd = b.udiv(b.load(vp), hundred), b.udiv(b.load(vm), hundred)
            with b.if_then(b.icmp_unsigned(">", vpd, vmd)):
                vrd = b.udiv(b.load(vr), hundred)
                vrm = b.sub(b.load(vr), b.mul(vrd, hundred))
                b.store(b.icmp_unsigned(">=", vrm, _c(50)), round_up)
                b.store(vrd, vr)
                b.store(vpd, vp)
                b.store(vmd, vm)
                b.store(b.add(b.load(removed), _c(2)), removed)

            def c1():
                vpd, vmd = b.udiv(b.load(vp), ten), b.udiv(b.load(vm), ten)

                def step():
                    vrd = b.udiv(b.load(vr), ten)
                    vrm = b.sub(b.load(vr), b.mul(vrd, ten))
                    b.store(b.icmp_unsigned(">=", vrm, _c(5)), round_up)
                    b.store(vrd, vr)
                    b.store(vpd, vp)
                    b.store(vmd, vm)
                    b.store(b.add(b.load(removed), _c(1)), removed)
                return b.icmp_unsigned(">", vpd, vmd), step

            loop(c1)
            r = b.load(vr)
            up = b.or_(b.icmp_unsigned("==", r, b.load(vm)), b.load(round_up))
            b.store(b.add(r, b.zext(up, I64)), output)
    exp10 = b.add(b.load(e10), b.load(removed))

    # ---------------------------------------------------------------- CPython's layout
    o = b.load(output)
    nd = V.new(I64, _c(1))  # the number of digits of o (o < 10^17)
    for p in range(1, 18):
        with b.if_then(b.icmp_unsigned(">=", o, _c(10 ** p))):
            b.store(_c(p + 1), nd)
    n = b.load(nd)
    decpt = b.add(n, exp10)

    def write_digits(base, split):
        """The n digits of o at dst[base + i + (i >= split)] (a '.' goes in the gap), written
        from the last; the caller moves ``pos``."""
        dv = V.new(I64, o)
        di = V.new(I64, b.sub(n, _c(1)))

        def dg():
            def step():
                x = b.load(dv)
                q = b.udiv(x, ten)
                i = b.load(di)
                at = b.add(b.add(base, i), b.zext(b.icmp_signed(">=", i, split), I64))
                b.store(b.trunc(b.add(b.sub(x, b.mul(q, ten)), _c(48)), I8), b.gep(dst, [at]))
                b.store(q, dv)
                b.store(b.sub(i, _c(1)), di)
            return b.icmp_signed(">=", b.load(di), _c(0)), step

        loop(dg)

    def put_zeros(count):
        t = V.new(I64, _c(0))

        def zz():
            def step():
                put(ord("0"))
                b.store(b.add(b.load(t), _c(1)), t)
            return b.icmp_signed("<", b.load(t), count), step

        loop(zz)

    def dot_at(p):
        b.store(_c(ord("."), I8), b.gep(dst, [p]))

    use_exp = b.or_(b.icmp_signed("<=", decpt, _c(-4)), b.icmp_signed(">", decpt, _c(16)))
    with b.if_else(use_exp) as (sci, fixed):
        with sci:  # d[.ddd]e±XX
            p0 = b.load(pos)
            write_digits(p0, _c(1))
            several = b.icmp_signed(">", n, _c(1))
            with b.if_then(several):
                dot_at(b.add(p0, _c(1)))
            b.store(b.add(b.add(p0, n), b.zext(several, I64)), pos)
            put(ord("e"))
            x = b.sub(decpt, _c(1))
            neg = b.icmp_signed("<", x, _c(0))
            put(b.select(neg, _c(ord("-"), I8), _c(ord("+"), I8)))
            ax = b.select(neg, b.neg(x), x)
            with b.if_then(b.icmp_signed(">=", ax, _c(100))):
                put(b.trunc(b.add(b.udiv(ax, _c(100)), _c(48)), I8))
            put(b.trunc(b.add(b.urem(b.udiv(ax, ten), ten), _c(48)), I8))
            put(b.trunc(b.add(b.urem(ax, ten), _c(48)), I8))
        with fixed:
            with b.if_else(b.icmp_signed("<=", decpt, _c(0))) as (small, big):
                with small:  # 0.000ddd
                    put(ord("0"))
                    put(ord("."))
                    put_zeros(b.neg(decpt))
                    p0 = b.load(pos)
                    write_digits(p0, n)
                    b.store(b.add(p0, n), pos)
                with big:
                    with b.if_else(b.icmp_signed(">=", decpt, n)) as (integral, frac):
                        with integral:  # ddd000.0
                            p0 = b.load(pos)
                            write_digits(p0, n)
                            b.store(b.add(p0, n), pos)
                            put_zeros(b.sub(decpt, n))
                            put(ord("."))
                            put(ord("0"))
                        with frac:  # dd.ddd
                            p0 = b.load(pos)
                            write_digits(p0, decpt)
                            dot_at(b.add(p0, decpt))
                            b.store(b.add(b.add(p0, n), _c(1)), pos)
    b.ret(b.load(pos))
    return fn
