"""Admin pages (handoff/admin.py, host/admin.py, handoff_settings/admin.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import talked

from handoff.models import HandoffRecord, HandoffSettings, MainState, Redirect

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def root(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser("root", password="pw")


@pytest.fixture
def admin_client(client: Client, root: Any) -> Client:
    client.force_login(root)
    return client


@pytest.fixture
def handed_off(root: Any) -> HandoffRecord:
    """A started handoff: source -> successor, with its redirect and the successor's state."""
    source = talked(root, "Weather CLI")
    successor = talked(root, "Weather CLI, continued")
    record = HandoffRecord.objects.create(
        source=source,
        target=successor,
        phase="started",
        reason="context-pressure",
        source_revision=4,
        metrics={"tokens": 150000, "turns": 9, "compactions": 1, "capacity": 200000},
        brief={"goal": "Ship the weather CLI", "next_steps": ["add --json"]},
    )
    Redirect.objects.create(source=source, destination=successor, record=record)
    MainState.objects.create(session=successor, enabled=True, inherited_from=source)
    return record


def changelist(model: str) -> str:
    return reverse(f"admin:handoff_{model}_changelist")


def act(client: Client, model: str, action: str, pks: list[Any]) -> Any:
    return client.post(
        changelist(model), {"action": action, "_selected_action": [str(pk) for pk in pks]}
    )


def test_records_list_filters_by_phase_and_reason(admin_client: Client, handed_off: Any):
    html = admin_client.get(changelist("handoffrecord")).content.decode()
    assert "By phase" in html and "By reason" in html
    assert (
        admin_client.get(changelist("handoffrecord"), {"phase": "failed"})
        .context["cl"]
        .result_count
        == 0
    )
    assert (
        admin_client.get(changelist("handoffrecord"), {"phase": "started"})
        .context["cl"]
        .result_count
        == 1
    )


@pytest.mark.parametrize("query", ["Weather CLI, continued", "weather"])
def test_records_search_by_title(admin_client: Client, handed_off: Any, query: str):
    response = admin_client.get(changelist("handoffrecord"), {"q": query})
    assert response.context["cl"].result_count == 1


def test_records_search_by_source_id(admin_client: Client, handed_off: Any):
    response = admin_client.get(changelist("handoffrecord"), {"q": str(handed_off.source_id)})
    assert response.context["cl"].result_count == 1
    response = admin_client.get(changelist("handoffrecord"), {"q": "no-such-session"})
    assert response.context["cl"].result_count == 0


def test_record_page_shows_the_brief_and_inheritance_rendered(
    admin_client: Client, handed_off: Any
):
    HandoffRecord.objects.filter(pk=handed_off.pk).update(
        inheritance=[
            {"setting": "cwd", "outcome": "inherited", "detail": "/work/demo"},
            {"setting": "sandbox-tier", "outcome": "not-inherited", "detail": "custom preset"},
        ]
    )
    url = reverse("admin:handoff_handoffrecord_change", args=[handed_off.pk])
    html = admin_client.get(url).content.decode()
    assert "<strong>Goal:</strong> <p>Ship the weather CLI</p>" in html
    assert "<h3>Next steps</h3>" in html and "<li><p>add --json</p>\n</li>" in html
    assert "&quot;goal&quot;" not in html and "not-inherited</td>" not in html
    assert '<td>Working directory</td><td class="outcome-inherited">inherited</td>' in html
    assert '<td class="outcome-not-inherited">not inherited</td><td translate="no">custom' in html
    assert "150,000 tokens · 9 turns · 1 compaction · context window 200,000" in html
    assert 'name="_save"' not in html  # read-only: no save button


@pytest.mark.parametrize("model", ["handoffrecord", "mainstate", "redirect"])
def test_handoff_admin_is_read_only(admin_client: Client, handed_off: Any, model: str):
    assert admin_client.get(reverse(f"admin:handoff_{model}_add")).status_code == 403


def test_record_cannot_be_edited_by_post(admin_client: Client, handed_off: Any):
    url = reverse("admin:handoff_handoffrecord_change", args=[handed_off.pk])
    admin_client.post(url, {"phase": "failed", "error": "hand-edited"})
    handed_off.refresh_from_db()
    assert handed_off.phase == "started" and handed_off.error == ""


def test_open_the_successor_goes_to_its_chat_page(admin_client: Client, handed_off: Any):
    response = act(admin_client, "handoffrecord", "open_successor", [handed_off.pk])
    assert response.status_code == 302
    assert response["Location"] == reverse("chat:session", args=[handed_off.target_id])


def test_open_the_successor_needs_exactly_one(admin_client: Client, root: Any):
    failed = HandoffRecord.objects.create(
        source=talked(root, "x"), phase="failed", reason="manual", source_revision=1
    )
    response = act(admin_client, "handoffrecord", "open_successor", [failed.pk])
    assert response.status_code == 302
    assert response["Location"].endswith(changelist("handoffrecord"))


def test_disable_stops_forwarding(admin_client: Client, handed_off: Any):
    act(admin_client, "handoffrecord", "disable_source", [handed_off.pk])
    assert not Redirect.objects.filter(source_id=handed_off.source_id).exists()
    assert HandoffRecord.objects.get(pk=handed_off.pk).phase == "started"


def test_enable_again_from_the_main_state(admin_client: Client, root: Any):
    session = talked(root, "Main")
    state = MainState.objects.create(session=session, enabled=False)
    act(admin_client, "mainstate", "enable_main", [state.pk])
    assert MainState.objects.get(pk=state.pk).enabled


def test_disable_from_the_main_state(admin_client: Client, handed_off: Any):
    state = MainState.objects.get(session_id=handed_off.target_id)
    act(admin_client, "mainstate", "disable_main", [state.pk])
    assert not MainState.objects.get(pk=state.pk).enabled


def test_enable_on_a_relay_is_refused_with_a_message(admin_client: Client, handed_off: Any):
    response = act(admin_client, "handoffrecord", "enable_source", [handed_off.pk])
    messages = [str(m) for m in response.wsgi_request._messages]  # type: ignore[attr-defined]
    assert any(m.startswith("“Weather CLI”: ") for m in messages)
    assert not MainState.objects.filter(session_id=handed_off.source_id, enabled=True).exists()


def test_redirect_disable_action(admin_client: Client, handed_off: Any):
    act(admin_client, "redirect", "disable_source", [handed_off.source_id])
    assert not Redirect.objects.exists()


def test_session_admin_edits_only_the_title(admin_client: Client, root: Any):
    session = talked(root, "Old title")
    url = reverse("admin:host_session_change", args=[session.pk])
    html = admin_client.get(url).content.decode()
    assert 'name="title"' in html and 'name="cwd"' not in html
    assert "Open the conversation" in html
    assert admin_client.get(reverse("admin:host_session_add")).status_code == 403


def test_context_windows_are_saved_through_the_store(admin_client: Client):
    row, _ = HandoffSettings.objects.get_or_create(pk=1)
    url = reverse("admin:handoff_handoffsettings_change", args=[row.pk])
    admin_client.post(url, {"context_windows": '{"my-model": 64000}'})
    row.refresh_from_db()
    assert row.context_windows == {"my-model": 64000}
    assert row.version == 1


def test_bad_context_windows_are_refused(admin_client: Client):
    row, _ = HandoffSettings.objects.get_or_create(pk=1)
    url = reverse("admin:handoff_handoffsettings_change", args=[row.pk])
    response = admin_client.post(url, {"context_windows": '{"my-model": -5}'})
    assert response.status_code == 200
    assert "whole numbers of tokens" in response.content.decode()
    row.refresh_from_db()
    assert row.context_windows == {} and row.version == 0


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("admin:handoff_handoffrecord_changelist", {"phase": "\x00"}),
        ("admin:handoff_handoffrecord_changelist", {"q": "weather\x00"}),
        ("admin:handoff_mainstate_changelist", {"enabled": "\x00"}),
        ("admin:host_session_changelist", {"status": "\x00"}),
        ("admin:host_session_changelist", {"permission_preset\x00": "x"}),
    ],
)
def test_a_nul_character_in_a_list_filter_is_400(
    admin_client: Client, handed_off: Any, url: str, query: dict[str, str]
):
    response = admin_client.get(reverse(url), query)

    assert response.status_code == 400
    assert HandoffRecord.objects.get(pk=handed_off.pk).phase == "started"
