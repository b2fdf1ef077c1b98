"""tlop measure prints its warnings, and a non-positive fitted L is one of them (never silent)."""

from tlop.runtime.measure.assemble import assemble
from tlop.runtime.measure.cli import print_warnings
from tlop.runtime.measure.plan import plan_channel, quick_settings
from tlop.runtime.profile import profile_from_dict

from test_measure_store import _synthetic_records


def test_a_clamped_negative_L_is_a_printed_warning(capsys):
    st = quick_settings()
    d = assemble(_synthetic_records(st), "synthetic",
                 planned={p.key for c in ("shm", "tcp") for p in plan_channel(c, st, 2, 1)})
    prof = profile_from_dict(d)
    warnings = prof.metadata["warnings"]
    # the synthetic TCP round trips make the fitted LogGP L negative: clamped, and said so
    assert any(w.startswith("tcp: LogGP L = -") and w.endswith("is not positive; clamped to 1e-09 s")
               for w in warnings)
    print_warnings(prof)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"tlop measure: warning: {w}" for w in warnings]
