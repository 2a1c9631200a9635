"""Reads done once per page request (``common/reads.py``)."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from handoff_support import make_source, record_of, target_of

from common.reads import reads_once
from handoff import operations, store

pytestmark = pytest.mark.django_db


def test_the_successor_page_reads_each_row_once():
    """The host's page and the handoff's parts of it (the follower's baseline, the panel, the
    lineage links, the meter) ask for the same session, redirect, main state, lineage and
    usage; one render reads each once."""
    source = make_source()
    successor = target_of(record_of(operations.run_attempt(source.pk, manual=True)))
    client = Client()
    client.force_login(source.owner)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/s/{successor.pk}/?followed=1")
    assert response.status_code == 200
    [(sql, times)] = Counter(q["sql"] for q in captured.captured_queries).most_common(1)
    assert times == 1, sql


def test_outside_a_page_request_every_read_reads_what_is_stored_now():
    source = make_source()
    assert store.redirect_of(source.pk) is None
    target = target_of(record_of(operations.run_attempt(source.pk, manual=True)))
    redirect = store.redirect_of(source.pk)
    assert redirect is not None and redirect.destination_id == target.pk


def test_inside_a_block_a_read_runs_once_per_session():
    source, other = make_source(), make_source()
    with reads_once(), CaptureQueriesContext(connection) as captured:
        for session_id in (source.pk, str(source.pk), other.pk, source.pk):
            store.find_main_state(session_id)
    assert len(captured) == 2
