"""host.agent: the offline agent, the endpoint path (a local fake server), the summary call."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import AbstractBaseUser

from host import agent, log
from host.models import Session
from host.services import LLM
from host.sessions import create_session
from host.signals import offline_reply
from host.usage import Usage, context_tokens, session_usage

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(django_user_model: Any) -> Session:
    owner: AbstractBaseUser = django_user_model.objects.create_user("ada")
    return create_session(owner, cwd="/srv/app", model="gpt-4o")


def say(session: Session, content: str, *, source_kind: str = "user") -> None:
    log.append_message(session, role="user", source_kind=source_kind, content=content)


def test_the_offline_agent_acknowledges_a_message_and_says_it_is_offline(session: Session):
    say(session, "Please refactor the parser in /srv/app/parser.py")
    answer = agent.reply(session)
    assert answer.role == "assistant" and answer.model == agent.OFFLINE_MODEL
    assert answer.content.startswith("Offline agent: received your message")
    assert "Please refactor the parser in /srv/app/parser.py" in answer.content
    assert "offline acknowledgement" in answer.content


def test_the_offline_agent_cuts_a_long_message_to_an_excerpt(session: Session):
    say(session, "word " * 500)
    answer = agent.reply(session)
    assert "…" in answer.content
    assert len(answer.content) < 400


def test_the_offline_agent_acknowledges_a_brief_with_goal_and_first_next_step(session: Session):
    say(
        session,
        "# Handoff brief from “Work”\n\n**Goal:** Finish the importer.\n\n## Pending\n- docs\n\n"
        "## Next steps\n- Fix the Codex reader\n- Write the README\n",
        source_kind="plugin",
    )
    answer = agent.reply(session)
    assert answer.content == (
        "Offline agent: received the handoff brief. Goal: Finish the importer. "
        "I will continue with: Fix the Codex reader. "
        "(No model is configured, so this is an offline acknowledgement.)"
    )


@pytest.fixture
def no_offline_reply() -> Any:
    """The host without the handoff's ``offline_reply`` receiver."""
    receiver = offline_reply.receivers[:]
    offline_reply.disconnect(dispatch_uid="handoff.offline_reply")
    yield
    offline_reply.receivers[:] = receiver
    offline_reply.sender_receivers_cache.clear()


@pytest.mark.usefixtures("no_offline_reply")
def test_without_a_plugin_receiver_the_offline_agent_acknowledges_a_brief_as_a_message(
    session: Session,
):
    say(session, "# Handoff brief\n\n**Goal:** Finish the importer.\n", source_kind="plugin")
    answer = agent.reply(session)
    assert answer.content.startswith("Offline agent: received your message “# Handoff brief")
    assert "Goal: Finish the importer." not in answer.content


def test_the_agent_reads_no_handoff_setting(session: Session, fake_llm: Any, settings: Any):
    for name in [n for n in dir(django_settings) if n.startswith("HANDOFF_")]:
        delattr(settings, name)
    say(session, "hello")
    answer = agent.reply(session)
    assert answer.model == "fake-model" and agent.llm_configured()


def test_the_offline_usage_is_the_measured_prompt_so_the_context_figure_grows(session: Session):
    say(session, "x" * 4000)
    agent.reply(session)
    first = context_tokens(session)
    say(session, "y" * 4000)
    agent.reply(session)
    assert first >= 1000
    assert context_tokens(session) > first + 900
    assert session_usage(session).total > 0


def test_the_prompt_is_the_effective_context_with_the_last_summary(session: Session):
    say(session, "old question")
    log.record_compaction(session, "the earlier work in short", trigger="manual")
    say(session, "new question")
    chat = agent.prompt_messages(session, agent.effective_context(session))
    assert chat[0]["role"] == "system"
    assert "the earlier work in short" in chat[0]["content"]
    assert "Working directory: /srv/app" in chat[0]["content"]
    assert chat[1:] == [{"role": "user", "content": "new question"}]


def chat_of(*sizes: int) -> list[dict[str, str]]:
    system = {"role": "system", "content": "s" * 40}
    return [system] + [{"role": "user", "content": f"{i}" * n} for i, n in enumerate(sizes)]


def test_fit_prompt_clips_an_oversized_message_and_keeps_the_older_ones():
    chat = chat_of(400, 400, 960_000, 400)
    fitted = agent.fit_prompt(chat, 4_000)
    assert (fitted.clipped, fitted.dropped) == (1, 0)
    assert [m["content"] for m in fitted.messages[:3]] == [c["content"] for c in chat[:3]]
    assert "characters clipped to fit the model's window …]" in fitted.messages[3]["content"]
    assert fitted.messages[-1] == chat[-1]
    assert agent.estimate_tokens(fitted.messages) <= 4_000
    assert fitted.full_tokens == agent.estimate_tokens(chat)


def test_fit_prompt_drops_the_oldest_only_when_clipping_is_not_enough():
    chat = chat_of(*[100] * 8)
    fitted = agent.fit_prompt(chat, 120)
    assert (fitted.clipped, fitted.dropped) == (0, 4)
    assert fitted.messages == [chat[0], *chat[-4:]]


def test_fit_prompt_leaves_a_prompt_that_fits_or_an_unknown_budget_alone():
    chat = chat_of(400, 960_000)
    assert agent.fit_prompt(chat, 0).messages == chat
    assert not agent.fit_prompt(chat_of(400), 10_000).cut


def test_a_huge_tool_result_does_not_shrink_the_context_figure(
    session: Session, fake_llm: Any, settings: Any
):
    settings.HOST_CONTEXT_WINDOWS = {"fake-model": 32_000}
    fake_llm.usage = {"prompt_tokens": 70, "completion_tokens": 10, "total_tokens": 80}
    say(session, "Find the slow query in the report log")
    log.append_message(
        session, role="assistant", source_kind="assistant", content="Reading.",
        usage=Usage(uncached_input=20_000, output=10),
    )  # fmt: skip
    log.append_message(
        session, role="tool", source_kind="tool", content="z" * 960_000, tool_name="Bash"
    )
    say(session, "What did you find?")

    agent.reply(session)

    sent = [m["content"] for m in fake_llm.requests[-1]["body"]["messages"]]
    assert sent[1] == "Find the slow query in the report log" and sent[-1] == "What did you find?"
    assert "characters clipped to fit the model's window" in sent[3]
    assert context_tokens(session) >= 240_000
    notice = session.messages.get(role="system").content
    assert notice.startswith("History cut to fit fake-model's 32,000-token window: 1 oversized")


def test_the_endpoint_answers_and_its_usage_buckets_are_recorded(session: Session, fake_llm: Any):
    fake_llm.answer = "Refactored."
    say(session, "refactor it")

    answer = agent.reply(session)

    assert answer.content == "Refactored." and answer.model == "fake-model"
    assert (answer.uncached_input_tokens, answer.cache_read_tokens, answer.output_tokens) == (
        1000,
        200,
        80,
    )
    assert answer.cache_write_tokens == 0
    assert context_tokens(session) == 1200
    request = fake_llm.requests[-1]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer test-key"
    body = request["body"]
    assert body["model"] == "fake-model"
    assert body["messages"][-1] == {"role": "user", "content": "refactor it"}
    assert "tools" not in body and "response_format" not in body


def test_an_endpoint_without_usage_leaves_the_buckets_empty(session: Session, fake_llm: Any):
    fake_llm.usage = None
    say(session, "hi")
    answer = agent.reply(session)
    assert answer.uncached_input_tokens is None
    assert session_usage(session).total == 0


def test_an_endpoint_failure_raises_and_appends_nothing(session: Session, fake_llm: Any):
    fake_llm.status = 500
    say(session, "hi")
    with pytest.raises(openai.APIError):
        agent.reply(session)
    assert len(fake_llm.requests) == 1
    assert not session.messages.filter(role="assistant").exists()


def test_an_empty_answer_is_an_error(session: Session, fake_llm: Any):
    fake_llm.answer = "  "
    say(session, "hi")
    with pytest.raises(agent.LLMError, match="empty answer"):
        agent.reply(session)


def summary_call(max_tokens: int = 10, timeout: float = 1) -> str:
    """The summary's model call as the handoff makes it (``host.services.LLM.complete``)."""
    return LLM().complete(
        system="JSON only",
        prompt="log",
        max_tokens=max_tokens,
        timeout=timeout,
        purpose="compaction",
    )


def test_the_summary_call_is_one_json_call_without_tools(fake_llm: Any):
    fake_llm.answer = '{"goal": "g"}'
    text = summary_call(max_tokens=6000, timeout=180)
    assert text == '{"goal": "g"}'
    assert len(fake_llm.requests) == 1
    request = fake_llm.requests[0]
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert request["body"]["max_tokens"] == 6000
    assert "tools" not in request["body"]
    assert request["headers"]["x-handoff-purpose"] == "compaction"


def test_the_summary_call_without_an_endpoint_raises(settings: Any):
    settings.HOST_LLM_BASE_URL = ""
    with pytest.raises(agent.LLMUnavailable, match="HANDOFF_LLM_BASE_URL"):
        summary_call()


def test_the_summary_call_raises_on_a_server_error(fake_llm: Any):
    fake_llm.status = 503
    with pytest.raises(openai.APIError):
        summary_call(timeout=5)
    assert len(fake_llm.requests) == 1


def test_the_offline_agent_does_not_answer_the_same_input_twice(session: Session):
    say(session, "first")
    agent.reply(session)
    log.append_message(session, role="system", source_kind="system", content="a notice")
    assert agent.reply(session).content.startswith("Offline agent: there is no new input")


def test_the_offline_prompt_continues_from_the_latest_recorded_call(session: Session):
    # A conversation whose last real call had a 20 000-token prompt and a 500-token answer:
    # the offline agent's next prompt is that call plus its answer plus what came after it.
    log.append_message(
        session,
        role="assistant",
        source_kind="assistant",
        content="earlier answer",
        usage=Usage(uncached_input=1_000, output=500, cache_read=18_000, cache_write=1_000),
    )
    say(session, "x" * 400)  # 100 tokens by the meter's heuristic
    agent.reply(session)
    assert context_tokens(session) == 20_000 + 500 + 100
