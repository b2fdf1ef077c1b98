"""Shared test fixtures: the --update-golden flag and small synthetic profiles."""

import os

import pytest

# Z3's limits are wall-clock: on a machine loaded by other processes a proof that takes a second
# could hit them and turn "proved" into "unknown", flipping a result or a golden file.  Tests scale
# every solver limit (tlop.analysis.solver_time); tests of the timeout itself set their own.
os.environ.setdefault("TLOP_SOLVER_TIMEOUT_SCALE", "20")

# Hypothesis fails an example slower than 200 ms by default: a wall-clock assertion that a busy
# machine breaks.  No test may assert speed, so no example has a deadline.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("tlop", deadline=None)
    _hypothesis_settings.load_profile("tlop")
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass


_SESSION: dict = {}


def pytest_sessionfinish(session, exitstatus):
    _SESSION["status"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """End the test process as soon as pytest has printed its summary and torn itself down:
    otherwise it stays alive for many seconds after the summary, freeing every program, profile
    and compiled module the run loaded object by object and joining the JIT's worker threads
    (one still running a native batch whose test is over would keep it alive to the end).
    Only for a ``pytest`` command (not ``pytest.main()`` inside another program), and not with
    ``TLOP_TEST_NORMAL_EXIT=1``."""
    import sys

    main = os.path.basename(sys.argv[0]) in ("pytest", "py.test") or sys.argv[0].endswith(
        os.path.join("pytest", "__main__.py"))
    if "status" not in _SESSION or not main or os.environ.get("TLOP_TEST_NORMAL_EXIT") == "1":
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(_SESSION["status"])


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files from the current output instead of comparing")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")


def check_golden(path, text: str, update: bool) -> None:
    """``text`` equals the golden file ``path`` (which ``--update-golden`` rewrites from it)."""
    if update:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run pytest --update-golden and review it"
    assert text == path.read_text(encoding="utf-8")


@pytest.fixture
def golden(update_golden):
    """``golden(path, text)``: :func:`check_golden` under this run's ``--update-golden``."""
    return lambda path, text: check_golden(path, text, update_golden)


def taulop_profiles() -> list:
    """Names of the bundled profiles that price τ-Lop schedules: tables o and L, and profile
    channels for the platform's shm and net (not, e.g., the postal path profiles summit, lassen)."""
    from tlop.runtime.profile import bundled_profiles, load_profile

    out = []
    for name in bundled_profiles():
        prof = load_profile(name)
        if prof.has_table("o", prof.resolve_channel("shm")) and prof.resolve_channel("shm") \
                and prof.resolve_channel("net") and prof.has_table("L", prof.resolve_channel("net")):
            out.append(name)
    return out


def synthetic_profile(name="synthetic", *, tables=None, scalars=None, channels=None, bind=None):
    """A small valid profile built in memory (format version 1)."""
    from tlop.runtime.profile import profile_from_dict

    return profile_from_dict({
        "tlop_profile": 1,
        "name": name,
        "metadata": {"machine": "synthetic test profile", "source": "tests/conftest.py"},
        "interpolation": {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                          "nonnegative": True, "out_of_grid": "allow"},
        "channels": channels or {"shm": {"transmission": "shm", "description": "test"}},
        "bind": bind or {},
        "tables": tables or {},
        "scalars": scalars or {},
        "fits": {},
    })


#: grid and linear gap g(m) = G0 + G1·m of the pLogP test profile
PLOGP_M = [1.0, 1024.0, 65536.0, 1048576.0, 16777216.0]
PLOGP_G0, PLOGP_G1, PLOGP_L = 2e-6, 1e-9, 5e-6


@pytest.fixture(scope="session")
def plogp_profile():
    g = [PLOGP_G0 + PLOGP_G1 * m for m in PLOGP_M]
    return synthetic_profile("plogp-test", tables={"g": {"*": {"m": PLOGP_M, "values": g}}},
                             scalars={"L": {"*": PLOGP_L}})


def replace_any_value(data, which: int, value):
    """``data`` (nested JSON lists and objects, changed in place) with the value in its
    ``which``-th slot (counted depth-first, modulo their number) replaced by ``value``: the
    mutation of the mangled-file property tests."""
    slots = []

    def walk(node):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            slots.append((node, k))
            walk(v)
    walk(data)
    node, key = slots[which % len(slots)]
    node[key] = value
    return data


#: parametrised tests whose full case sets are long (a real MPI launch per case, or every catalogue
#: schedule priced on a grid): by default every k-th case runs — a fixed sample that covers every
#: collective, since the cases are listed collective by collective — and the others are marked
#: ``slow`` (``pytest -m slow`` runs them; ``-m "slow or not slow"`` runs everything)
SAMPLED = {
    "test_open_mpi_sends_the_messages_of_the_schedule": 3,
    "test_mpich_sends_the_messages_of_the_schedule": 3,
    "test_open_mpi_sends_the_schedules_messages": 3,
    "test_mpich_sends_the_schedules_messages": 3,
    "test_every_schedule_prices_to_a_finite_positive_cost": 3,
    "test_every_schedule_evaluates_in_taulop": 2,
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    seen: dict = {}
    for item in items:
        k = SAMPLED.get(getattr(item, "originalname", ""))
        if k is None:
            continue
        i = seen[item.originalname] = seen.get(item.originalname, -1) + 1
        if i % k:
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config):
    return ("sampled by default (every k-th case; the rest under -m slow): "
            + ", ".join(f"{name} 1/{k}" for name, k in SAMPLED.items()))
