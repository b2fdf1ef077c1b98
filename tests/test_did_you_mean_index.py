"""Issue 14 item 8: "did you mean" looks names up in an index of one-character deletions instead
of comparing with every global; it must suggest exactly what the comparison with every name did."""

from hypothesis import given, settings, strategies as st

from tlop.frontend import elaborate as E

names = st.text(alphabet="abAB_1", min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.sets(names, max_size=30), names)
def test_index_finds_exactly_the_close_names(globals_, query):
    el = E._Elaborator([])
    el.globals = {k: None for k in globals_}
    assert el._near_globals(query) == {k for k in globals_ if E._close(query, k)}
