"""CUDA copy benchmark: cudaMemcpyAsync host↔device postal α, β, pinned and pageable (paper 003
Table II), when a GPU and the optional ``cupy`` extra are present.

What it does: :func:`probe` says whether CUDA can be measured here and, if not, why (no cupy,
no device) — ``tlop measure`` then skips the benchmark with that message.  :func:`measure`
times ``cudaMemcpyAsync`` + stream synchronisation for each size, direction (HostToDevice,
DeviceToHost) and host memory kind (pinned, pageable), adaptively with the same rule as the
MPI benchmarks, and :func:`fit_copies` turns the medians into postal α, β per (direction,
memory) with :func:`tlop.runtime.measure.fit.postal_fit` — the fitting is separate from the CUDA
calls so it is tested on synthetic data without a GPU.

What it does not do: GPU-aware MPI or GPUDirect paths.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from tlop.runtime.measure.fit import postal_fit
from tlop.runtime.measure.stats import Rule, stop_reason, summarize

__all__ = ["probe", "measure", "fit_copies"]


def probe() -> Optional[str]:
    """None when a CUDA device can be measured, else the reason it cannot."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "no GPU support: the optional 'cupy' package is not installed (pip install tlop[cuda])"
    except Exception as err:  # a broken CUDA install raises assorted errors at import
        return f"no GPU support: cupy failed to load ({err})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:
        return f"no GPU: the CUDA runtime reports {err}"
    return None if n > 0 else "no GPU: the CUDA runtime sees no device"


def measure(sizes, rule: Rule) -> list:
    """Records ``{"direction", "memory", "m", "stats", "samples"}`` for every size/direction/
    memory kind (requires :func:`probe` to return None)."""
    import cupy

    rt = cupy.cuda.runtime
    stream = cupy.cuda.Stream(non_blocking=True)
    out = []
    for memory in ("pinned", "pageable"):
        for m in sizes:
            m = int(m)
            dev = cupy.empty(max(m, 1), dtype=np.uint8)
            dev.fill(1)
            if memory == "pinned":
                mem = cupy.cuda.alloc_pinned_memory(max(m, 1))
                host = np.frombuffer(mem, dtype=np.uint8, count=max(m, 1))
            else:
                host = np.empty(max(m, 1), dtype=np.uint8)
            host.fill(1)
            for direction, kind in (("HostToDevice", rt.memcpyHostToDevice),
                                    ("DeviceToHost", rt.memcpyDeviceToHost)):
                dst, src = (dev.data.ptr, host.ctypes.data) if kind == rt.memcpyHostToDevice \
                    else (host.ctypes.data, dev.data.ptr)

                def once():
                    t0 = time.perf_counter()
                    rt.memcpyAsync(dst, src, m, kind, stream.ptr)
                    stream.synchronize()
                    return time.perf_counter() - t0

                for _ in range(rule.warmup):
                    once()
                samples: list = []
                start = time.perf_counter()
                while stop_reason(samples, rule, time.perf_counter() - start) is None:
                    samples.append(once())
                out.append({"direction": direction, "memory": memory, "m": m,
                            "stats": summarize(samples, rule.cl), "samples": samples})
    return out


def fit_copies(records: list) -> dict:
    """Postal α, β (with breakpoints) per ``direction/memory`` from the records' medians."""
    groups: dict = {}
    for r in records:
        groups.setdefault(f"{r['direction']}/{r['memory']}", []).append((r["m"], r["stats"]["median"]))
    out = {}
    for key, pts in sorted(groups.items()):
        pts.sort()
        out[key] = postal_fit([m for m, _ in pts], [t for _, t in pts])
    return out
