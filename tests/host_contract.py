"""The handoff's contract with any chat host: one set of test functions.

Collected twice: ``tests/handoff/test_host_contract.py`` runs them on the reference host
(``host/``), ``tests/plain_host/test_plain_host_contract.py`` on the plain host in a pytest
process of its own (its settings, its session model, its test database). Each gives the
``chat_host`` fixture: a ``ChatHost`` driving that host through its own code (its sessions,
its input path, its page); the handoff is reached only through its public operations.

Covers the docs/spec.md tables the seam carries: trigger, the transaction, a failure outcome,
forwarding, inheritance, review (the panel's switch), ownership (``HANDOFF_SESSION_MODEL`` and
``SessionController.owned_by``), and the follower events a page of the host gets (docs/spec.md,
Follower rules: the handoff's ``FOLLOWER_SOURCES`` entry beside the host's own, read as the page
reads them: its baseline, the snapshot, the socket's replay).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from follower.consumers import FollowConsumer
from follower.events import Frame, events_after
from handoff import export, operations, services
from handoff.attempt import Attempt, fault_hook
from handoff.core.naming import SUFFIX
from handoff.exceptions import SessionNotFound
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.services import HostSession
from handoff.session_model import get_session_model

# Past every host's trigger (the reference host's 200 000-token window and the plain host's
# 32 000 alike), and far below it.
HIGH_TOKENS = 150_000
LOW_TOKENS = 1_000


class ChatHost(Protocol):
    """What a contract test asks of a host (each host's test module implements it)."""

    def user(self, name: str) -> Any:
        """Return a user called ``name``."""

    def conversation(self, owner: Any, *, tokens: int) -> Any:
        """Return an idle main of ``owner`` with five answered turns, the last one's prompt
        ``tokens`` long, read now."""

    def post(self, session: Any, text: str) -> None:
        """Post ``text`` to the session through the host's own input path."""

    def log(self, session: Any) -> list[tuple[str, str]]:
        """Return the session's log as ``(role, content)``, oldest first."""

    def page_path(self, session: Any) -> str:
        """Return the path of the host's page of the session."""

    def page(self, client: Client, session: Any) -> str:
        """Return the host's page of the session as its owner sees it (HTML)."""


@pytest.fixture
def fault_at() -> Iterator[Callable[[str], None]]:
    """Return ``inject(point)``: the transaction fails at ``point`` (until teardown)."""
    connected: list[Callable[..., None]] = []

    def inject(wanted: str) -> None:
        def receiver(sender: Any, point: str, attempt: Attempt, **kwargs: Any) -> None:
            if point == wanted:
                raise RuntimeError(f"injected fault at {point}")

        fault_hook.connect(receiver, weak=False)
        connected.append(receiver)

    yield inject
    for receiver in connected:
        fault_hook.disconnect(receiver)


@pytest.fixture
def settle(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """Return a context manager that runs the on-commit callbacks of what it wraps."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _handed_off(chat_host: ChatHost, settle: Callable[[], Any]) -> tuple[Any, Any]:
    source = chat_host.conversation(chat_host.user("alice"), tokens=HIGH_TOKENS)
    with settle():
        outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None, outcome.detail
    record = HandoffRecord.objects.get(pk=outcome.record.pk)
    return _read(source.pk), _read(record.target_id)


def _read(session_id: Any) -> HostSession:
    """The session read now through the host's session controller."""
    controller = services.session_controller()
    assert controller is not None
    session = controller.get(str(session_id))
    assert session is not None, session_id
    return session


@pytest.mark.django_db
def test_the_handoff_tables_point_at_the_hosts_session_model(chat_host: ChatHost) -> None:
    model = get_session_model()
    for field in ("source", "target"):
        assert HandoffRecord._meta.get_field(field).related_model is model
    assert MainState._meta.get_field("session").related_model is model
    assert Redirect._meta.get_field("destination").related_model is model


@pytest.mark.django_db
def test_trigger_hands_off_only_past_the_threshold(
    chat_host: ChatHost, settle: Callable[[], Any]
) -> None:
    owner = chat_host.user("alice")
    quiet = chat_host.conversation(owner, tokens=LOW_TOKENS)
    loud = chat_host.conversation(owner, tokens=HIGH_TOKENS)
    services.settings_store().save(auto_handoff=True)
    with settle():
        operations.enable(quiet.pk)
        operations.enable(loud.pk)
    assert not Redirect.objects.filter(source_id=quiet.pk).exists()
    (record,) = HandoffRecord.objects.filter(source_id=loud.pk)
    assert (record.phase, record.reason) == ("started", "context-pressure")


@pytest.mark.django_db
def test_transaction_opens_seeds_and_starts_the_successor(
    chat_host: ChatHost, settle: Callable[[], Any]
) -> None:
    source, successor = _handed_off(chat_host, settle)
    record = HandoffRecord.objects.get(source_id=source.pk)
    assert record.phase == "started"
    assert Redirect.objects.get(source_id=source.pk).destination_id == successor.pk
    assert source.title.startswith(f"Refactor the parser{SUFFIX}")
    successor_log = chat_host.log(successor)
    assert "Refactor the parser" in successor_log[0][1]  # the brief opens the successor
    assert successor_log[-1][0] == "assistant"  # and its agent answered it
    assert any("Handed off to" in content for _, content in chat_host.log(source))


@pytest.mark.django_db
def test_seed_flush_fails_discards_the_draft_and_installs_no_redirect(
    chat_host: ChatHost, settle: Callable[[], Any], fault_at: Callable[[str], None]
) -> None:
    source = chat_host.conversation(chat_host.user("alice"), tokens=HIGH_TOKENS)
    before = chat_host.log(source)
    fault_at("flush")
    with settle():
        outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None
    record = HandoffRecord.objects.get(pk=outcome.record.pk)
    assert record.phase == "failed" and "injected fault at flush" in record.error
    assert not Redirect.objects.filter(source_id=source.pk).exists()
    (draft_id,) = set(operations.owned_session_ids(source.owner_id)) - {source.pk}
    assert _read(draft_id).archived  # the unwoken draft is discarded
    assert chat_host.log(source) == before
    assert _read(source.pk).title == "Refactor the parser"


@pytest.mark.django_db
def test_input_to_the_old_conversation_is_forwarded_once(
    chat_host: ChatHost, settle: Callable[[], Any]
) -> None:
    source, successor = _handed_off(chat_host, settle)
    answers_before = [e for e in chat_host.log(source) if e[0] == "assistant"]
    with settle():
        chat_host.post(source, "Please also add a changelog entry.")
    relayed = [c for _, c in chat_host.log(successor) if c == "Please also add a changelog entry."]
    assert len(relayed) == 1
    assert [e for e in chat_host.log(source) if e[0] == "assistant"] == answers_before
    assert chat_host.log(successor)[-1][0] == "assistant"  # the successor answered it


@pytest.mark.django_db
def test_the_successor_inherits_owner_workspace_and_switches(
    chat_host: ChatHost, settle: Callable[[], Any]
) -> None:
    source, successor = _handed_off(chat_host, settle)
    assert (successor.owner_id, successor.cwd) == (source.owner_id, source.cwd)
    state = MainState.objects.get(session_id=successor.pk)
    assert state.inherited_from_id == source.pk
    report = HandoffRecord.objects.get(source_id=source.pk).inheritance
    assert report and all({"setting", "outcome"} <= set(row) for row in report)


@pytest.mark.django_db
def test_ownership_is_the_hosts_to_say(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    source, successor = _handed_off(chat_host, settle)
    other = chat_host.user("bob")
    assert {source.pk, successor.pk} <= set(operations.owned_session_ids(source.owner_id))
    assert not set(operations.owned_session_ids(other.pk))
    assert [r["source"] for r in export.export(source.owner_id)["records"]] == [str(source.pk)]
    assert export.export(other.pk)["records"] == []
    client.force_login(chat_host.user("alice"))
    assert "Handed off to" in chat_host.page(client, source)


# --- follower events -------------------------------------------------------------------------

ROW_EVENTS = ("session.added", "session.updated")
"""The events that carry a session's row (the host's; the handoff's jump rules read them)."""


def _baseline(page: str) -> tuple[int, str]:
    """The follower baseline a page was rendered with: ``(event id, redirect_to or "")``."""
    found = re.search(r'data-event-id="(\d+)"[^>]*data-redirect-to="([^"]*)"', page)
    assert found is not None, "the page carries no follower baseline"
    return int(found[1]), found[2]


def _told(frames: list[Frame], source: Any, successor: Any) -> tuple[list[str], Frame, bool]:
    """What the frames told a page about the handoff of ``source`` to ``successor``: the
    record's phases in order, the one ``redirect.committed`` and whether the successor's last
    row after it is started (not blank)."""
    phases = [
        f["payload"]["phase"]
        for f in frames
        if f["kind"] == "handoff.phase" and f["payload"]["source"] == str(source.pk)
    ]
    (redirect,) = [f for f in frames if f["kind"] == "redirect.committed"]
    later = [f for f in frames if f["id"] > redirect["id"] and f["kind"] in ROW_EVENTS]
    rows = [redirect["payload"]["session"]] + [
        f["payload"]["session"] for f in later if f["payload"]["session"]["id"] == str(successor.pk)
    ]
    return phases, redirect, not rows[-1]["blank"]


def _assert_told(chat_host: ChatHost, frames: list[Frame], source: Any, successor: Any) -> None:
    phases, redirect, started = _told(frames, source, successor)
    assert phases == ["summarizing", "prepared", "committed", "started"]
    payload = redirect["payload"]
    page = chat_host.page_path(successor)
    assert (payload["source"], payload["destination"]) == (str(source.pk), str(successor.pk))
    assert (payload["previous"], payload["url"]) == (None, page)
    # The source's title as its pages knew it: ``source`` was read before the handoff renamed it.
    assert payload["source_title"] == source.title != _read(source.pk).title
    assert payload["session"]["id"] == str(successor.pk)
    assert successor.title in payload["row_html"]  # the host's own row template
    assert f'href="{page}"' in payload["row_html"]
    assert started


@pytest.mark.django_db
def test_a_handoff_is_told_to_the_owners_pages_as_follower_events(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    source = chat_host.conversation(chat_host.user("alice"), tokens=HIGH_TOKENS)
    client.force_login(source.owner)
    rendered, redirect_to = _baseline(chat_host.page(client, source))
    assert redirect_to == ""
    with settle():
        outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None
    successor = _read(HandoffRecord.objects.get(pk=outcome.record.pk).target_id)
    frames = events_after(source.owner_id, rendered)
    assert isinstance(frames, list)
    _assert_told(chat_host, frames, source, successor)
    bob = chat_host.user("bob")
    assert events_after(bob.pk, 0) == []  # nobody else's pages hear of it


@pytest.mark.django_db
def test_a_page_after_the_handoff_reads_the_redirect_from_snapshot_and_baseline(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    source, successor = _handed_off(chat_host, settle)
    client.force_login(chat_host.user("alice"))
    page = chat_host.page(client, source)
    rendered, redirect_to = _baseline(page)
    assert redirect_to == str(successor.pk)  # a page of the forwarding source stays put
    assert f'href="{chat_host.page_path(successor)}"' in page  # and links the successor
    snapshot = client.get(reverse("follower:snapshot")).json()
    assert snapshot["last_event_id"] == rendered
    rows = {row["id"]: row for row in snapshot["sessions"]}
    assert rows[str(source.pk)]["redirect_to"] == str(successor.pk)
    assert rows[str(successor.pk)]["redirect_to"] is None
    assert not rows[str(successor.pk)]["blank"]


@pytest.mark.django_db
def test_the_lineage_page_stands_in_the_hosts_base_template_and_links_its_pages(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    source, successor = _handed_off(chat_host, settle)
    client.force_login(chat_host.user("alice"))
    response = client.get(reverse("handoff_web:lineage", args=[successor.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    _baseline(page)  # the host's base template (it carries the follower's baseline)
    for session in (source, successor):
        assert f'href="{chat_host.page_path(session)}"' in page
    assert "Refactor the parser" in page  # the brief, rendered


async def _replay(user: Any, last_id: int) -> list[Frame]:
    """The frames the follower's socket replays to a page that says hello with ``last_id``."""
    communicator = WebsocketCommunicator(FollowConsumer.as_asgi(), f"/ws/follow/?user={user.pk}")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to({"type": "hello", "last_event_id": last_id})
    frames = []
    while (frame := await communicator.receive_json_from(timeout=5))["type"] == "event":
        frames.append(frame)
    await communicator.disconnect()
    assert frame["type"] == "ready", frame
    return frames


@pytest.mark.django_db(transaction=True)
def test_a_page_rendered_before_the_handoff_gets_it_replayed_by_its_socket(
    chat_host: ChatHost, client: Client
) -> None:
    source = chat_host.conversation(chat_host.user("alice"), tokens=HIGH_TOKENS)
    client.force_login(source.owner)
    rendered, _ = _baseline(chat_host.page(client, source))
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None
    successor = _read(HandoffRecord.objects.get(pk=outcome.record.pk).target_id)
    frames = async_to_sync(_replay)(source.owner, rendered)
    _assert_told(chat_host, frames, source, successor)


@pytest.mark.django_db
def test_the_settings_card_stands_in_the_hosts_base_template(
    chat_host: ChatHost, client: Client
) -> None:
    """The Settings → Conversation Collaboration card (``handoff_settings``) extends the host's
    base template (``HANDOFF_BASE_TEMPLATE``), shows the global settings' fields and lists a
    deferred conversation linked to the host's page of it (``HANDOFF_SESSION_URL``)."""
    alice = chat_host.user("alice")
    waiting = chat_host.conversation(alice, tokens=LOW_TOKENS)
    MainState.objects.create(session_id=waiting.pk, enabled=True, deferred=["activity:turn"])
    client.force_login(alice)
    response = client.get(reverse("handoff_settings:card"))
    assert response.status_code == 200
    page = response.content.decode()
    _baseline(page)
    assert 'name="auto_handoff"' in page and 'name="handoff_ratio"' in page
    assert f'href="{chat_host.page_path(waiting)}"' in page


# --- ids -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_handoff_takes_the_hosts_own_ids_and_refuses_bad_ones(
    chat_host: ChatHost, client: Client
) -> None:
    """Session ids are whatever the session model's primary key is (a UUID, an integer): the
    pages, the operations and ``manage.py handoff`` take them; a malformed or unknown id is a
    404 on a page, ``SessionNotFound`` or a ``CommandError``, and changes nothing."""
    alice = chat_host.user("alice")
    client.force_login(alice)
    main = chat_host.conversation(alice, tokens=LOW_TOKENS)
    gone = chat_host.conversation(alice, tokens=LOW_TOKENS)
    unknown = str(gone.pk)
    gone.delete()
    panel = reverse("handoff_web:panel", args=[main.pk])
    assert client.get(panel).status_code == 200
    call_command("handoff", "enable", str(main.pk), "--json", stdout=io.StringIO())
    assert MainState.objects.get(session_id=main.pk).enabled
    before = list(MainState.objects.values_list("session_id", "enabled").order_by("pk"))
    for bad in (unknown, "not-an-id"):
        for path in (panel, reverse("handoff_web:session_action", args=[main.pk, "disable"])):
            url = path.replace(str(main.pk), bad)
            response = client.post(url) if path.endswith("/disable/") else client.get(url)
            assert response.status_code == 404, (url, response.status_code)
        with pytest.raises(SessionNotFound):
            operations.status(bad)
        with pytest.raises(CommandError):
            call_command("handoff", "disable", bad)
    assert list(MainState.objects.values_list("session_id", "enabled").order_by("pk")) == before
    assert not HandoffRecord.objects.exists()


@pytest.mark.django_db
def test_the_json_api_takes_the_hosts_own_ids_and_refuses_bad_ones(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    """The handoff's half of the JSON API (mounted at ``/api/`` on both hosts) types a session
    id as the session model's key: the host's ids work, a malformed one is 422 and an unknown
    one 404, and neither changes anything."""
    source, _ = _handed_off(chat_host, settle)
    client.force_login(chat_host.user("alice"))
    gone = chat_host.conversation(chat_host.user("alice"), tokens=LOW_TOKENS)
    unknown = str(gone.pk)
    gone.delete()

    def act(session_id: str, action: str) -> Any:
        body = {"action": action}
        url = f"/api/sessions/{session_id}/handoff"
        return client.post(url, body, content_type="application/json")

    assert act(str(source.pk), "status").json()["session"] == str(source.pk)
    listed = client.get("/api/handoffs", {"session": str(source.pk)}).json()
    assert [record["source"] for record in listed["items"]] == [str(source.pk)]
    states = list(MainState.objects.values_list("session_id", "enabled").order_by("pk"))
    assert act("not-an-id", "enable").status_code == 422
    assert act(unknown, "enable").status_code == 404
    assert client.get("/api/handoffs", {"session": "not-an-id"}).status_code == 422
    assert list(MainState.objects.values_list("session_id", "enabled").order_by("pk")) == states


# --- review ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_with_review_switched_on_in_the_panel_now_waits_at_prepared_then_commits(
    chat_host: ChatHost, settle: Callable[[], Any], client: Client
) -> None:
    """docs/spec.md, Review: the panel's "Review before the successor starts" switch (its
    ``review-on`` button) makes "Hand off now" stop at ``prepared`` with the successor's draft
    unstarted; committing the review starts it."""
    alice = chat_host.user("alice")
    source = chat_host.conversation(alice, tokens=HIGH_TOKENS)
    client.force_login(alice)

    def press(action: str) -> None:
        url = reverse("handoff_web:session_action", args=[source.pk, action])
        with settle():
            response = client.post(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, response.content.decode()

    press("review-on")
    press("now")
    (record,) = HandoffRecord.objects.filter(source_id=source.pk)
    assert record.phase == "prepared" and record.review_until is not None
    assert not Redirect.objects.filter(source_id=source.pk).exists()
    draft = _read(record.target_id)
    assert chat_host.log(draft) == []  # the draft is unstarted: no brief, no answer
    assert _read(source.pk).title == "Refactor the parser"
    panel = client.get(reverse("handoff_web:panel", args=[source.pk])).content.decode()
    assert 'id="handoff-review-form"' in panel  # the panel offers the review
    with settle():
        operations.commit_review(source.pk, record.brief)
    record.refresh_from_db()
    assert record.phase == "started"
    assert Redirect.objects.get(source_id=source.pk).destination_id == draft.pk
    successor_log = chat_host.log(draft)
    assert "Refactor the parser" in successor_log[0][1] and successor_log[-1][0] == "assistant"
