"""The context meter on the status report, the API's session detail and the panel."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from handoff_support import MODEL, make_source, make_user, talked

from handoff import metrics, operations, services
from host import agent, compaction, log
from host.models import Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_window() -> None:
    """The demo's numbers: a 32 000-token window, so the trigger point is 24 000; the global
    automatic handoff switch on."""
    services.settings_store().save(context_windows={MODEL: 32_000}, auto_handoff=True)


def automatic_source(**fields: Any) -> Any:
    """A main (``make_source``) whose own automatic handoff switch is on."""
    source = make_source(**fields)
    operations.act("enable", source.pk)
    return source


@pytest.mark.usefixtures("small_window")
def test_status_meter_names_window_trigger_point_and_what_is_left() -> None:
    source = automatic_source(turns=6, tokens=22_920)
    meter = operations.status(source.pk)["meter"]
    assert meter["tokens"] == {"value": 22_920, "basis": "context", "label": "exact"}
    assert (meter["window"], meter["trigger_point"], meter["tokens_to_go"]) == (
        32_000,
        24_000,
        1_080,
    )
    assert (meter["turns"], meter["min_turns"]) == (6, 4)
    assert (meter["compactions"], meter["max_compactions"]) == (0, 3)
    assert meter["first"] == "context-pressure" and not meter["due"]
    assert meter["summary"].startswith("Hands off at 24,000 tokens: 1,080 to go")


@pytest.mark.usefixtures("small_window")
def test_the_meter_follows_the_settings_read_now() -> None:
    source = automatic_source(turns=6, tokens=22_920)
    services.settings_store().save(handoff_ratio=0.5)
    meter = operations.status(source.pk)["meter"]
    assert meter["trigger_point"] == 16_000 and meter["due"]


def test_unavailable_meter_says_automatic_handoff_is_off_and_why() -> None:
    source = create_session(make_source().owner, cwd="/w")
    meter = operations.status(source.pk)["meter"]
    assert not meter["automatic"]
    assert meter["summary"].startswith("Automatic handoff is off for this conversation: no token")


@pytest.mark.usefixtures("small_window")
def test_api_session_detail_carries_the_meter(client: Any) -> None:
    source = make_source(turns=6, tokens=22_920)
    client.force_login(source.owner)
    detail = client.get(f"/api/sessions/{source.pk}").json()
    assert detail["meter"] == detail["handoff"]["meter"]
    assert detail["meter"]["trigger_point"] == 24_000


@pytest.mark.usefixtures("small_window")
def test_conversation_page_shows_the_meter_in_words(client: Any) -> None:
    source = automatic_source(turns=6, tokens=22_920)
    client.force_login(source.owner)
    html = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    assert f'id="handoff-meter-{source.pk}"' in html
    assert "of 24,000 to hand off" in html
    assert "6 turns (minimum 4)" in html and "0 of 3 compactions" in html
    assert "Hands off at 24,000 tokens: 1,080 to go" in html


def test_conversation_page_says_why_automatic_handoff_is_off(client: Any) -> None:
    source = create_session(make_source().owner, cwd="/w")
    client.force_login(source.owner)
    html = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    assert "Automatic handoff is off for this conversation" in html
    assert "the model reported no usage and the meter measured nothing" in html


@pytest.mark.usefixtures("small_window")
def test_the_meter_says_why_nothing_hands_off_by_itself_instead_of_due() -> None:
    source = make_source(turns=6, tokens=30_000)
    meter = operations.status(source.pk)["meter"]
    assert not meter["due"]
    assert meter["summary"].startswith("Hands off only when asked (/handoff now)")

    operations.act("enable", source.pk)
    services.settings_store().save(auto_handoff=False)
    meter = operations.status(source.pk)["meter"]
    assert not meter["due"] and "Due" not in meter["summary"]
    assert meter["summary"].startswith("Hands off by itself only once the global switch")

    services.settings_store().save(auto_handoff=True)
    assert operations.status(source.pk)["meter"]["due"]


@pytest.mark.usefixtures("small_window")
def test_a_handed_off_conversation_s_meter_says_it_continues_in_its_successor() -> None:
    source = automatic_source(turns=6, tokens=30_000)
    operations.run_attempt(source.pk, manual=True)
    meter = operations.status(source.pk)["meter"]
    live = metrics.context_meter(source, services.load_settings())
    for shown in (meter, live):
        assert not shown["due"]
        assert shown["summary"].startswith("Handed off to its successor: no further handoff")


def long_history() -> Session:
    """A session on ``fake-model`` whose 200 000-token window is set in Settings, holding about
    320 000 tokens (8 × 40 000 of tool output) and a last question."""
    services.settings_store().save(context_windows={"fake-model": 200_000})
    session = talked(make_user(), "Long review", content="Review the whole repository")
    log.select_model(session, "fake-model")
    for part in range(8):
        log.append_message(
            session, role="tool", source_kind="tool", content=f"{part}" * 160_000, tool_name="Read"
        )
    log.append_message(session, role="user", source_kind="user", content="What did you find?")
    return session


def sent_tokens(request: dict[str, Any]) -> float:
    """The meter's estimate (characters / 4) of what one model request sent, in tokens."""
    return sum(len(m["content"]) for m in request["body"]["messages"]) / 4


def test_the_agent_fits_its_model_call_to_the_window_the_meter_shows(fake_llm: Any) -> None:
    session = long_history()

    agent.reply(session)

    assert sent_tokens(fake_llm.requests[-1]) <= 200_000 - agent.REPLY_MAX_TOKENS
    assert fake_llm.requests[-1]["body"]["messages"][-1]["content"] == "What did you find?"
    assert operations.status(session.pk)["meter"]["window"] == 200_000
    notice = session.messages.get(role="system").content
    assert notice.startswith("History cut to fit fake-model's 200,000-token window")


def test_the_compaction_summary_call_fits_the_same_window(fake_llm: Any) -> None:
    session = long_history()

    compaction.compact(session, trigger="manual")

    assert fake_llm.requests[-1]["headers"]["x-handoff-purpose"] == "compaction"
    assert sent_tokens(fake_llm.requests[-1]) <= 200_000 - compaction.SUMMARY_MAX_TOKENS
