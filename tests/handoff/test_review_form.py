"""The review form in the conversation's panel (docs/spec.md, Review): the brief as a Django form
and formsets — each field edited, list items added, removed and reordered — committed or
discarded through htmx."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source, make_user, target_of

from follower.events import Resync, events_after
from handoff import operations
from handoff.attempt import Outcome
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from handoff.web.follow import Kind as HandoffKind
from host.models import LanguagePreference, Message, Session

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def waiting(client: Client) -> tuple[Session, HandoffRecord]:
    source = make_source()
    operations.review_on(source.pk)
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome is Outcome.WAITING_FOR_REVIEW and outcome.record is not None
    client.force_login(source.owner)
    return source, HandoffRecord.objects.get(pk=outcome.record.pk)


def form_data(brief: dict[str, Any], **changes: str) -> dict[str, str]:
    """The POST a browser sends for ``brief`` unedited, with ``changes`` on top."""
    data = {"goal": brief["goal"]}
    for name, items in brief.items():
        if name == "goal":
            continue
        data |= {f"{name}-TOTAL_FORMS": str(len(items)), f"{name}-INITIAL_FORMS": str(len(items))}
        for index, item in enumerate(items):
            data |= {f"{name}-{index}-text": item, f"{name}-{index}-ORDER": str(index + 1)}
    return data | changes


def review_url(source: Session) -> str:
    return reverse("handoff_web:review", args=[source.pk])


def test_the_panel_shows_the_review_form_with_every_field(client: Client, waiting):
    source, record = waiting
    html = client.get(reverse("handoff_web:panel", args=[source.pk])).content.decode()
    assert "A handoff is ready for review" in html
    assert 'hx-trigger="every 1s' not in html  # a waiting review is not polled away
    for heading in ("Goal", "Decisions", "Constraints", "Artifacts", "Next steps"):
        assert heading in html
    assert record.brief is not None and record.brief["artifacts"][0] in html


def test_add_shows_one_more_empty_item(client: Client, waiting):
    source, record = waiting
    assert record.brief is not None
    before = len(record.brief["decisions"])
    data = form_data(record.brief, op="add:decisions")
    html = client.post(review_url(source), data, headers=HTMX).content.decode()
    assert f'name="decisions-{before}-text"' in html
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.PREPARED


def test_commit_with_items_added_removed_and_reordered_seeds_the_edited_brief(
    client: Client, waiting
):
    source, record = waiting
    assert record.brief is not None
    brief = {**record.brief, "decisions": ["First", "Second", "Drop me"]}
    data = form_data(
        brief,
        op="commit",
        goal="Ship the parser (reviewed)",
        **{
            "decisions-0-ORDER": "2",
            "decisions-1-ORDER": "1",
            "decisions-2-DELETE": "on",
            "decisions-TOTAL_FORMS": "4",
            "decisions-3-text": "Added at review",
        },
    )
    response = client.post(review_url(source), data, headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert '<section id="handoff-panel"' in response.content.decode()
    assert 'hx-swap-oob="true"' in response.content.decode()
    stored = HandoffRecord.objects.get(pk=record.pk)
    assert stored.phase == Phase.STARTED
    assert stored.brief is not None
    assert stored.brief["goal"] == "Ship the parser (reviewed)"
    assert stored.brief["decisions"] == ["Second", "First", "Added at review"]
    assert stored.original_brief == record.brief
    seed = Message.objects.filter(session=target_of(stored)).earliest("seq").content
    assert "Ship the parser (reviewed)" in seed and "Drop me" not in seed


def test_an_empty_goal_is_refused_and_changes_nothing(client: Client, waiting):
    source, record = waiting
    assert record.brief is not None
    response = client.post(review_url(source), form_data(record.brief, op="commit", goal=""))
    assert response.status_code == 422
    assert "This field is required" in response.content.decode()
    stored = HandoffRecord.objects.get(pk=record.pk)
    assert (stored.phase, stored.brief) == (Phase.PREPARED, record.brief)


def test_an_empty_goals_refusal_speaks_the_users_language(client: Client, waiting):
    source, record = waiting
    assert record.brief is not None
    LanguagePreference.objects.create(user=source.owner, language="zh-hans")
    response = client.post(review_url(source), form_data(record.brief, op="commit", goal=""))
    assert response.status_code == 422
    html = response.content.decode()
    assert "Correct the fields marked below." not in html
    assert "请更正下面标出的字段。" in html


def test_a_brief_over_the_cap_is_refused_with_the_seeds_reason(client: Client, waiting):
    source, record = waiting
    assert record.brief is not None
    data = form_data(record.brief, op="commit", goal="x" * 40_001)
    response = client.post(review_url(source), data)
    assert response.status_code == 422
    assert "the cap is 40000" in response.content.decode()
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.PREPARED


def test_a_brief_over_the_cap_is_refused_in_the_users_language(client: Client, waiting):
    source, record = waiting
    assert record.brief is not None
    LanguagePreference.objects.create(user=source.owner, language="zh-hans")
    data = form_data(record.brief, op="commit", goal="x" * 40_001)
    response = client.post(review_url(source), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "the edited brief is refused" not in html
    assert "编辑后的简报未被接受" in html


def test_discard_shows_the_panel_without_the_review(client: Client, waiting):
    source, record = waiting
    response = client.post(review_url(source), {"op": "discard"}, headers=HTMX)
    assert "A handoff is ready for review" not in response.content.decode()
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.FAILED


def test_a_discard_that_another_tab_beat_is_refused_409_with_the_reason(
    client: Client, waiting, monkeypatch: pytest.MonkeyPatch
):
    source, record = waiting
    discard = operations.discard_review

    def other_tab_first(session_id: Any) -> Any:
        """Both tabs found the review waiting; the other tab's discard lands first."""
        discard(session_id)
        return discard(session_id)

    monkeypatch.setattr(operations, "discard_review", other_tab_first)
    response = client.post(review_url(source), {"op": "discard"}, headers=HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "No handoff of this conversation is waiting for review." in html
    assert "A handoff is ready for review" not in html
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.FAILED


def test_another_users_review_is_a_404(client: Client, waiting):
    source, record = waiting
    client.force_login(make_user("mallory"))
    assert client.post(review_url(source), {"op": "discard"}).status_code == 404
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.PREPARED


def test_the_panels_review_switch_sets_the_conversations_choice(client: Client):
    source = make_source()
    client.force_login(source.owner)
    client.post(reverse("handoff_web:session_action", args=[source.pk, "review-on"]))
    assert operations.status(source.pk)["review"] is True
    client.post(reverse("handoff_web:session_action", args=[source.pk, "review-off"]))
    assert operations.status(source.pk)["review"] is False


def test_every_open_tab_gets_the_review_form_in_the_handoff_phase_event(client: Client):
    source = make_source()
    operations.review_on(source.pk)
    operations.run_attempt(source.pk, manual=True)
    frames = events_after(source.owner.pk, 0)
    assert not isinstance(frames, Resync)
    [last] = [f for f in frames if f["kind"] == HandoffKind.HANDOFF_PHASE][-1:]
    html = "".join(f["html"] for f in last["payload"]["fragments"])
    assert "A handoff is ready for review" in html
    assert 'id="handoff-review" hx-preserve="true"' in html


def test_headings_step_down_one_level_at_a_time_while_a_review_waits(client: Client, waiting):
    source, _record = waiting
    html = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    levels = [int(level) for level in re.findall(r"<h([1-6])\b", html)]
    assert "A handoff is ready for review" in html and 1 in levels
    assert all(later <= earlier + 1 for earlier, later in itertools.pairwise(levels)), levels
