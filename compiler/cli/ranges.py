"""Parameter ranges on the command line (``2..256:x2``, ``0..100:+10``, ``1,2,4``).

What it does: turns one ``NAME=RANGE`` argument into its list of values, counting the points
before generating any (so that no range can exhaust memory) and rejecting non-finite bounds.
``..`` is inclusive: the bound is a value when the steps land on it (``2..64:x2`` ends at 64).
A range whose steps stop short of its bound (``8KiB..1MiB:x4`` ends at 512KiB), and a bare step
(``2..64:2``, which is +2, not ×2), are told on stderr with the values they produced.
What it does not do: build the grid of several parameters (that is the caller's).
"""

from __future__ import annotations

import math

from tlop.runtime.diagnostics import TlopError

__all__ = ["parse_range", "parse_axis", "MAX_SWEEP_POINTS", "MAX_UNSTEPPED_SIZES"]

#: the most points of one range unless the caller allows more (``tlop sweep --max-points``)
MAX_SWEEP_POINTS = 10_000_000

#: the most points a size range without a step has before a warning (``S=1..4KiB`` steps by one
#: byte into 4,096 points: rarely what was meant)
MAX_UNSTEPPED_SIZES = 64


def parse_range(name: str, text: str, ptype: str, program, limit: int = MAX_SWEEP_POINTS) -> list:
    """``2..256:x2`` (geometric), ``0..100:+10`` (arithmetic), ``1..8`` (step 1), ``1,2,4`` (list)."""
    return list(parse_axis(name, text, ptype, program, limit))


def parse_axis(name: str, text: str, ptype: str, program, limit: int = MAX_SWEEP_POINTS):
    """The range as a :class:`tlop.cli.grid.Axis`: an arithmetic range is not generated (its
    values are computed from their indices), the others are stored as floats; at most
    ``limit`` points, counted before any is generated."""
    from tlop.backends.binding import parse_cli_value
    from tlop.cli.grid import Axis

    if ".." not in text:
        return Axis([parse_cli_value(t, ptype, name, program) for t in text.split(",")])
    body, _, step = text.partition(":")
    lo_t, _, hi_t = body.partition("..")
    lo = parse_cli_value(lo_t, ptype, name, program)
    hi = parse_cli_value(hi_t, ptype, name, program)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise TlopError(f"{name}={text}: range bounds must be finite")
    if hi < lo:
        raise TlopError(f"{name}={text}: the range is empty ({lo:g} > {hi:g})")
    values: list = []
    if step.startswith("x") or step.startswith("*"):
        factor = _number(name, text, step[1:], "the factor of a geometric step")
        if not (factor > 1 and math.isfinite(factor)):
            raise TlopError(f"{name}={text}: a geometric step needs a finite factor > 1")
        if lo <= 0:
            raise TlopError(f"{name}={text}: a geometric range must start above 0")
        n = int(math.floor((math.log(hi) - math.log(lo)) / math.log(factor) + 1e-9)) + 1
        if n > limit:
            raise TlopError(f"{name}={text}: {n:,} points; at most {limit:,}")
        v = lo
        while v <= hi * (1 + 1e-12) and len(values) < n + 1:
            values.append(v)
            v *= factor
        if values[-1] < hi * (1 - 1e-9):
            _tell(name, text, ptype, program, values,
                  f"×{_g(factor)} does not land on {hi_t.strip()}: the last value is "
                  f"{_text(ptype, program, values[-1])}")
        return Axis(values)
    else:
        inc = parse_cli_value(step[1:] if step.startswith("+") else step, ptype, name, program) if step else 1.0
        if not (inc > 0 and math.isfinite(inc)):
            raise TlopError(f"{name}={text}: the step must be positive and finite")
        span = (hi - lo) / inc  # may overflow to inf (1e300 / 1e-300): counted before converting
        if not span < limit:
            count = ("over 1e308" if math.isinf(span) else f"{int(math.floor(span + 1e-9)) + 1:,}"
                     if span < 1e15 else f"{span:.3g}")
            raise TlopError(f"{name}={text}: {count} points; "
                            f"at most {limit:,}")
        n = int(math.floor(span + 1e-9)) + 1
        if n > limit:
            raise TlopError(f"{name}={text}: {n:,} points; at most {limit:,}")
        if ptype == "bytes" and not step and n > MAX_UNSTEPPED_SIZES:
            import warnings

            from tlop.runtime.text import printable

            lo_s, hi_s = printable(lo_t.strip()), printable(hi_t.strip())
            warnings.warn(f"{printable(name)}={printable(text)}: a size range without a step goes up by 1 B, "
                          f"{n:,} points; give a step if that is not what you meant, e.g. "
                          f"{printable(name)}={lo_s}..{hi_s}:x2 (doubling) or {printable(name)}={lo_s}..{hi_s}:+1KiB",
                          stacklevel=2)
        last = lo + (n - 1) * inc
        if step and not step.startswith("+") and ptype not in ("bytes", "time") and inc > 1 and lo > 0:
            _tell(name, text, ptype, program, [lo + i * inc for i in range(min(n, 4))] + [last] * (n > 4),
                  f"the step {step} adds {_text(ptype, program, inc)} (write :+{step} to say so, "
                  f":x{step} to multiply)", n)
        elif n > 1 and last < hi - inc * 1e-9 and last < hi * (1 - 1e-9):
            _tell(name, text, ptype, program, [lo + i * inc for i in range(min(n, 4))] + [last] * (n > 4),
                  f"the steps do not land on {hi_t.strip()}: the last value is {_text(ptype, program, last)}", n)
        return Axis(lo=lo, inc=inc, n=n)


def _g(x: float) -> str:
    return f"{x:g}"


def _text(ptype: str, program, v: float) -> str:
    from tlop.cli.format import param_text

    return param_text(ptype, v, getattr(program, "channels", ()))


def _tell(name: str, text: str, ptype: str, program, values: list, why: str, n: int = 0) -> None:
    """A note on stderr: what ``NAME=RANGE`` produced, and why it may not be what was meant."""
    import warnings

    from tlop.runtime.text import printable

    n = n or len(values)
    shown = [_text(ptype, program, v) for v in values]
    if n > len(values) - 1 and len(values) >= 5 and n > 5:
        shown = shown[:4] + ["…"] + shown[-1:]
    warnings.warn(f"{printable(name)}={printable(text)}: {why}; {n} value{'s' * (n != 1)}: {', '.join(shown)}",
                  stacklevel=3)


def _number(name: str, text: str, t: str, what: str) -> float:
    try:
        return float(t)
    except ValueError:
        from tlop.runtime.text import printable
        raise TlopError(f"{printable(name)}={printable(text)}: {what} must be a number, "
                        f"not '{printable(t)}' (e.g. {printable(name)}=2..256:x2)") from None
