"""No message is lost when posts to a handed-off source race its successor's answers.

Real PostgreSQL only (row locks and deadlock detection are the database's): threads with their
own connections post to the source while the successor's agent answers each relayed input in
the posting thread (the immediate task backend runs the turn right after the commit). Every
post must be answered without an error, stored once in the source, relayed once, and answered
once by the successor, and no turn may be reported as stopped without finishing.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connections
from handoff_support import make_source

from handoff import operations
from handoff.models import Redirect
from host.intake import post_message
from host.models import Activity, Message, Role, Session, SessionStatus, SourceKind

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

THREADS = 4
"""Posting threads; with the test's own connection they stay within the pool (5 by default)."""
POSTS = 10
"""Posts per thread."""


def test_concurrent_posts_to_a_handed_off_source_are_each_relayed_and_answered_once(
    immediate_tasks: None,
):
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    successor = Session.objects.get(pk=Redirect.objects.get(source=source).destination_id)
    answered_before = Message.objects.filter(session=successor, role=Role.ASSISTANT).count()
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def poster(index: int) -> None:
        try:
            barrier.wait()
            for n in range(POSTS):
                post_message(source, content=f"post {index}-{n}", client_id=f"tab-{index}:{n}")
        except BaseException as exc:  # noqa: BLE001 (every failure is the test's finding)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=poster, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    sent = {f"post {i}-{n}" for i in range(THREADS) for n in range(POSTS)}
    originals = Message.objects.filter(session=source, client_id__startswith="tab-")
    assert sorted(originals.values_list("content", flat=True)) == sorted(sent)
    relayed = Message.objects.filter(session=successor, source_kind=SourceKind.RELAY)
    assert sorted(relayed.values_list("content", flat=True)) == sorted(sent)
    answers = Message.objects.filter(session=successor, role=Role.ASSISTANT)
    assert answers.count() - answered_before == len(sent)
    notices = Message.objects.filter(session=successor, role=Role.SYSTEM)
    assert not notices.filter(content__contains="stopped without finishing").exists()
    assert not notices.filter(content__contains="could not answer").exists()
    successor.refresh_from_db()
    assert successor.status == SessionStatus.IDLE
    assert not Activity.objects.filter(session=successor, ended__isnull=True).exists()
