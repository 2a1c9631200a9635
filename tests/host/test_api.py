"""The JSON API under ``/api/`` (docs/api.md): auth, ownership, payloads, forwarding, records."""

from __future__ import annotations

import uuid
from dataclasses import fields
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.test import Client
from handoff_support import make_source

from follower.events import events_after
from handoff import operations
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.shapes import MetricsOut, RecordOut, StatusOut, TokensOut
from host.api import UsageSchema
from host.auth import issue_token
from host.log import append_message
from host.models import Message, Session, Workspace
from host.usage import Usage

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-4000-8000-000000000000"


def make_user(name: str) -> User:
    return get_user_model().objects.create_user(name)


def api_client(user: User) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user)}")


def make_session(owner: User, **fields: Any) -> Session:
    fields.setdefault("title", "work")
    fields.setdefault("cwd", "/srv/project")
    return Session.objects.create(owner=owner, **fields)


def post_json(client: Client, path: str, data: Any) -> Any:
    return client.post(path, data, content_type="application/json")


def snapshot(session: Session) -> tuple[int, int, bool]:
    """What a rejected request must leave alone: revision, message count, main state."""
    session.refresh_from_db()
    enabled = MainState.objects.filter(session=session, enabled=True).exists()
    return session.revision, Message.objects.filter(session=session).count(), enabled


@pytest.fixture
def ada() -> User:
    return make_user("ada")


@pytest.fixture
def client(ada: User) -> Client:
    return api_client(ada)


@pytest.fixture
def session(ada: User) -> Session:
    return make_session(ada)


# --- authentication ---------------------------------------------------------------------------

ROUTES = [
    ("get", "/api/sessions"),
    ("post", "/api/sessions"),
    ("get", "/api/sessions/{id}"),
    ("get", "/api/sessions/{id}/messages"),
    ("post", "/api/sessions/{id}/messages"),
    ("post", "/api/sessions/{id}/handoff"),
    ("get", "/api/handoffs"),
    ("get", "/api/handoffs/{id}"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_requires_authentication(method: str, path: str, session: Session):
    url = path.format(id=session.pk)
    body = {"content": "hi", "action": "enable", "cwd": "/srv/project"}
    response = getattr(Client(), method)(url, body, content_type="application/json")

    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]
    assert snapshot(session) == (0, 0, False)
    assert list(Session.objects.all()) == [session]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_wrong_bearer_token_is_refused(method: str, path: str, session: Session):
    client = Client(HTTP_AUTHORIZATION="Bearer wrong")
    response = getattr(client, method)(path.format(id=session.pk))

    assert response.status_code == 401


def test_the_browser_session_is_accepted(ada: User, session: Session):
    browser = Client()
    browser.force_login(ada)

    response = browser.get("/api/sessions")

    assert response.status_code == 200
    assert [row["id"] for row in response.json()["items"]] == [str(session.pk)]


def test_the_browser_session_needs_the_csrf_token_to_write(ada: User, session: Session):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(ada)
    url = f"/api/sessions/{session.pk}/handoff"

    refused = post_json(browser, url, {"action": "enable"})
    assert refused.status_code == 403
    assert snapshot(session) == (0, 0, False)

    secret = "a" * 32
    browser.cookies["csrftoken"] = secret
    accepted = browser.post(
        url, {"action": "enable"}, content_type="application/json", HTTP_X_CSRFTOKEN=secret
    )
    assert accepted.status_code == 200
    assert accepted.json()["enabled"] is True


def test_openapi_docs_are_served(client: Client):
    assert Client().get("/api/docs").status_code == 200
    schema = client.get("/api/openapi.json").json()

    assert "/api/sessions/{session_id}/messages" in schema["paths"]
    assert schema["paths"]["/api/sessions"]["post"]["summary"] == "Create a session"
    assert "/api/sessions/{session_id}/handoff" in schema["paths"]
    assert "/api/handoffs/{record_id}" in schema["paths"]


WRITE_ERRORS = {"400", "401", "403", "404", "413", "422"}
ERRORS = {
    ("get", "/api/sessions"): {"401", "422"},
    ("post", "/api/sessions"): WRITE_ERRORS - {"404"},
    ("get", "/api/sessions/{session_id}"): {"401", "404", "409", "422"},
    ("get", "/api/sessions/{session_id}/messages"): {"401", "404", "422"},
    ("post", "/api/sessions/{session_id}/messages"): WRITE_ERRORS | {"409"},
    ("post", "/api/sessions/{session_id}/handoff"): WRITE_ERRORS | {"409"},
    ("get", "/api/handoffs"): {"401", "422"},
    ("get", "/api/handoffs/{record_id}"): {"401", "404", "422"},
}


@pytest.mark.parametrize(("method", "path"), ERRORS)
def test_the_schema_documents_each_error_answer_of_a_route(client: Client, method: str, path: str):
    responses = client.get("/api/openapi.json").json()["paths"][path][method]["responses"]
    errors = {code: answer for code, answer in responses.items() if code >= "400"}

    assert set(errors) == ERRORS[method, path]
    for code, answer in errors.items():
        shape = answer["content"]["application/json"]["schema"]["$ref"]
        assert shape.endswith("/ValidationErrorOut" if code == "422" else "/ErrorOut")


# --- sessions ---------------------------------------------------------------------------------


def test_the_list_shows_only_the_callers_sessions(ada: User, client: Client):
    mine = make_session(ada, title="mine")
    make_session(make_user("bob"), title="theirs")

    rows = client.get("/api/sessions").json()

    assert rows["count"] == 1
    assert rows["items"][0]["id"] == str(mine.pk)
    assert rows["items"][0]["title"] == "mine"


def test_the_list_leaves_archived_sessions_out_unless_asked(ada: User, client: Client):
    live = make_session(ada, title="live")
    archived = make_session(ada, title="old", archived=True)

    default = {row["id"] for row in client.get("/api/sessions").json()["items"]}
    everything = client.get("/api/sessions", {"include_archived": "true"}).json()["items"]

    assert default == {str(live.pk)}
    assert {row["id"] for row in everything} == {str(live.pk), str(archived.pk)}


def test_the_list_filters_by_workspace(ada: User, client: Client):
    workspace = Workspace.objects.create(owner=ada, path="/srv/a", name="a")
    inside = make_session(ada, workspace=workspace)
    make_session(ada)

    rows = client.get("/api/sessions", {"workspace": workspace.pk}).json()["items"]

    assert [row["id"] for row in rows] == [str(inside.pk)]
    assert rows[0]["workspace"] == {"id": workspace.pk, "path": "/srv/a", "name": "a"}


def test_the_detail_reports_tokens_with_basis_and_label_and_the_redirect(
    ada: User, client: Client, session: Session
):
    append_message(session, role="user", source_kind="user", content="x" * 400, starts_turn=True)

    detail = client.get(f"/api/sessions/{session.pk}").json()

    assert detail["id"] == str(session.pk)
    assert detail["turns"] == 1
    assert detail["parent"] is None
    assert detail["tokens"] == {"value": 100, "basis": "context", "label": "estimated"}
    assert detail["redirect"] is None
    assert detail["handoff"]["session"] == str(session.pk)
    assert detail["handoff"]["enabled"] is False


def test_the_detail_names_the_redirect_of_a_handed_off_source(
    ada: User, client: Client, session: Session
):
    successor = make_session(ada, title="next")
    Redirect.objects.create(source=session, destination=successor)

    detail = client.get(f"/api/sessions/{session.pk}").json()

    assert detail["redirect"] == str(successor.pk)


# --- creating a session ----------------------------------------------------------------------


def test_creating_a_session_answers_201_with_the_session_as_listed(client: Client):
    response = post_json(client, "/api/sessions", {"cwd": "/srv/project", "title": "Fix it"})

    assert response.status_code == 201
    created = response.json()
    assert created == client.get("/api/sessions").json()["items"][0]
    assert (created["title"], created["cwd"], created["workspace"]) == (
        "Fix it",
        "/srv/project",
        None,
    )
    assert (created["status"], created["blank"], created["turns"]) == ("idle", True, 0)
    assert (created["agent_preset"], created["permission_preset"]) == ("default", "default")
    assert created["model"] == settings.HOST_DEFAULT_MODEL


def test_a_created_session_joins_the_workspace_registered_at_its_cwd(ada: User, client: Client):
    workspace = Workspace.objects.create(owner=ada, path="/srv/a", name="a")

    inside = post_json(client, "/api/sessions", {"cwd": "/srv/a"}).json()
    outside = post_json(client, "/api/sessions", {"cwd": "/srv/a/sub"}).json()

    assert inside["workspace"] == {"id": workspace.pk, "path": "/srv/a", "name": "a"}
    assert outside["workspace"] is None
    assert list(Workspace.objects.all()) == [workspace]  # an unknown directory stays unknown


def test_a_created_session_carries_the_settings_it_was_given(client: Client):
    given = {"agent_preset": "planner", "model": "gpt-5", "permission_preset": "read-only"}

    created = post_json(client, "/api/sessions", {"cwd": "/srv/project", **given}).json()

    assert {name: created[name] for name in given} == given


def test_a_created_session_takes_its_agent_presets_model_when_given_none(client: Client):
    created = post_json(client, "/api/sessions", {"cwd": "/srv/x", "agent_preset": "reviewer"})

    assert created.json()["model"] == "gpt-4.1"


def test_a_retried_create_with_the_same_client_id_answers_the_first_session(
    ada: User, client: Client
):
    payload = {"cwd": "/srv/x", "client_id": "c-1"}

    first = post_json(client, "/api/sessions", payload)
    retry = post_json(client, "/api/sessions", {**payload, "cwd": "/srv/y", "title": "t"})
    other = post_json(client, "/api/sessions", {**payload, "client_id": "c-2"})
    theirs = post_json(api_client(make_user("bob")), "/api/sessions", payload)

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert len({first.json()["id"], other.json()["id"], theirs.json()["id"]}) == 3
    assert Session.objects.filter(owner=ada).count() == 2


def test_a_created_session_is_told_to_the_owners_pages(ada: User, client: Client):
    workspace = Workspace.objects.create(owner=ada, path="/srv/a", name="a")

    created = post_json(client, "/api/sessions", {"cwd": "/srv/a", "title": "From a script"})

    frames = events_after(ada.pk, 0)
    assert isinstance(frames, list)
    [frame] = frames
    assert frame["kind"] == "session.added"
    row = frame["payload"]["session"]
    assert (row["id"], row["title"], row["workspace"]) == (
        created.json()["id"],
        "From a script",
        str(workspace.pk),
    )
    assert "From a script" in frame["payload"]["row_html"]
    assert events_after(make_user("bob").pk, 0) == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "cwd"),
        ({"cwd": ""}, "cwd"),
        ({"cwd": "srv/project"}, "cwd"),
        ({"cwd": 42}, "cwd"),
        ({"cwd": "/" + "x" * 1024}, "cwd"),
        ({"cwd": "/srv", "title": "t" * 301}, "title"),
        ({"cwd": "/srv", "agent_preset": "wizard"}, "agent_preset"),
        ({"cwd": "/srv", "permission_preset": "root"}, "permission_preset"),
        ({"cwd": "/srv", "model": ""}, "model"),
        ({"cwd": "/srv", "client_id": ""}, "client_id"),
        ({"cwd": "/srv", "client_id": "  "}, "client_id"),
        ({"cwd": "/srv", "client_id": "c" * 197}, "client_id"),
        ({"cwd": "/srv", "colour": "red"}, "colour"),
        (["cwd", "/srv"], "body"),
    ],
)
def test_a_bad_session_payload_is_422_naming_the_field_and_creates_nothing(
    ada: User, client: Client, payload: Any, field: str
):
    response = post_json(client, "/api/sessions", payload)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")
    assert not Session.objects.exists()
    assert events_after(ada.pk, 0) == []


def test_an_unknown_agent_preset_is_422_naming_the_known_ones(client: Client):
    response = post_json(client, "/api/sessions", {"cwd": "/srv", "agent_preset": "wizard"})

    detail = response.json()["detail"]
    assert "unknown agent preset 'wizard'" in detail
    assert "default, planner, reviewer" in detail


@pytest.mark.parametrize("field", ["cwd", "title", "model", "client_id"])
def test_a_nul_character_in_a_new_session_is_422_and_creates_nothing(client: Client, field: str):
    payload = {"cwd": "/srv", field: "/a\x00b"}

    response = post_json(client, "/api/sessions", payload)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")
    assert "NUL" in response.json()["detail"]
    assert not Session.objects.exists()


# --- ownership: another user's session is a 404 and stays untouched -----------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/sessions/{id}", None),
        ("get", "/api/sessions/{id}/messages", None),
        ("post", "/api/sessions/{id}/messages", {"content": "hello"}),
        ("post", "/api/sessions/{id}/handoff", {"action": "enable"}),
        ("post", "/api/sessions/{id}/handoff", {"action": "now"}),
    ],
)
def test_another_users_session_answers_like_a_missing_one(
    client: Client, method: str, path: str, body: Any
):
    theirs = make_session(make_user("bob"))
    before = snapshot(theirs)

    def call(session_id: object) -> Any:
        url = path.format(id=session_id)
        if method == "get":
            return client.get(url)
        return post_json(client, url, body)

    foreign, missing = call(theirs.pk), call(MISSING)

    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["detail"] == missing.json()["detail"].replace(MISSING, str(theirs.pk))
    assert snapshot(theirs) == before
    assert not MainState.objects.filter(session=theirs, requested=True).exists()


# --- messages ---------------------------------------------------------------------------------


def test_posting_a_message_answers_201_with_the_message(client: Client, session: Session):
    response = post_json(
        client,
        f"/api/sessions/{session.pk}/messages",
        {"role": "user", "content": "Please run the tests", "client_id": "c-1"},
    )

    assert response.status_code == 201
    body = response.json()
    assert body["role"] == "user"
    assert body["content"] == "Please run the tests"
    assert body["client_id"] == "c-1"
    assert body["seq"] >= 1
    listed = client.get(f"/api/sessions/{session.pk}/messages").json()["items"]
    assert [m["content"] for m in listed if m["role"] == "user"] == ["Please run the tests"]


def test_a_posted_message_keeps_its_usage(client: Client, session: Session):
    usage = {"uncached_input": 10, "output": 5, "cache_read": 100, "cache_write": 7}

    response = post_json(
        client,
        f"/api/sessions/{session.pk}/messages",
        {"role": "assistant", "content": "done", "usage": usage},
    )

    assert response.status_code == 201
    assert response.json()["usage"] == usage


def test_the_usage_schema_has_the_buckets_of_usage():
    assert list(UsageSchema.model_fields) == [field.name for field in fields(Usage)]


def test_a_retried_post_with_the_same_client_id_gets_the_first_answer(
    client: Client, session: Session
):
    url = f"/api/sessions/{session.pk}/messages"
    payload = {"content": "only once", "client_id": "retry-me"}

    first = post_json(client, url, payload)
    second = post_json(client, url, payload)

    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert Message.objects.filter(session=session, content="only once").count() == 1


def test_messages_are_paged_in_seq_order_after_a_seq(client: Client, session: Session):
    for n in range(5):
        append_message(session, role="assistant", source_kind="assistant", content=f"m{n}")
    url = f"/api/sessions/{session.pk}/messages"

    first = client.get(url, {"limit": 2}).json()
    second = client.get(url, {"limit": 2, "after": first["next_after"]}).json()
    last = client.get(url, {"limit": 2, "after": second["next_after"]}).json()

    assert [m["content"] for m in first["items"]] == ["m0", "m1"]
    assert [m["content"] for m in second["items"]] == ["m2", "m3"]
    assert [m["content"] for m in last["items"]] == ["m4"]
    assert last["next_after"] is None


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"role": "user"}, "content"),
        ({"content": ""}, "content"),
        ({"content": "x", "usage": {"output": -1}}, "usage.output"),
        ({"content": "x", "usage": {"tokens": 3}}, "usage.tokens"),
        ({"content": "x", "role": "wizard"}, "role"),
        ({"content": "x", "colour": "red"}, "colour"),
        ({"content": 42}, "content"),
        ({"content": "x", "usage": {"output": True}}, "usage.output"),
        ({"content": "x", "usage": {"output": "5"}}, "usage.output"),
        ({"content": "x", "usage": {"cache_read": 5.5}}, "usage.cache_read"),
        (["content", "x"], "body"),
    ],
)
def test_a_bad_message_payload_is_422_naming_the_field_and_changes_nothing(
    client: Client, session: Session, payload: Any, field: str
):
    response = post_json(client, f"/api/sessions/{session.pk}/messages", payload)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")
    assert snapshot(session) == (0, 0, False)


def test_a_json_body_sent_as_text_plain_is_422_naming_the_content_type(
    client: Client, session: Session
):
    response = client.post(
        f"/api/sessions/{session.pk}/messages", '{"content": "hi"}', content_type="text/plain"
    )

    assert response.status_code == 422
    assert response.json()["detail"].startswith("Content-Type: ")
    assert "text/plain" in response.json()["detail"]
    assert snapshot(session) == (0, 0, False)


def test_a_bad_page_query_is_422(client: Client, session: Session):
    response = client.get(f"/api/sessions/{session.pk}/messages", {"after": -1})

    assert response.status_code == 422
    assert response.json()["detail"].startswith("after: ")


def test_a_body_that_is_not_json_is_rejected(client: Client, session: Session):
    response = client.post(
        f"/api/sessions/{session.pk}/messages", "{not json", content_type="application/json"
    )

    assert response.status_code == 400
    assert "Cannot parse request body" in response.json()["detail"]
    assert snapshot(session) == (0, 0, False)


# --- forwarding: a post to a redirected source is relayed exactly once --------------------------


def test_a_post_to_a_redirected_source_is_202_and_relayed_once_also_when_retried(
    ada: User, client: Client, session: Session
):
    successor = make_session(ada, title="successor")
    Redirect.objects.create(source=session, destination=successor)
    url = f"/api/sessions/{session.pk}/messages"
    payload = {"content": "are you there?", "client_id": "late-1"}

    first = post_json(client, url, payload)
    again = post_json(client, url, payload)

    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert first.json()["forwarded_to"] == str(successor.pk)
    assert len(first.json()["relay_id"]) == 64
    relayed = Message.objects.filter(session=successor, content="are you there?")
    assert relayed.count() == 1
    assert relayed.get().relay_id == first.json()["relay_id"]
    assert Message.objects.filter(session=session, content="are you there?").count() == 1


def test_after_a_real_handoff_a_late_post_reaches_the_successor_once(ada: User, client: Client):
    source = make_source(ada)
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None and outcome.record.phase == "started"
    successor_id = str(outcome.record.target_id)
    url = f"/api/sessions/{source.pk}/messages"
    payload = {"content": "One more thing: update the changelog.", "client_id": "late-2"}

    first = post_json(client, url, payload)
    again = post_json(client, url, payload)

    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert first.json()["forwarded_to"] == successor_id
    relayed = Message.objects.filter(session_id=successor_id, content=payload["content"])
    assert relayed.count() == 1
    detail = client.get(f"/api/sessions/{source.pk}").json()
    assert detail["redirect"] == successor_id
    assert detail["handoff"]["last"]["phase"] == "started"


# --- handoff actions --------------------------------------------------------------------------


def test_enable_and_disable_return_the_status_report(client: Client, session: Session):
    url = f"/api/sessions/{session.pk}/handoff"

    enabled = post_json(client, url, {"action": "enable"})
    assert enabled.status_code == 200
    assert enabled.json()["enabled"] is True
    assert MainState.objects.get(session=session).enabled is True

    disabled = post_json(client, url, {"action": "disable"}).json()
    assert disabled["enabled"] is False
    assert disabled["requested"] is False


def test_status_reports_the_issue_2_fields(client: Client, session: Session):
    report = post_json(client, f"/api/sessions/{session.pk}/handoff", {"action": "status"}).json()

    assert set(report) == set(StatusOut.__annotations__)
    assert set(report["tokens"]) == set(TokensOut.__annotations__)


def test_now_sets_requested_and_returns_without_waiting(client: Client, session: Session):
    report = post_json(client, f"/api/sessions/{session.pk}/handoff", {"action": "now"})

    assert report.status_code == 200
    assert report.json()["requested"] is True
    assert HandoffRecord.objects.filter(source=session).count() == 0


def test_now_on_a_subagent_is_refused_with_409(ada: User, client: Client, session: Session):
    subagent = make_session(ada, parent=session)

    response = post_json(client, f"/api/sessions/{subagent.pk}/handoff", {"action": "now"})

    assert response.status_code == 409
    assert "subagent" in response.json()["detail"]
    assert not MainState.objects.filter(session=subagent, requested=True).exists()


def test_now_on_a_handed_off_source_is_refused_with_409(
    ada: User, client: Client, session: Session
):
    successor = make_session(ada, title="next")
    Redirect.objects.create(source=session, destination=successor)

    response = post_json(client, f"/api/sessions/{session.pk}/handoff", {"action": "now"})

    assert response.status_code == 409
    assert str(successor.pk) in response.json()["detail"]
    assert not MainState.objects.filter(session=session, requested=True).exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"action": "explode"}, "action"),
        ({}, "action"),
        ({"action": "now", "x": 1}, "x"),
        ({"action": ["now"]}, "action"),
    ],
)
def test_a_bad_handoff_action_is_422_and_changes_nothing(
    client: Client, session: Session, payload: dict[str, Any], field: str
):
    response = post_json(client, f"/api/sessions/{session.pk}/handoff", payload)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")
    assert not MainState.objects.filter(session=session).exists()


# --- records ----------------------------------------------------------------------------------


def make_record(source: Session, phase: str = "failed", **fields: Any) -> HandoffRecord:
    return HandoffRecord.objects.create(
        source=source,
        phase=phase,
        reason="manual",
        metrics={"tokens": 10, "turns": 4, "compactions": 0, "capacity": 0},
        source_revision=source.revision,
        **fields,
    )


def test_records_list_only_the_callers_and_filters_by_phase_and_session(
    ada: User, client: Client, session: Session
):
    other = make_session(ada)
    failed = make_record(session, "failed", error="summarize failed")
    started = make_record(other, "started", target=make_session(ada))
    make_record(make_session(make_user("bob")), "failed")

    everything = client.get("/api/handoffs").json()
    by_phase = client.get("/api/handoffs", {"phase": "failed"}).json()
    by_session = client.get("/api/handoffs", {"session": str(other.pk)}).json()

    assert {r["id"] for r in everything["items"]} == {str(failed.pk), str(started.pk)}
    assert everything["count"] == 2
    assert [r["id"] for r in by_phase["items"]] == [str(failed.pk)]
    assert [r["id"] for r in by_session["items"]] == [str(started.pk)]


def test_a_record_detail_has_the_record_shape(client: Client, session: Session):
    record = make_record(session, "failed", error="the brief failed validation")

    body = client.get(f"/api/handoffs/{record.pk}").json()

    assert set(body) == set(RecordOut.__annotations__)
    assert body["source"] == str(session.pk)
    assert body["error"] == "the brief failed validation"
    assert set(body["metrics"]) == set(MetricsOut.__annotations__)


def test_another_users_record_is_404(client: Client):
    theirs = make_record(make_session(make_user("bob")))

    foreign = client.get(f"/api/handoffs/{theirs.pk}")
    missing = client.get(f"/api/handoffs/{uuid.uuid4()}")

    assert foreign.status_code == missing.status_code == 404


@pytest.mark.parametrize("phase", ["exploded", "\x00"])
def test_an_unknown_phase_filter_is_422(client: Client, phase: str):
    response = client.get("/api/handoffs", {"phase": phase})

    assert response.status_code == 422
    assert response.json()["detail"].startswith("phase: ")


# --- out-of-range numbers and NUL bytes ----------------------------------------------------------


@pytest.mark.parametrize("tokens", [2**63, 2**70, 10**12])
def test_a_usage_figure_beyond_any_model_call_is_422_and_changes_nothing(
    client: Client, session: Session, tokens: int
):
    response = post_json(
        client,
        f"/api/sessions/{session.pk}/messages",
        {"role": "assistant", "content": "done", "usage": {"output": tokens}},
    )

    assert response.status_code == 422
    assert response.json()["detail"].startswith("usage.output: ")
    assert snapshot(session) == (0, 0, False)


def test_the_largest_accepted_usage_figures_add_up_without_overflow(
    client: Client, session: Session
):
    big = {"uncached_input": 10**9, "output": 10**9, "cache_read": 10**9, "cache_write": 10**9}
    for _ in range(3):
        response = post_json(
            client,
            f"/api/sessions/{session.pk}/messages",
            {"role": "assistant", "content": "done", "usage": big},
        )
        assert response.status_code == 201

    detail = client.get(f"/api/sessions/{session.pk}")

    assert detail.status_code == 200


@pytest.mark.parametrize("status", ["finished", "disposed"])
def test_input_for_a_finished_helper_conversation_is_409_and_changes_nothing(
    ada: User, client: Client, status: str
):
    main = make_session(ada, title="main")
    helper = make_session(ada, title="helper", parent=main, status=status)

    response = post_json(client, f"/api/sessions/{helper.pk}/messages", {"content": "more?"})

    assert response.status_code == 409
    detail = response.json()["detail"]
    assert f"is {status}" in detail and "takes no more input" in detail and str(main.pk) in detail
    assert not Message.objects.filter(session=helper).exists()


@pytest.mark.parametrize(
    "payload", [{"content": "run\x00 the tests"}, {"content": "x", "client_id": "c\x001"}]
)
def test_a_nul_character_is_422_and_changes_nothing(
    client: Client, session: Session, payload: dict[str, Any]
):
    response = post_json(client, f"/api/sessions/{session.pk}/messages", payload)

    assert response.status_code == 422
    assert "NUL" in response.json()["detail"]
    assert snapshot(session) == (0, 0, False)


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("/api/sessions", {"offset": 2**63}, "offset"),
        ("/api/sessions", {"workspace": 2**63}, "workspace"),
        ("/api/handoffs", {"offset": 10**23}, "offset"),
        ("/api/sessions/{id}/messages", {"after": 2**64}, "after"),
    ],
)
def test_a_query_number_beyond_64_bits_is_422(
    client: Client, session: Session, path: str, query: dict[str, int], field: str
):
    response = client.get(path.format(id=session.pk), query)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")


@pytest.mark.parametrize("path", ["/api/sessions", "/api/handoffs"])
def test_the_largest_offset_is_an_empty_page(client: Client, session: Session, path: str):
    response = client.get(path, {"offset": 2**63 - 1})

    assert response.status_code == 200
    assert response.json()["items"] == []


def test_a_body_over_the_upload_limit_is_413_json_and_changes_nothing(
    client: Client, session: Session, settings: Any
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = post_json(client, f"/api/sessions/{session.pk}/messages", {"content": "x" * 2000})

    assert response.status_code == 413
    assert "1000 bytes" in response.json()["detail"]
    assert snapshot(session) == (0, 0, False)
