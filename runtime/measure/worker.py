"""What every MPI rank of ``tlop measure`` runs.

What it does: :func:`run_worker` finds the topology (which ranks share a node), chooses the
channels this launch can measure (``role``: ``shm`` — ranks on rank 0's node; ``net-forced``
— every rank of a single host whose MPI was started with the network forced, e.g. MPICH
``MPIR_CVAR_NOLOCAL=1``; ``auto`` — shared memory on rank 0's node and, with two or more
nodes, the network between the first two nodes, ranks alternating between them; a role
``ROLE:collK`` measures only the library collectives whose algorithm the launch's environment
forces, :func:`.plan.forced_in_env`, as ``impl = "mpi:<algorithm>"``), plans the
points (:mod:`.plan`), skips those already in the samples file (``--resume``), and runs the
rest one by one: every rank builds the point's group communicator, the group runs the kernel
adaptively (:mod:`.engine`), and world rank 0 appends the record to the samples file
(:mod:`.store`) before starting the next point.  A watchdog ends a rank stuck on one point.
Rank 0 reports progress as ``@@tlop {json}`` lines on stdout when a parent launcher reads them
(``events=True``), or as plain lines on stderr otherwise (dropped, not fatal, once stderr is
gone: ``mpiexec … tlop measure 2>&1 | head`` measures to the end).  A relaunched rank ends
itself when its launcher process ends (:func:`watch_launcher`); a failure of rank 0 before the
first point (the samples file held by another writer, say) is broadcast, so every rank stops
with the same message instead of waiting for it.

What it does not do: relaunch itself (:mod:`.launch`) or build the profile (:mod:`.assemble`,
called by the caller on rank 0 afterwards).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import sys
import time

import numpy as np

from tlop.runtime.measure import bench_coll, bench_gamma, bench_maxrate, bench_plogp, bench_taulop
from tlop.runtime.measure.binding import BINDING_ENV
from tlop.runtime.measure.engine import Watchdog, adaptive
from tlop.runtime.measure.plan import Point, Settings, forced_in_env, plan_channel, plan_collectives
from tlop.runtime.measure.stats import summarize
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.store import SampleStore, done_keys, point_record, read_records

__all__ = ["run_worker", "start_job", "watch_launcher", "process_start", "LAUNCHER_ENV", "EVENT_PREFIX", "ENV_PREFIXES"]

EVENT_PREFIX = "@@tlop "
#: environment variables recorded in the metadata (they change what MPI does)
ENV_PREFIXES = ("MPIR_CVAR_", "MPICH_", "UCX_", "FI_", "OMPI_MCA_", "I_MPI_", "HYDRA_", "PMI_SIZE",
                "SLURM_JOB_NUM_NODES", "SLURM_NTASKS", "SLURM_CPU_BIND", "SLURM_DISTRIBUTION",
                "OMP_NUM_THREADS", "TLOP_MEASURE_")


def _emit(events: bool, **ev) -> None:
    if events:
        sys.stdout.write(EVENT_PREFIX + json.dumps(ev) + "\n")
        sys.stdout.flush()
    elif ev.get("event") in ("start", "plan", "skip", "channel") and not _progress_gone:
        msg = {"plan": lambda: f"{ev['todo']} of {ev['total']} points to measure",
               "start": lambda: f"[{ev['i']}/{ev['todo']}] {ev['label']}",
               "skip": lambda: f"skipped {ev['label']}: {ev['reason']}",
               "channel": lambda: f"channel {ev['channel']} ({ev['transmission']}): {ev['ranks']} ranks"}[ev["event"]]()
        try:
            sys.stderr.write(f"tlop measure: {msg}\n")
            sys.stderr.flush()
        except OSError:             # whoever read the progress went away: measure on without it
            _drop_progress()


_progress_gone = False


def _drop_progress() -> None:
    global _progress_gone
    _progress_gone = True
    try:
        sys.stderr = open(os.devnull, "w")   # noqa: SIM115  (later writes, and the exit flush)
    except OSError:
        pass


#: set by the launcher (:mod:`.launch`) to "PID:START": the ranks end when that process ends
LAUNCHER_ENV = "TLOP_MEASURE_LAUNCHER_PID"


def process_start(pid: int):
    """The start time of process ``pid`` (clock ticks since boot, from /proc), "" where /proc
    does not say, or None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        return stat[stat.rindex(")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass
    return ""


def watch_launcher(environ=None) -> bool:
    """End this rank (exit status 4) as soon as the launcher that relaunched it has gone —
    killed with SIGKILL, say, when nothing else could stop the job — so no rank outlives it and
    a ``--resume`` never measures beside orphans.  A daemon thread waits on a pidfd of the
    launcher (no polling), or checks it every half second where pidfds do not exist; the
    launcher's start time guards against its PID being reused.  Returns whether it watches."""
    import threading

    spec = (os.environ if environ is None else environ).get(LAUNCHER_ENV, "")
    pid_text, _, start = spec.partition(":")
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)

    def alive() -> bool:
        now = process_start(pid)
        return now is not None and (not start or not now or now == start)

    def gone() -> None:
        try:
            sys.stderr.write(f"tlop measure: rank stopping: its launcher (process {pid}) has gone\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(4)

    fd = None
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if not alive():                     # gone already (checked after opening: no PID reuse)
        gone()

    def wait() -> None:
        if fd is not None:
            import select
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while not poller.poll():
                pass
        else:
            while alive():
                time.sleep(0.5)
        gone()

    threading.Thread(target=wait, name="tlop-launcher-watch", daemon=True).start()
    return True


def start_job(argv, version: int, who: str):
    """What every rank of a job launched by tlop does first (``schedrun``, ``tunecheck``): read
    the job file ``argv[0]`` (refusing another version), watch the launcher, and agree on the
    keys already measured.  Returns ``(job, comm, rank, rule, store, done)``: ``store`` the
    sample store on rank 0 (None elsewhere), ``done`` the finished keys on every rank."""
    import json

    from mpi4py import MPI

    from tlop.runtime.measure.stats import Rule
    from tlop.runtime.measure.store import SampleStore, done_keys, read_records

    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    if job.get("version") != version:
        raise SystemExit(f"{who}: {argv[0]}: not a version-{version} job")
    watch_launcher()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    store = SampleStore(job["samples"]) if rank == 0 else None
    done = done_keys(read_records(job["samples"])) if rank == 0 else None
    return job, comm, rank, Rule(**job["rule"]), store, comm.bcast(done, root=0)


def _timer_metadata(MPI) -> dict:
    wt = MPI.Wtime
    deltas = []
    for _ in range(2000):
        a = wt()
        b = wt()
        while b == a:
            b = wt()
        deltas.append(b - a)
    n = 20000
    t0 = wt()
    for _ in range(n):
        wt()
    call = (wt() - t0) / n
    noop = (lambda: None)
    t0 = wt()
    for _ in range(n):
        noop()
    empty = (wt() - t0) / n
    comm = MPI.COMM_WORLD
    t0 = wt()
    for _ in range(n):
        comm.Get_rank()
    mpi_call = (wt() - t0) / n
    return {"wtick_s": MPI.Wtick(), "resolution_measured_s": float(np.min(deltas)),
            "wtime_call_s": call, "empty_python_call_s": empty, "empty_mpi_call_s": mpi_call,
            "clock": "MPI_Wtime", "wtime_is_global": bool(comm.Get_attr(MPI.WTIME_IS_GLOBAL) or False)}


def _launcher() -> str:
    if os.environ.get("TLOP_MEASURE_LAUNCHER"):
        return os.environ["TLOP_MEASURE_LAUNCHER"]
    if os.environ.get("SLURM_JOB_ID") and os.environ.get("SLURM_PROCID"):
        return "srun (SLURM job %s)" % os.environ["SLURM_JOB_ID"]
    if os.environ.get("OMPI_COMM_WORLD_SIZE"):
        return "mpirun (Open MPI)"
    if os.environ.get("PMI_RANK") or os.environ.get("PMI_SIZE"):
        return "mpiexec (PMI)"
    return "unknown"


def _run_metadata(MPI, comm, role: str, hosts: list, settings: Settings, channels: list) -> dict:
    lib = MPI.Get_library_version().strip()
    first = lib.splitlines()[0] if lib else "unknown"
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = []
    affinities = comm.gather(affinity, root=0)
    import mpi4py
    from importlib.metadata import PackageNotFoundError, version as _v
    try:
        tlop_version = _v("tlop")
    except PackageNotFoundError:
        tlop_version = "unknown"
    per_node: dict = {}
    for h in hosts:
        per_node[h] = per_node.get(h, 0) + 1
    return {
        "kind": "run", "role": role, "channels": channels,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "mpi": {"library": first.split(" Version")[0].split(",")[0].strip() or first,
                "version": first, "library_version_full": lib,
                "standard": "%d.%d" % MPI.Get_version(), "vendor": list(map(str, MPI.get_vendor()))},
        "launcher": _launcher(), "np": comm.Get_size(),
        "placement": {"hosts_by_rank": hosts, "ranks_per_node": per_node, "nodes": len(per_node),
                      "cpu_affinity_by_rank": affinities,
                      # what the launcher was asked (set by tlop's relaunch; a job started by hand
                      # is placed as its own launcher said, which the affinities show)
                      "binding": os.environ.get(BINDING_ENV) or "as the job's own launcher placed the ranks",
                      "cpus": _cpus()},
        "load": _loadavg(),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)},
        "timer": _timer_metadata(MPI),
        "software": {"python": platform.python_version(), "mpi4py": mpi4py.__version__,
                     "numpy": np.__version__, "tlop": tlop_version,
                     "platform": platform.platform(), "processor": platform.processor()},
        "settings": settings.as_dict(),
    }


def _cpus() -> int:
    from tlop.runtime.measure.binding import usable_cores

    return os.cpu_count() or usable_cores()


def _loadavg() -> list:
    """The 1-, 5- and 15-minute load averages at the start of this launch ([] where unknown)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return []


class _Groups:
    """Communicators for subsets of world ranks (collective over world: every rank asks for the
    same groups in the same order)."""

    def __init__(self, world):
        self.world = world
        self.cache: dict = {}

    def get(self, members: tuple):
        if members not in self.cache:
            me = self.world.Get_rank()
            color = 0 if me in members else 1
            key = members.index(me) if me in members else me
            sub = self.world.Split(color, key)
            self.cache[members] = sub if me in members else None
            if me not in members:
                sub.Free()
        return self.cache[members]


def _channels(role: str, hosts: list, net_kind: str, wanted=("shm", "net")) -> list:
    """(channel name, transmission, ordered member ranks, tau_max, pairs) per channel."""
    nodes: dict = {}
    for r, h in enumerate(hosts):
        nodes.setdefault(h, []).append(r)
    order = list(nodes.values())
    n0 = order[0]
    out = []
    if role == "net-forced":
        if "net" not in wanted:
            return out
        ranks = tuple(range(len(hosts)))
        if len(ranks) >= 2:
            out.append((net_kind, net_kind, ranks, len(ranks), len(ranks) // 2))
        return out
    if len(n0) >= 2 and "shm" in wanted:
        out.append(("shm", "shm", tuple(n0), len(n0), len(n0) // 2))
    if role == "auto" and len(order) >= 2 and "net" in wanted:
        n1 = order[1]
        k = min(len(n0), len(n1))
        alt = tuple(x for pair in zip(n0[:k], n1[:k]) for x in pair)
        out.append((net_kind, net_kind, alt, k, k))
    return out


def _members(point: Point, ranks: tuple, transmission: str, alternating: bool) -> tuple:
    p = point.p
    b = point.bench
    if b == "ring":
        tau = int(p["tau"])
        # on the network with ranks alternating between two nodes, τ transfers enter each node
        return ranks[: 2 * tau] if alternating else ranks[:tau]
    if b == "maxrate":
        k = int(p["pairs"])
        if alternating:   # senders on node 0, receivers on node 1
            return tuple(ranks[0::2][:k]) + tuple(ranks[1::2][:k])
        return ranks[: 2 * k]
    if b == "coll":
        return ranks[: int(p["P"])]
    return ranks[:2]


def run_worker(out_path, role: str, settings: Settings, resume: bool, events: bool,
               net_kind: str = "tcp", fresh: bool = False, channels=("shm", "net")) -> dict:
    """Measure on every rank; returns a summary dict on world rank 0 (None elsewhere)."""
    from mpi4py import MPI

    watch_launcher()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    wtime = MPI.Wtime
    hosts = world.allgather(MPI.Get_processor_name())
    wanted = channels
    # "ROLE:collK" is a launch that only times the library collectives its environment forces
    base_role, coll_only = role.split(":", 1)[0], ":" in role
    forced_info = forced_in_env(os.environ)
    forced = {c: v["algorithm"] for c, v in forced_info.items()}
    channels = _channels(base_role, hosts, net_kind, wanted)
    meta = _run_metadata(MPI, world, role, hosts, settings,
                         [{"channel": c, "transmission": t, "ranks": list(r)} for c, t, r, _, _ in channels])
    meta["forced_collectives"] = forced_info

    store = None
    done: set = set()
    medians: dict = {}
    failure = None
    if rank == 0:
        # a failure here (the samples file is held by another writer, or cannot be written) is
        # every rank's: told to all of them at once, so none waits for a rank 0 that has gone
        try:
            store = SampleStore(out_path, fresh=fresh)
            if resume:
                records = read_records(out_path)
                done = done_keys(records)
                for rec in records:
                    stats = rec.get("stats")
                    if (rec.get("kind") == "point" and rec.get("key") in done and isinstance(stats, dict)
                            and isinstance(stats.get("median"), (int, float))):
                        medians[rec["key"]] = stats["median"]
            store.append(meta)
        except (TlopError, OSError, ValueError) as err:
            failure = err.diagnostics[0].message if isinstance(err, TlopError) else f"{out_path}: {err}"
            if store is not None:
                store.close()
    failure, done = world.bcast((failure, done), root=0)
    if failure:
        raise TlopError(failure)

    plan = []
    for name, kind, ranks, tau_max, pairs in channels:
        pts = [] if coll_only else plan_channel(name, settings, tau_max, pairs)
        pts += plan_collectives(name, settings, len(ranks) if kind == "shm" or base_role == "net-forced" else 0,
                                forced, only_forced=coll_only)
        alternating = base_role == "auto" and kind != "shm"
        plan += [(p, ranks, kind, alternating) for p in pts]
    todo = [x for x in plan if x[0].key not in done]
    if rank == 0:
        for name, kind, ranks, _, _ in channels:
            _emit(events, event="channel", channel=name, transmission=kind, ranks=len(ranks))
        _emit(events, event="plan", total=len(plan), todo=len(todo), keys=[p.key for p, *_ in todo])
    if not channels and rank == 0:
        _emit(events, event="nothing", reason=f"role {role}: no channel with two ranks (np={size}, "
                                              f"{len(set(hosts))} node(s))")

    groups = _Groups(world)
    dog = Watchdog(settings.point_timeout, rank)
    measured = 0
    for i, (point, ranks, kind, alternating) in enumerate(todo, 1):
        members = _members(point, ranks, kind, alternating)
        comm = groups.get(members)
        if rank == 0:
            _emit(events, event="start", i=i, todo=len(todo), key=point.key, label=point.label)
        # every rank enters a point only after rank 0 has announced it, so that a rank that dies
        # at once is reported at this point, not at the previous one or at "the launch"
        world.Barrier()
        dog.arm(point.label)
        _inject_fault(point, rank)
        t_start = time.monotonic()
        result = None
        skip = None
        if comm is not None:
            result, skip = _measure(point, comm, settings, wtime, medians, forced_info)
        dog.disarm()
        world.Barrier()
        if rank == 0:
            if skip:
                store.append({"kind": "skip", "key": point.key, "bench": point.bench,
                              "channel": point.channel, "params": point.p, "reason": skip})
                _emit(events, event="skip", key=point.key, label=point.label, reason=skip)
            else:
                samples, reason, extra = result
                summary = summarize(samples, settings.rule.cl)
                extra = dict(extra or {})
                extra["ranks"] = list(members)
                extra["seconds"] = round(time.monotonic() - t_start, 3)
                store.append(point_record(point, summary, reason, samples, extra))
                medians[point.key] = summary["median"]
                measured += 1
                _emit(events, event="done", i=i, key=point.key, median=summary["median"],
                      n=summary["n"], stop=reason)
    if rank == 0:
        store.close()
        _emit(events, event="finished", measured=measured)
        return {"measured": measured, "planned": len(plan), "keys": {p.key for p, *_ in plan}}
    return None


def _inject_fault(point: Point, rank: int) -> None:
    """Fault injection for the robustness tests: ``TLOP_MEASURE_INJECT_FAULT=crash:BENCH`` makes
    rank 1 die, ``hang:BENCH`` makes it hang, when it reaches the first point of benchmark BENCH."""
    spec = os.environ.get("TLOP_MEASURE_INJECT_FAULT", "")
    if rank != 1 or ":" not in spec:
        return
    what, bench = spec.split(":", 1)
    if point.bench == bench:
        if what == "crash":
            sys.stderr.write(f"injected crash on rank 1 at {point.label}\n")
            sys.stderr.flush()
            os._exit(7)
        if what == "hang":
            while True:
                time.sleep(1)


def _measure(point: Point, comm, settings: Settings, wtime, medians: dict, forced_info=None):
    """Run one point on its group; returns ((samples, reason, extra), None) or (None, skip reason)
    (samples only meaningful on group rank 0)."""
    p, b, rule = point.p, point.bench, settings.rule
    extra: dict = {}
    reduce_max = False
    if b == "o_eager":
        kernel = bench_taulop.pingpong(comm, 0, wtime)
    elif b == "o_rdv":
        kernel = bench_taulop.pingpong(comm, 0, wtime, sync=True)
    elif b == "pingpong":
        kernel = bench_taulop.pingpong(comm, int(p["m"]), wtime)
    elif b == "ring":
        kernel, reduce_max = bench_taulop.ring(comm, int(p["m"]), wtime), True
    elif b == "plogp_os":
        kernel = bench_plogp.send_overhead(comm, int(p["m"]), wtime)
    elif b == "plogp_or":
        # the receiver's delay must outlast the message's arrival (ack one way + message one way,
        # at most one m-byte round trip) and no more: the longer rank 1 spins, the likelier a
        # loaded machine deschedules a rank and the timed Recv waits for the message.  Hence a
        # robust typical round trip — the ping-pong median at this m (measured earlier; only
        # world rank 0 knows it), else the median of a probe — never the maximum of a few trials,
        # which a single slow round trip inflates tenfold (the cause of or(1..16 B) of 300 µs).
        m = int(p["m"])
        half = medians.get(Point("pingpong", point.channel, (("m", m),)).key)
        half = comm.bcast(half if comm.Get_rank() == 0 else None, root=0)
        extra["delay_from"] = "pingpong median"
        if half is None:
            probe = bench_taulop.pingpong(comm, m, wtime)(25)
            half = comm.bcast(float(np.median(probe[5:])) if comm.Get_rank() == 0 else None, root=0)
            extra["delay_from"] = "probe median"
        delay = 4.0 * half + 5e-6                 # two round trips of m bytes, plus slack
        extra["delay_s"] = delay
        extra["rtt_s"] = 2.0 * half
        kernel, reduce_max = bench_plogp.recv_overhead(comm, int(p["m"]), wtime, delay), True
    elif b == "plogp_g":
        extra["burst"] = settings.plogp_g_n
        kernel = bench_plogp.gap(comm, int(p["m"]), wtime, settings.plogp_g_n)
    elif b == "prtt":
        s, n_msgs = int(p["s"]), int(p["n"])
        delay = 0.0
        if int(p["d"]):
            # only world rank 0 (group rank 0) knows the medians: it decides whether to probe
            base = medians.get(Point("prtt", point.channel, (("d", 0), ("n", 1), ("s", s))).key)
            base = comm.bcast(base if comm.Get_rank() == 0 else None, root=0)
            if base is None:
                probe = bench_plogp.prtt(comm, s, wtime, 1, 0.0)(5)
                base = float(np.max(probe)) if comm.Get_rank() == 0 else None
            delay = comm.bcast(base if comm.Get_rank() == 0 else None, root=0)
        extra["delay_s"] = delay
        kernel = bench_plogp.prtt(comm, s, wtime, n_msgs, delay)
    elif b == "gamma":
        extra["datatype"] = "MPI_INT"
        kernel = bench_gamma.reduce_local(comm, int(p["m"]), wtime, p["op"])
    elif b == "maxrate":
        extra["bytes_per_pair"] = settings.maxrate_size * settings.maxrate_msgs
        kernel, reduce_max = bench_maxrate.stream(comm, settings.maxrate_size, settings.maxrate_msgs, wtime), True
    elif b == "coll":
        if p["impl"] == "p2p" and not bench_coll.supported(p["alg"], comm.Get_size()):
            return None, f"{p['alg']} needs P a power of two"
        extra["segment"] = settings.coll_segment
        kernel, reduce_max = bench_coll.collective(comm, p["alg"], p["impl"], int(p["m"]), wtime,
                                                   settings.coll_segment), True
        if p["impl"].startswith("mpi:"):
            info = (forced_info or {}).get(p["alg"], {})
            extra["forced"] = {"variable": info.get("variable"), "value": info.get("value"),
                               "with": info.get("with", {})}
            # a forced algorithm the library cannot run here fails (COLLECTIVE_FALLBACK=error)
            # on every rank of the call: record that as a skip instead of a crash
            from mpi4py import MPI
            try:
                kernel(1)
                ok = 1
            except MPI.Exception as err:
                ok, why = 0, err.Get_error_string().strip().splitlines()[0][:200]
            if not comm.allreduce(ok, op=MPI.MIN):
                return None, (f"the library refused the forced algorithm {p['impl'][4:]} "
                              f"({info.get('variable')}={info.get('value')})"
                              + (f": {why}" if not ok else ""))
    else:
        return None, f"unknown benchmark {b}"
    samples, reason = adaptive(comm, kernel, rule, reduce_max, wtime)
    return (samples, reason, extra), None
