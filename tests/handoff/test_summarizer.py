"""docs/spec.md, Brief: the schema and the summary call; the offline summarizer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from handoff_support import RecordingLLM, make_source

from handoff import summarizer
from handoff.core.brief import BriefError
from handoff.exceptions import ServiceUnavailable
from host import log
from host.services import LLM, SessionController


def entry(role: str, content: str, kind: str = "", tool: str = "") -> dict[str, str]:
    return {"role": role, "source_kind": kind or role, "content": content, "tool_name": tool}


CONTEXT = [
    entry("compaction", "Earlier: set up the repo at /srv/app.", "compaction"),
    entry("user", "Let's use pytest for everything. Never push to main."),
    entry("assistant", "Set up CI. See https://ci.example.com/build/42 for the run."),
    entry("user", "Now port /srv/app/src/parser.py to streaming and keep the API stable."),
    entry("assistant", "Started the port. The lexer still fails on unicode input."),
]


@pytest.mark.django_db
def test_offline_summarizer_reads_the_effective_context_after_the_last_compaction():
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
    brief = summarizer.summarize(source, context)
    assert context[0] == entry("system", "Summary: the old goal is done.", "compaction")
    assert brief["goal"] == "New goal: fix the crash in /new/b.py on empty input"
    assert not any("/old/a.py" in item for item in brief["artifacts"])


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
    for window in (16_000, 32_000, 200_000):
        prompt = summarizer.build_prompt(long_context, cwd="/w", window=window)
        used = summarizer.generous_tokens(prompt.text) + summarizer.generous_tokens(
            summarizer.SYSTEM_PROMPT
        )
        assert used + summarizer.MAX_OUTPUT_TOKENS <= window
        assert prompt.text.endswith("end of turn 199") and prompt.dropped > 0
        assert f"({prompt.dropped} earlier entries omitted" in prompt.text


def test_the_prompt_starts_with_the_digest_of_the_logs_structure():
    context = [
        entry("user", "Make the parser stream."),
        entry("assistant", '{"file_path":"/srv/app/parser.py","content":"x"}', tool="Write"),
        entry("tool", "File created successfully at: /srv/app/parser.py", tool="Write"),
    ]
    text = summarizer.build_prompt(context, cwd="/srv/app", window=32_000).text
    digest = text.index("Digest parsed from the log's structure")
    assert digest < text.index("Conversation since the last compaction")
    assert "/srv/app/parser.py — written" in text[digest:]


def test_file_edits_before_the_compaction_reach_the_digest_but_not_the_conversation():
    edit = entry("assistant", '{"file_path":"/srv/app/store.py","content":"x"}', tool="Write")
    context: list[dict[str, Any]] = [
        {**edit, "compacted": True},
        {**entry("tool", "File created successfully", tool="Write"), "compacted": True},
        entry(
            "system",
            "Summary:\n1. Primary Request and Intent:\n   Rename the store.",
            kind="compaction",
        ),
        entry("assistant", "Renamed."),
    ]
    text = summarizer.build_prompt(context, cwd="/srv/app", window=32_000).text
    conversation = text.index("Conversation since the last compaction")
    assert "/srv/app/store.py — written" in text[:conversation]
    assert "store.py" not in text[conversation:]


def test_a_huge_tool_result_is_clipped_with_a_marker_and_older_entries_are_kept():
    context = [
        entry("user", "Find the slow query."),
        entry("assistant", "Reading the log."),
        entry("tool", "HEAD" + "z" * 960_000 + "TAIL", tool="Bash"),
        entry("assistant", "The slow query is in reports.py."),
    ]
    prompt = summarizer.build_prompt(context, cwd="", window=128_000)
    assert (prompt.clipped, prompt.dropped) == (1, 0)
    assert "Find the slow query." in prompt.text and "Reading the log." in prompt.text
    assert "characters clipped …]" in prompt.text
    assert "HEAD" in prompt.text and "TAIL" in prompt.text
    assert prompt.text.endswith("The slow query is in reports.py.")
    assert summarizer.generous_tokens(prompt.text) < 128_000 - summarizer.MAX_OUTPUT_TOKENS


@pytest.mark.django_db
def test_a_brief_written_from_a_cut_history_says_so(recording_llm):
    recording_llm.context_window = 32_000
    context = [entry("user", "Find the slow query."), entry("tool", "z" * 500_000, tool="Bash")]
    brief = summarizer.summarize(make_source(), context)
    assert brief["uncertainties"] == [
        "The summary model saw a cut history: 1 oversized entries clipped, 0 older entries "
        "left out to fit its window; the digest covers them."
    ]


@pytest.mark.django_db
def test_a_brief_written_from_the_whole_history_has_no_cut_notice(recording_llm):
    assert summarizer.summarize(make_source(), CONTEXT)["uncertainties"] == []


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


@pytest.mark.django_db
def test_with_a_model_the_request_carries_the_digest_and_asks_for_rules_verbatim(fake_llm):
    """The summary call gets the same facts as the offline brief."""
    fake_llm.answer = RecordingLLM.DEFAULT_ANSWER
    source = make_source(turns=0)
    rule = log.append_message(
        source, role="user", source_kind="user", content="Fix the parser. Never push to main."
    )
    log.append_message(
        source,
        role="assistant",
        source_kind="assistant",
        content='{"command": "pytest -q"}',
        tool_name="Bash",
    )
    ran = log.append_message(
        source, role="tool", source_kind="tool", content="3 passed in 0.1s", tool_name="Bash"
    )

    summarizer.summarize(source, SessionController().effective_context(source))

    (request,) = fake_llm.requests
    system, user = (m["content"] for m in request["body"]["messages"])
    assert "verbatim" in system and '"stated, not verified: …"' in system
    digest = user[user.index("Digest parsed") : user.index("Conversation since")]
    assert f"Never push to main. (log #{rule.seq})" in digest
    assert f"`pytest -q` → 3 passed in 0.1s (log #{ran.seq})" in digest
    assert f"[#{ran.seq} tool/tool Bash] 3 passed in 0.1s" in user


def test_the_digest_is_capped_so_the_prompt_fits_at_three_quarters_of_the_window():
    """The call happens at 75 % of the window: a digest near the brief's cap (12 long rules
    and decisions, 40 files) leaves room for the latest entries, and what it cut is stated."""
    window = 16_000
    files = [f"/w/{'deep/' * 20}module_{i}.py" for i in range(40)]
    context = [
        *(
            entry("user", f"Never touch {path}, go with httpx instead of requests.")
            for path in files
        ),
        *(
            entry("assistant", json.dumps({"file_path": path, "content": "x"}), tool="Write")
            for path in files
        ),
        *(entry("user", f"Turn {i}: " + "z" * 300) for i in range(window // 4 * 3 * 3 // 320)),
    ]

    prompt = summarizer.build_prompt(context, cwd="/w", window=window)

    used = summarizer.generous_tokens(prompt.text) + summarizer.generous_tokens(
        summarizer.SYSTEM_PROMPT
    )
    assert used + summarizer.MAX_OUTPUT_TOKENS <= window
    digest = prompt.text[: prompt.text.index("Conversation since")]
    assert "items left out to fit the window" in digest
    assert len(digest) <= (window - summarizer.MAX_OUTPUT_TOKENS) // 3 * 3
    assert '"constraints": [' in digest and prompt.text.endswith(context[-1]["content"])


@pytest.mark.django_db
def test_with_a_model_the_request_carries_error_flags_file_states_and_what_verified_means(
    fake_llm,
):
    fake_llm.answer = RecordingLLM.DEFAULT_ANSWER
    source = make_source(turns=0)
    log.append_message(source, role="user", source_kind="user", content="Commit the export.")
    for command, output, error in [
        ("mv export.py src/export.py", "", False),
        ('git add src/export.py && git commit -m "Export"', "ruff....Failed\nFound 1 error.", True),
        ("make docs | tail -1", "Writing docs/index.html", False),
    ]:
        call = json.dumps({"command": command})
        log.append_message(
            source, role="assistant", source_kind="assistant", content=call, tool_name="Bash"
        )
        rejected = log.append_message(
            source, role="tool", source_kind="tool", content=output, tool_name="Bash",
            tool_error=error,
        )  # fmt: skip
        if error:
            flagged = rejected

    summarizer.summarize(source, SessionController().effective_context(source))

    (request,) = fake_llm.requests
    system, user = (m["content"] for m in request["body"]["messages"])
    assert summarizer.VERIFIED_MEANS in system
    digest = json.loads(user[user.index("{") : user.index("\n\nConversation since")])
    assert digest["verified"] == []
    assert digest["pending"] == [
        '`git add src/export.py && git commit -m "Export"` → Found 1 error. — its latest run '
        f"failed (log #{flagged.seq})"
    ]
    assert f"{source.cwd}/src/export.py — moved from {source.cwd}/export.py" in digest["artifacts"]
    assert digest["uncertainties"][0].startswith("ran, outcome not shown: `make docs | tail -1`")
    assert f"[#{flagged.seq} tool/tool Bash error] ruff....Failed" in user
