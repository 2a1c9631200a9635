"""Lineage (issue 18 §3): predecessor and successor read from the records, on every surface."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from handoff_support import chain_of, make_source, make_user

from handoff import lineage, operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.models import Session
from host.signals import session_links

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def three_hops(django_capture_on_commit_callbacks: Callable[..., Any]) -> list[Session]:
    """A → B → C → D: a source handed off three times."""
    return chain_of(3, settle=lambda: django_capture_on_commit_callbacks(execute=True))


def test_each_session_names_its_neighbours(three_hops: list[Session]) -> None:
    a, b, c, d = (s.pk for s in three_hops)
    assert [lineage.predecessor(s) for s in (a, b, c, d)] == [None, a, b, c]
    assert [lineage.successor(s) for s in (a, b, c, d)] == [b, c, d, None]


def test_the_chain_is_the_same_from_every_hop(three_hops: list[Session]) -> None:
    expected = [(s.pk, t.pk) for s, t in zip(three_hops, three_hops[1:], strict=False)]
    for session in three_hops:
        assert [(r.source_id, r.target_id) for r in lineage.chain(session.pk)] == expected


def test_the_redirect_map_is_flat_but_the_successor_is_the_next_hop(
    three_hops: list[Session],
) -> None:
    a, b, _, d = three_hops
    assert operations.status(a.pk)["redirect"] == str(d.pk)  # forwarding goes to the end
    assert operations.status(a.pk)["successor"] == str(b.pk)


def test_status_of_a_successor_says_where_it_came_from(three_hops: list[Session]) -> None:
    a, b, c, _ = three_hops
    report = operations.status(b.pk)
    assert (report["predecessor"], report["successor"]) == (str(a.pk), str(c.pk))
    origin = report["origin"]
    assert origin is not None and origin["source"] == str(a.pk)
    assert origin["target"] == str(b.pk) and origin["reason"] == "manual"
    assert origin["inheritance"][0]["setting"] == "cwd"


def test_a_session_outside_any_chain_has_no_lineage() -> None:
    report = operations.status(make_source().pk)
    assert (report["predecessor"], report["successor"], report["origin"]) == (None, None, None)


def test_disable_stops_forwarding_but_keeps_the_history(three_hops: list[Session]) -> None:
    a, b, *_ = three_hops
    operations.disable(a.pk)
    report = operations.status(a.pk)
    assert report["redirect"] is None
    assert report["successor"] == str(b.pk)


def test_a_failed_attempt_is_no_hop() -> None:
    source = make_source()
    HandoffRecord.objects.create(
        source=source, phase=Phase.FAILED, reason="manual", source_revision=1, error="boom"
    )
    assert lineage.chain(source.pk) == [] and lineage.successor(source.pk) is None


def test_the_hosts_hook_answers_who_was_handed_off_to_whom(three_hops: list[Session]) -> None:
    a, b, c, d = three_hops
    other = make_source(make_user("bob"))
    answers = session_links.send(sender=Session, session_ids=[a.pk, c.pk, d.pk, other.pk])
    assert [answer for _receiver, answer in answers] == [{a.pk: b.pk, c.pk: d.pk}]


def test_the_api_detail_names_predecessor_and_successor(
    three_hops: list[Session], client: Any
) -> None:
    a, b, c, _ = three_hops
    client.force_login(b.owner)
    detail = client.get(f"/api/sessions/{b.pk}").json()
    assert (detail["predecessor"], detail["successor"]) == (str(a.pk), str(c.pk))
    first = client.get(f"/api/sessions/{a.pk}").json()
    assert (first["predecessor"], first["successor"]) == (None, str(b.pk))
