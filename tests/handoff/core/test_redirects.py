"""docs/spec.md, Forwarding and cycles: no self-redirect, no cycle, flat; loaded cycles found."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff.core.redirects import RedirectCycleError, RedirectError, RedirectGraph


def test_unmapped_session_is_its_own_destination():
    assert RedirectGraph().destination("a") == "a"


def test_self_redirect_is_refused():
    graph = RedirectGraph()
    with pytest.raises(RedirectError, match="itself"):
        graph.add("a", "a")
    assert graph.as_dict() == {}


def test_redirect_back_to_the_source_is_refused():
    graph = RedirectGraph({"b": "a"})
    with pytest.raises(RedirectError, match="cycle"):
        graph.add("a", "b")
    assert graph.as_dict() == {"b": "a"}


def test_chain_is_flattened_to_the_final_destination():
    graph = RedirectGraph()
    graph.add("a", "b")
    changed = graph.add("b", "c")
    assert graph.as_dict() == {"a": "c", "b": "c"}
    assert changed == {"b": "c", "a": "c"}


def test_new_entry_points_at_the_destinations_end():
    graph = RedirectGraph({"b": "c"})
    graph.add("a", "b")
    assert graph.as_dict()["a"] == "c"


def test_a_source_redirects_once():
    graph = RedirectGraph({"a": "b"})
    with pytest.raises(RedirectError, match="already redirects"):
        graph.add("a", "c")


def test_cycle_loaded_from_storage_is_detected_not_looped_on():
    graph = RedirectGraph({"a": "b", "b": "c", "c": "a"})
    with pytest.raises(RedirectCycleError, match="a -> b -> c -> a"):
        graph.destination("a")


def test_remove_stops_forwarding():
    graph = RedirectGraph({"a": "b"})
    graph.remove("a")
    assert graph.destination("a") == "a"


ids = st.sampled_from("abcdef")
operations = st.lists(st.tuples(st.sampled_from(["add", "remove"]), ids, ids), max_size=40)


@given(operations)
def test_no_sequence_of_operations_leaves_a_cycle_or_an_unflattened_entry(ops):
    graph = RedirectGraph()
    for op, src, dst in ops:
        if op == "remove":
            graph.remove(src)
            continue
        with contextlib.suppress(RedirectError):
            graph.add(src, dst)
        mapping = graph.as_dict()
        for source, destination in mapping.items():
            assert source != destination
            assert destination not in mapping  # flat: every entry points at its end
            assert graph.destination(source) == destination
