"""Seed 000, Brief schema and the summary call; the offline summarizer (DESIGN.md, run modes)."""

from __future__ import annotations

import json

import pytest
from handoff_support import RecordingLLM, make_source, recording_llm

from handoff import summarizer
from handoff.core.brief import BriefError, validate_brief
from handoff.exceptions import ServiceUnavailable
from host import log
from host.services import LLM, SessionController

__all__ = ["recording_llm"]


def entry(role: str, content: str, kind: str = "", tool: str = "") -> dict[str, str]:
    return {"role": role, "source_kind": kind or role, "content": content, "tool_name": tool}


CONTEXT = [
    entry("compaction", "Earlier: set up the repo at /srv/app.", "compaction"),
    entry("user", "Let's use pytest for everything. Never push to main."),
    entry("assistant", "Set up CI. See https://ci.example.com/build/42 for the run."),
    entry("tool", "collected 12 items\n12 passed in 0.8s", "tool", "bash"),
    entry("user", "Now port /srv/app/src/parser.py to streaming and keep the API stable."),
    entry(
        "assistant",
        "Started the port. The lexer still fails on unicode input.\n"
        "- Next: fix the lexer in /srv/app/src/lexer.py\n"
        "Not sure whether the CLI needs changes?",
    ),
]


def test_offline_goal_is_the_latest_user_objective():
    brief = summarizer.offline_brief(CONTEXT, cwd="/srv/app")
    assert brief["goal"].startswith("Now port /srv/app/src/parser.py to streaming")


def test_offline_artifacts_are_the_paths_and_urls_that_occur():
    artifacts = summarizer.offline_brief(CONTEXT, cwd="/srv/app")["artifacts"]
    assert artifacts[0] == "workspace: /srv/app"
    assert {"/srv/app/src/parser.py", "/srv/app/src/lexer.py"} <= set(artifacts)
    assert "https://ci.example.com/build/42" in artifacts


def test_offline_decisions_and_constraints_come_from_user_messages():
    brief = summarizer.offline_brief(CONTEXT, cwd="")
    assert "Let's use pytest for everything." in brief["decisions"]
    assert "Never push to main." in brief["constraints"]


def test_offline_verified_comes_from_passing_tool_results():
    assert summarizer.offline_brief(CONTEXT, cwd="")["verified"] == ["12 passed in 0.8s"]


def test_offline_pending_and_next_steps_come_from_the_latest_turns():
    brief = summarizer.offline_brief(CONTEXT, cwd="")
    assert "The lexer still fails on unicode input." in brief["pending"]
    assert brief["next_steps"] == ["- Next: fix the lexer in /srv/app/src/lexer.py"]
    assert "Not sure whether the CLI needs changes?" in brief["uncertainties"]


def test_offline_goal_after_a_short_follow_up_comes_from_the_compaction_summary():
    context = [
        entry(
            "compaction",
            "Summary follows.\n1. **User's initial request**: implement gqc",
            "compaction",
        ),
        entry("user", "did you push?"),
    ]
    goal = summarizer.offline_brief(context, cwd="")["goal"]
    assert goal == "1. User's initial request: implement gqc (latest user message: did you push?)"


def test_offline_artifacts_leave_out_system_paths_and_api_routes():
    text = "ran /usr/bin/env > /dev/null; GET /api/items; wrote /srv/app/notes.md and /a/b/c/d"
    assert summarizer.find_artifacts([text]) == ["/a/b/c/d", "/srv/app/notes.md"]


def test_offline_verified_ignores_file_content_lines():
    context = [entry("tool", "  192→ {:ok, view} = live(conn)\n3 tests, 0 failures: OK", "tool")]
    assert summarizer.offline_brief(context, cwd="")["verified"] == ["3 tests, 0 failures: OK"]


def test_offline_brief_of_an_empty_context_is_still_valid():
    brief = summarizer.offline_brief([], cwd="")
    assert validate_brief(brief) == brief
    assert brief["goal"] == "Continue the work of the previous session."


def test_offline_brief_is_capped_below_the_brief_limit():
    huge = [entry("user", f"Please edit /data/file_{i}.py now " + "x" * 2000) for i in range(400)]
    brief = summarizer.offline_brief(huge, cwd="/data")
    assert len(json.dumps(brief, ensure_ascii=False)) <= 40_000


@pytest.mark.django_db
def test_only_the_effective_context_after_the_last_compaction_is_read():
    source = make_source(turns=0)
    log.append_message(source, role="user", source_kind="user", content="Old goal: write /old/a.py")
    log.record_compaction(source, "Summary: the old goal is done.", trigger="manual")
    log.append_message(
        source,
        role="user",
        source_kind="user",
        content="New goal: fix the crash in /new/b.py on empty input",
    )
    context = SessionController().effective_context(source)
    brief = summarizer.offline_brief(context, cwd="")
    assert context[0] == entry("system", "Summary: the old goal is done.", "compaction")
    assert brief["goal"] == "New goal: fix the crash in /new/b.py on empty input"
    assert "/old/a.py" not in brief["artifacts"]


@pytest.mark.django_db
def test_the_summary_is_one_json_call_without_tools(recording_llm):
    source = make_source()
    brief = summarizer.summarize(source, CONTEXT)
    (call,) = recording_llm.calls
    assert (call["max_tokens"], call["timeout"], call["purpose"]) == (6000, 180.0, "compaction")
    assert "JSON object only" in call["system"] and "do not answer the user" in call["system"]
    assert brief["goal"] == "Ship the parser"


@pytest.mark.django_db
def test_a_fenced_answer_is_accepted(recording_llm):
    recording_llm.answer = "```json\n" + RecordingLLM.DEFAULT_ANSWER + "\n```"
    assert summarizer.summarize(make_source(), CONTEXT)["goal"] == "Ship the parser"


@pytest.mark.django_db
def test_an_answer_that_is_not_a_brief_is_refused(recording_llm):
    recording_llm.answer = "Sure! Here is the summary you asked for."
    with pytest.raises(BriefError, match="not valid JSON"):
        summarizer.summarize(make_source(), CONTEXT)


@pytest.mark.django_db
def test_no_llm_service_means_no_summary(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": None}
    with pytest.raises(ServiceUnavailable, match="no llm service"):
        summarizer.summarize(make_source(), CONTEXT)


def test_the_prompt_never_exceeds_the_models_window():
    long_context = [entry("user", "y" * 5000 + f" end of turn {i}") for i in range(200)]
    for window in (8_000, 32_000, 200_000):
        prompt = summarizer.build_prompt(long_context, cwd="/w", window=window)
        used = summarizer.estimate_tokens(prompt) + summarizer.estimate_tokens(
            summarizer.SYSTEM_PROMPT
        )
        assert used + summarizer.MAX_OUTPUT_TOKENS <= window
        assert prompt.endswith("end of turn 199") and "earlier entries omitted" in prompt


def test_one_entry_longer_than_the_window_is_cut_to_its_end():
    prompt = summarizer.build_prompt(
        [entry("user", "a" * 100_000 + "THE END")], cwd="", window=8_000
    )
    assert prompt.endswith("THE END")
    assert summarizer.estimate_tokens(prompt) < 8_000


@pytest.mark.django_db
def test_the_host_llm_calls_the_endpoint_with_json_only_and_purpose(fake_llm):
    fake_llm.answer = RecordingLLM.DEFAULT_ANSWER
    brief = summarizer.summarize(make_source(), CONTEXT)
    (request,) = fake_llm.requests
    body = request["body"]
    assert body["max_tokens"] == 6000
    assert body["response_format"] == {"type": "json_object"}
    assert "tools" not in body
    assert request["headers"]["x-handoff-purpose"] == "compaction"
    assert brief["artifacts"] == ["/work/demo/src/parser.py"]
    assert LLM().offline is False
