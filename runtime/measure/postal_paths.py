"""Postal and max-rate *paths* of a measured profile: what ``tlop measure`` fits, where
``stdlib/postal`` reads it.

What it does: :func:`add_postal_paths` turns the fits :mod:`.assemble` already computes — the
piecewise postal fit of each channel's ping-pong (``fits.postal``), the max-rate rates
(``fits.max_rate``) and, when a GPU was measured, the cudaMemcpyAsync fits (``fits.cuda``) —
into path channels (``{"path": true}``) and the model-qualified scalars of
``stdlib/postal/platform.tlop`` (``postal.alpha_eager`` …), so that the postal and max-rate
models evaluate on a freshly measured profile.  The mapping, recorded in ``fits.postal_paths``
and the notes:

* the shared-memory channel is the path ``cpu_on_node`` (two ranks of one node; which sockets
  they sit on is not controlled, so no ``cpu_on_socket`` is written), the network channel is
  ``cpu_off_node`` (on a single host that is the network stack over loopback: the notes say so);
* protocols from the fit's segments (:func:`protocols_from_fit`): one segment is every protocol;
  with more, the eager/rendezvous boundary is the fit's ``protocol_switch`` (its largest upward
  jump) or else its last breakpoint, rendezvous is the last segment, eager the last segment below
  the boundary, short the first segment when there are two or more below it;
  ``short_max``/``eager_max`` are the largest measured sizes of the short and eager segments;
* a negative fitted α or β (a noisy fit) is stored as 0, with a warning;
* ``R_N`` of ``cpu_off_node`` is the largest aggregate rate the max-rate benchmark saw on the
  network channel (with one pair, that is one process's rate: a lower bound of R_N);
* the CUDA copies (pinned host memory) go to ``h2d_on_socket`` and ``d2h_on_socket``; the
  measuring process's socket relative to the GPU is not controlled, which the notes say.  003
  Table II has one α + β·s line per path, so a piecewise copy fit becomes one line: α of its
  first segment (the small copies, where α dominates) and β of its last (the large ones, where
  β does); with one segment that is the fit itself.

What it does not do: measure GPU-to-GPU paths (GPUDirect, CUDA-aware MPI) — no benchmark does —
so the GPU strategies of ``stdlib/postal/gpu.tlop`` need a profile such as ``summit``; or fit
anything itself (:mod:`.fit` does).
"""

from __future__ import annotations

__all__ = ["add_postal_paths", "protocols_from_fit", "PATH_OF_KIND"]

#: measured channel kind -> the postal path it is
PATH_OF_KIND = {"shm": "cpu_on_node", "tcp": "cpu_off_node", "rdma": "cpu_off_node"}
_MEMCPY = {"HostToDevice/pinned": "h2d_on_socket", "DeviceToHost/pinned": "d2h_on_socket"}


def protocols_from_fit(fit: dict) -> dict:
    """``{"short": (α, β), "eager": (α, β), "rend": (α, β), "short_max": B, "eager_max": B}`` from
    a :func:`tlop.runtime.measure.fit.postal_fit` result with at least one segment."""
    segs = fit["segments"]
    if len(segs) == 1:
        one = (segs[0]["alpha"], segs[0]["beta"])
        return {"short": one, "eager": one, "rend": one, "short_max": 0.0, "eager_max": 0.0}
    boundary = fit.get("protocol_switch") or fit["breakpoints"][-1]
    below = [s for s in segs if s["m_min"] < boundary]
    above = [s for s in segs if s["m_min"] >= boundary]
    rend, eager = above[-1], below[-1]
    short = below[0] if len(below) >= 2 else eager
    return {"short": (short["alpha"], short["beta"]), "eager": (eager["alpha"], eager["beta"]),
            "rend": (rend["alpha"], rend["beta"]),
            "short_max": float(short["m_max"]) if short is not eager else 0.0,
            "eager_max": float(below[-1]["m_max"])}


def add_postal_paths(kinds: dict, fits: dict, channels: dict, scalars: dict, notes: list,
                     warnings: list) -> None:
    """Add the path channels and ``postal.*`` scalars of the measured channels (``kinds``:
    measured channel -> shm/tcp/rdma) to ``channels`` and ``scalars``, in place; record the
    mapping in ``fits["postal_paths"]``."""
    record: dict = {}

    def put(name, path, value, what):
        if value < 0:
            warnings.append(f"{path}: fitted {what} {value:.3g} is negative; stored as 0")
            value = 0.0
        scalars.setdefault(f"postal.{name}", {})[path] = float(value)

    for ch, kind in sorted(kinds.items()):
        path = PATH_OF_KIND.get(kind)
        fit = fits.get("postal", {}).get(ch)
        if path is None or not fit or not fit.get("segments") or path in record:
            continue
        proto = protocols_from_fit(fit)
        desc = ("CPU to CPU on one node, measured on channel '%s' (sockets not controlled)" % ch
                if path == "cpu_on_node" else f"CPU to CPU through the network, measured on channel '{ch}'")
        channels[path] = {"path": True, "description": desc}
        for p in ("short", "eager", "rend"):
            put(f"alpha_{p}", path, proto[p][0], f"alpha ({p})")
            put(f"beta_{p}", path, proto[p][1], f"beta ({p})")
        put("short_max", path, proto["short_max"], "short_max")
        put("eager_max", path, proto["eager_max"], "eager_max")
        record[path] = {"channel": ch, "short_max": proto["short_max"], "eager_max": proto["eager_max"]}
        rate = fits.get("max_rate", {}).get(ch, {}).get("R_N_Bps")
        if rate and path == "cpu_off_node":
            put("R_N", path, rate, "R_N")
            record[path]["R_N_pairs"] = fits["max_rate"][ch].get("pairs")
    cuda = fits.get("cuda") or {}
    for key, path in _MEMCPY.items():
        fit = cuda.get(key)
        if not fit or not fit.get("segments"):
            continue
        last = fit["segments"][-1]
        channels[path] = {"path": True, "description": f"cudaMemcpyAsync {key} (socket not controlled)"}
        put("memcpy_alpha", path, fit["segments"][0]["alpha"], "memcpy alpha")
        put("memcpy_beta", path, last["beta"], "memcpy beta")
        record[path] = {"cuda": key}
    if record:
        fits["postal_paths"] = record
        notes.append("postal paths (stdlib/postal): " + "; ".join(
            f"{p} from {r.get('channel') or r.get('cuda')}" for p, r in record.items())
            + ". Protocol thresholds are the postal fit's breakpoints. cpu_on_node: the ranks' sockets are "
              "not controlled. cpu_off_node on a single host is the network stack over loopback. R_N is the "
              "largest aggregate rate the max-rate benchmark saw (a lower bound with one pair). No GPU-to-GPU "
              "path is measured.")
