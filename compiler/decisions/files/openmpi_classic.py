"""Open MPI's classic ``coll/tuned`` dynamic rules file, for any number of collectives.

What it does: :func:`write` turns Open MPI rules (:class:`tlop.decisions.rules.Rule`) into the
text Open MPI 5.0 reads with ``OMPI_MCA_coll_tuned_use_dynamic_rules=1
OMPI_MCA_coll_tuned_dynamic_rules_filename=FILE`` (``ompi_coll_tuned_read_rules_config_file``,
``ompi/mca/coll/tuned/coll_tuned_dynamic_file.c``, v5.0.10 l. 70-306): the number of
collectives; per collective its ``COLLTYPE_T`` id (``coll_base_functions.h`` l. 44-68), the
number of communicator sizes, and per size the number of message sizes and one line per message
size — ``size algorithm faninout segsize [max_requests]``.  Numbers are read with ``%li`` and
anything else up to a ``#`` is skipped to the end of the line
(``ompi_coll_base_file_getnext_long``, ``coll_base_util.c`` l. 378-401), so the file carries
``#`` comments: the header lines the caller gives (tool, mapping, profile) and, per rule, the
algorithm's name and predicted cost.

The library's rules, which the writer keeps:

* The first message size of every communicator size must be 0, or Open MPI drops the *whole*
  file and runs its fixed decisions silently (l. 248-253: the error goes to ``OPAL_OUTPUT``,
  which release builds compile out).  Each P's first rule is written with size 0, whatever its
  ``m_from``: it covers the smaller sizes too.
* Lookup (``coll_tuned_dynamic_rules.c`` l. 289-391): the communicator rule is the last whose
  size is ≤ the communicator's — the nearest smaller tuned P — and the first one for smaller
  communicators; the message rule the last whose size is ≤ the call's compared size
  (:func:`tlop.decisions.library_size.compared_size`, ``kind="rules"``).  So a communicator
  between two tuned sizes runs the smaller one's rules.  With ``default_below=True`` (the default)
  a communicator-size-1 entry with algorithm 0 is written first: algorithm 0 sends the lookup
  back to the fixed decisions (``coll_tuned_decision_dynamic.c``: ``if (alg) … else
  *_dec_fixed``), so communicators smaller than the smallest tuned P keep Open MPI's default.
  ``Rule(algorithm=None)`` is written as algorithm 0 the same way.
* Algorithm ids are not checked when the file is read; an id beyond the collective's table makes
  ``*_intra_do_this`` return ``MPI_ERR_ARG`` from the collective call.  The writer writes only the
  ids of the rules' :class:`LibraryAlgorithm` — ones the caller priced.
* The fan-in/out field reaches only the chain broadcast and chain reduce (:data:`FANINOUT`);
  the k-nomial broadcast's radix is the MCA variable ``coll_tuned_bcast_algorithm_knomial_radix``
  (default 4), so a rule for another radix is refused unless ``knomial_radix`` says the runs set
  it.  The rule's ``params["k"]`` is written where Open MPI reads it, 0 elsewhere; ``seg`` is the
  segment size in bytes (0: unsegmented).
* ``max_requests`` (a rule's ``params["reqs"]``) needs the ``rule-file-version-2`` first line,
  which Open MPI reads from v5.0.7 on (older 5.0 releases read the version text as numbers and
  reject the file); the line is written only when some rule has ``reqs``.

What it does not do: write the other collectives (they keep Open MPI's fixed decisions — the
classic file needs no entry for them), check that an algorithm suits the operation (commutative
or not), or choose.
"""

from __future__ import annotations

from tlop.decisions.library_size import compared_size
from tlop.decisions.openmpi_defaults import NAMES
from tlop.decisions.rules import table

__all__ = ["write", "COLLECTIVE_IDS"]

#: ``COLLTYPE_T`` (ompi/mca/coll/base/coll_base_functions.h l. 44-68, v5.0.10)
COLLECTIVE_IDS = {"allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4, "alltoallw": 5,
                  "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9, "gatherv": 10, "reduce": 11,
                  "reduce_scatter": 12, "reduce_scatter_block": 13, "scan": 14, "scatter": 15, "scatterv": 16}


#: the algorithms whose fan-in/out the rules file sets (``*_intra_do_this`` passes ``faninout`` to
#: them: ``ompi_coll_base_bcast_intra_chain``, ``ompi_coll_base_reduce_intra_chain``); the others
#: ignore it, and the file carries 0 for them
FANINOUT = {("bcast", 2), ("reduce", 2)}
#: the k-nomial broadcast takes its radix from the MCA variable coll_tuned_bcast_algorithm_knomial_radix
#: (default 4, coll_tuned_bcast_decision.c l. 34, 124, 161-162), never from the file
KNOMIAL = ("bcast", 7)


def fan_in_out(coll: str, rule, faninout=FANINOUT, knomial_radix: int = 4) -> int:
    """The fan-in/out field of ``rule``: its ``k`` where Open MPI reads it, else 0; ValueError for
    a k-nomial broadcast whose radix is not the one Open MPI will use (``knomial_radix``)."""
    a = rule.algorithm
    k = rule.params.get("k", (getattr(a, "fixed", None) or {}).get("k", 0))
    if (coll, int(a.id)) == KNOMIAL:
        if k and int(k) != knomial_radix:
            raise ValueError(f"Open MPI's k-nomial broadcast takes its radix from the MCA variable "
                             f"coll_tuned_bcast_algorithm_knomial_radix ({knomial_radix} here), not from a rules file: "
                             f"a rule for radix {k} cannot be written (pass knomial_radix={k} and set the variable)")
        return 0
    return int(k) if (coll, int(a.id)) in faninout else 0


def _comment(text: str) -> str:
    return " ".join(str(text).split())


def _cost(rule) -> str:
    if rule.cost is None:
        return ""
    from tlop.runtime.units import format_time

    return f", predicted {format_time(rule.cost)}"


def write(rules, header=(), default_below: bool = True, knomial_radix: int = 4) -> str:
    """The text of an Open MPI classic rules file carrying ``rules`` (Open MPI algorithms, any
    collectives), with ``header`` lines as leading comments.  ``knomial_radix``: the value of
    ``coll_tuned_bcast_algorithm_knomial_radix`` the runs will have (Open MPI's default, 4)."""
    per = table(rules, "openmpi")
    if not per:
        raise ValueError("no rules: an Open MPI rules file needs at least one")
    reqs = any("reqs" in r.params for by_p in per.values() for rs in by_p.values() for r in rs)
    lines = ["rule-file-version-2"] if reqs else []
    lines += [f"# {_comment(h)}" for h in header]
    lines.append("# written by tlop (tlop.decisions.files.openmpi_classic); per line: message size "
                 "(compared as Open MPI's rules do), algorithm id, fan-in/out, segment size")
    lines.append(f"{len(per):<12} # number of collectives")
    for coll, by_p in per.items():
        if coll not in COLLECTIVE_IDS:
            raise ValueError(f"Open MPI's coll/tuned has no collective {coll!r}")
        smallest = min(by_p)
        extra = default_below and smallest > 1
        lines.append(f"{COLLECTIVE_IDS[coll]:<12} # collective: {coll}")
        lines.append(f"{len(by_p) + extra:<12} # number of communicator sizes")
        if extra:
            lines.append(f"{1:<12} # communicator size: below {smallest} ranks, Open MPI's fixed decision")
            lines.append(f"{1:<12} # number of message sizes")
            lines.append("0 0 0 0" + (" 0" if reqs else "") + "    # algorithm 0: the fixed decision")
        for P, rs in by_p.items():
            lines.append(f"{P:<12} # communicator size")
            lines.append(f"{len(rs):<12} # number of message sizes")
            for i, r in enumerate(rs):
                size = 0 if i == 0 else compared_size("openmpi", coll, P, r.m_from, kind="rules")
                if r.algorithm is None:
                    alg, name, fan, seg = 0, "Open MPI's fixed decision", 0, 0
                else:
                    alg, name = int(r.algorithm.id), r.algorithm.name
                    if alg not in NAMES[coll]:
                        raise ValueError(f"Open MPI 5.0 has no {coll} algorithm {alg} ({name}); an unknown id makes "
                                         f"the collective fail with MPI_ERR_ARG")
                    fan = fan_in_out(coll, r, knomial_radix=knomial_radix)
                    seg = int(r.params.get("seg", 0))
                text = f"{size} {alg} {fan} {seg}"
                if reqs:
                    text += f" {int(r.params.get('reqs', 0))}"
                lines.append(f"{text:<28} # from m = {r.m_from} B: {_comment(name)}{_cost(r)}")
    return "\n".join(lines) + "\n"
