"""``host.importers`` on small hand-written logs: the counting and classification rules
(docs/design.md, Turns)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from handoff import operations
from host import log
from host.importers import (
    TranscriptError,
    detect_format,
    import_report,
    import_transcript,
)
from host.importers.claude import classify_user_text
from host.importers.writer import title_of
from host.models import Session, SourceKind

SESSION = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def owner(db: None) -> User:
    return get_user_model().objects.create_user("ada", password="x")


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def claude_line(kind: str, uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    message.update(extra.pop("message", {}))
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": SESSION,
        "cwd": "/work/demo",
        "isSidechain": False,
        "message": message,
        **extra,
    }


def reply(uuid: str, message_id: str, block: dict[str, Any], usage: dict[str, int]) -> dict:
    return claude_line(
        "assistant",
        uuid,
        [block],
        message={"id": message_id, "model": "claude-opus-4-6", "usage": usage},
    )


def usage(given: int, output: int, read: int = 0, write: int = 0) -> dict[str, int]:
    return {
        "input_tokens": given,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }


def codex_line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-05-11T08:27:17.490Z", "type": kind, "payload": payload}


def token_count(given: int, cached: int, output: int) -> dict[str, Any]:
    total = {"input_tokens": given, "cached_input_tokens": cached, "output_tokens": output}
    return codex_line(
        "event_msg",
        {
            "type": "token_count",
            "info": {
                "total_token_usage": total,
                "last_token_usage": total,
                "model_context_window": 200_000,
            },
        },
    )


def codex_start() -> list[dict[str, Any]]:
    return [
        codex_line("session_meta", {"id": "rollout-1", "cwd": "/work/codex"}),
        codex_line("turn_context", {"cwd": "/work/codex", "model": "gpt-5.5"}),
        codex_line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ),
        codex_line("event_msg", {"type": "user_message", "message": "hi"}),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hello"}],
            },
        ),
    ]


@pytest.mark.parametrize(
    ("text", "is_meta", "expected"),
    [
        ("Fix the login bug", False, (SourceKind.USER, True, "Fix the login bug")),
        ("Split complex tasks", True, (SourceKind.SYSTEM, False, "Split complex tasks")),
        (
            "<task-notification>\n<status>completed</status>",
            False,
            (SourceKind.SYSTEM, True, "<task-notification>\n<status>completed</status>"),
        ),
        (
            "[Request interrupted by user for tool use]",
            False,
            (SourceKind.SYSTEM, False, "[Request interrupted by user for tool use]"),
        ),
        (
            "<command-message>x is running…</command-message>\n<command-name>/orchestrator"
            "</command-name>\n<command-args>build a TODO app</command-args>",
            False,
            (SourceKind.USER, True, "/orchestrator build a TODO app"),
        ),
        (
            "<command-name>/model</command-name>\n<command-args></command-args>",
            False,
            (SourceKind.SYSTEM, False, "/model"),
        ),
    ],
)
def test_classify_user_text(text: str, is_meta: bool, expected: tuple[str, bool, str]) -> None:
    assert classify_user_text(text, is_meta=is_meta) == expected


def test_title_is_the_first_line_cut_to_80_characters() -> None:
    assert title_of("\n  Fix the bug  \nmore detail") == "Fix the bug"
    long = title_of("x" * 200)
    assert len(long) == 80
    assert long.endswith("…")


def test_detect_format(tmp_path: Path) -> None:
    codex = write_jsonl(tmp_path / "c.jsonl", codex_start())
    claude = write_jsonl(tmp_path / "a.jsonl", [{"type": "summary", "summary": "s"}])
    other = write_jsonl(tmp_path / "o.jsonl", [{"type": "unknown"}])
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n", encoding="utf-8")

    assert detect_format(codex) == "codex"
    assert detect_format(claude) == "claude-code"
    with pytest.raises(TranscriptError, match=r"o\.jsonl:1: neither"):
        detect_format(other)
    with pytest.raises(TranscriptError, match="no valid record in this transcript"):
        detect_format(empty)


def test_claude_response_counts_once_with_its_last_lines_usage(tmp_path: Path, owner: User) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            claude_line("user", "u1", "Read two files"),
            reply("a1", "msg_1", {"type": "text", "text": "Reading."}, usage(3, 1, 100, 50)),
            reply(
                "a2",
                "msg_1",
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
                usage(3, 1, 100, 50),
            ),
            claude_line(
                "user", "u2", [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]
            ),
            reply(
                "a3",
                "msg_1",
                {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/b"}},
                usage(3, 40, 100, 50),
            ),
            reply("a4", "msg_2", {"type": "text", "text": "Done."}, usage(2, 7, 160, 0)),
            claude_line(
                "assistant",
                "a5",
                [{"type": "text", "text": "No response requested."}],
                message={"id": "msg_3", "model": "<synthetic>", "usage": usage(0, 0)},
            ),
        ],
    )

    [main] = import_transcript(path, owner)

    report = import_report(main)
    assert report["usage"] == {
        "uncached_input": 5,
        "output": 47,
        "cache_read": 260,
        "cache_write": 50,
    }
    assert report["tokens"]["context"]["value"] == 162
    assert report["turns"] == 2  # the prompt, and the Read result the next call answers
    assert main.model == "claude-opus-4-6"
    tool_call = main.messages.get(external_id="a2")
    assert (tool_call.tool_name, tool_call.content) == ("Read", '{"file_path":"/a"}')
    assert main.messages.get(external_id="u2").tool_name == "Read"
    assert main.messages.get(external_id="a3").output_tokens == 40


def test_claude_boundary_without_summary_still_counts(tmp_path: Path, owner: User) -> None:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "sessionId": SESSION,
        "compactMetadata": {"trigger": "manual", "preTokens": 1000},
    }
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [claude_line("user", "u1", "first"), boundary, claude_line("user", "u2", "second")],
    )

    [main] = import_transcript(path, owner)

    assert main.compactions == 1
    assert main.events.get(kind="compaction").data == {"trigger": "manual", "summary": ""}
    assert list(main.messages.values_list("content", "compacted")) == [
        ("first", True),
        ("second", False),
    ]


def test_codex_usage_is_the_increase_of_the_cumulative_totals(tmp_path: Path, owner: User) -> None:
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            *codex_start(),
            token_count(1000, 0, 10),
            token_count(1000, 0, 10),  # repeated event: no new call
            codex_line(
                "response_item",
                {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": "c1"},
            ),
            token_count(2200, 900, 25),
            codex_line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ),
        ],
    )

    [main] = import_transcript(path, owner)

    report = import_report(main)
    assert report["usage"] == {
        "uncached_input": 1300,
        "output": 25,
        "cache_read": 900,
        "cache_write": 0,
    }
    assert report["tokens"]["context"]["value"] == 1200
    # The prompt, and the exec output (docs/design.md, turns: every input the agent answers).
    assert (report["turns"], main.context_window, main.title) == (2, 200_000, "hi")
    assert main.messages.get(external_id="c1:output").tool_name == "exec"


def test_codex_compacted_line_counts_a_compaction(tmp_path: Path, owner: User) -> None:
    compacted = codex_line(
        "compacted", {"message": "summary of the work", "replacement_history": []}
    )
    path = write_jsonl(tmp_path / "r.jsonl", [*codex_start(), token_count(10, 0, 1), compacted])

    [main] = import_transcript(path, owner)

    assert main.compactions == 1
    assert not main.messages.filter(compacted=False).exists()
    assert main.events.get(kind="compaction").data["summary"] == "summary of the work"


def test_codex_totals_going_down_is_malformed(tmp_path: Path, owner: User) -> None:
    path = write_jsonl(
        tmp_path / "r.jsonl", [*codex_start(), token_count(100, 0, 5), token_count(50, 0, 5)]
    )

    with pytest.raises(TranscriptError, match=r"r\.jsonl:7: token_count totals went down"):
        import_transcript(path, owner)

    assert not Session.objects.exists()


def test_codex_rollout_must_start_with_session_meta(tmp_path: Path, owner: User) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", codex_start()[1:])

    with pytest.raises(TranscriptError, match=r"r\.jsonl:1: a rollout must start"):
        import_transcript(path, owner)


def test_token_figures_are_labelled_by_their_source(owner: User) -> None:
    empty = Session.objects.create(owner=owner)
    measured = Session.objects.create(owner=owner)
    log.append_message(measured, role="user", source_kind="user", content="hello there")

    assert import_report(empty)["tokens"]["context"]["label"] == "unavailable"
    assert import_report(measured)["tokens"] == {
        "context": {"value": 3, "basis": "context", "label": "estimated"},
        "cumulative": {"value": 3, "basis": "cumulative", "label": "estimated"},
    }


def test_after_a_trailing_compaction_every_surface_shows_one_estimated_context(
    tmp_path: Path, owner: User
) -> None:
    summary = "The user asked for the parser refactor; parser.py now streams, tests pass." * 2
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            claude_line("user", "u1", "Refactor the parser"),
            reply("a1", "m1", {"type": "text", "text": "Done."}, usage(3, 40, 9000, 500)),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "b1",
                "sessionId": SESSION,
                "compactMetadata": {"trigger": "auto"},
            },
            claude_line("user", "s1", summary, isCompactSummary=True),
        ],
    )
    [main] = import_transcript(path, owner)
    estimate = -(-len(summary) // 4)  # the meter: about four characters per token

    reported = import_report(main)["tokens"]["context"]
    status = operations.status(main.pk)["tokens"]
    record = operations.run_attempt(main.pk, manual=True).record

    assert reported == status == {"value": estimate, "basis": "context", "label": "estimated"}
    assert record is not None and record.metrics["tokens"] == estimate


def test_a_nul_character_in_the_log_imports_as_a_replacement_character(
    tmp_path: Path, owner: User
) -> None:
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            *codex_start(),
            codex_line(
                "response_item",
                {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": "c1"},
            ),
            codex_line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": "bin\u0000ary"},
            ),
        ],
    )

    [main] = import_transcript(path, owner)

    assert main.messages.get(external_id="c1:output").content == "bin\ufffdary"


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (token_count(2**64, 0, 5), '"input_tokens" is not a token count'),
        (token_count(10, 0, 2**63), '"output_tokens" is not a token count'),
        (
            codex_line("event_msg", {"type": "agent_message", "model_context_window": 2**40}),
            '"model_context_window" is not a context window',
        ),
    ],
)
def test_a_figure_too_large_to_store_is_malformed(
    tmp_path: Path, owner: User, line: dict[str, Any], error: str
) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [*codex_start(), line])

    with pytest.raises(TranscriptError, match=rf"r\.jsonl:6: {error}"):
        import_transcript(path, owner)

    assert not Session.objects.exists()


def test_a_claude_call_beyond_any_model_call_is_malformed(tmp_path: Path, owner: User) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            claude_line("user", "u1", "hi"),
            reply("a1", "m1", {"type": "text", "text": "hello"}, usage(10, 2**40)),
        ],
    )

    with pytest.raises(TranscriptError, match=r'c\.jsonl:2: "output_tokens" is not a token count'):
        import_transcript(path, owner)

    assert not Session.objects.exists()


def test_an_overlong_session_id_and_cwd_are_cut_to_their_columns(
    tmp_path: Path, owner: User
) -> None:
    deep = "/work/" + "d" * 1100
    line = claude_line("user", "u1", "hi", cwd=deep)
    line["sessionId"] = "s" * 500
    path = write_jsonl(tmp_path / "c.jsonl", [line])

    [main] = import_transcript(path, owner)

    assert main.external_id == "s" * 200
    assert main.cwd == deep[:1024]
    assert main.workspace is not None and main.workspace.name == "d" * 200


def test_a_subagent_replaying_a_main_response_leaves_its_usage_to_the_main(
    tmp_path: Path, owner: User
) -> None:
    spawn = {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "look"}}
    main_path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            claude_line("user", "u1", "Explore the repo"),
            {**reply("a1", "msg_main", spawn, usage(4, 30, 100, 20)), "requestId": "req_main"},
        ],
    )
    agent_dir = tmp_path / "s" / "subagents"
    agent_dir.mkdir(parents=True)
    write_jsonl(
        agent_dir / "agent-x.jsonl",
        [
            {**reply("x0", "msg_main", spawn, usage(4, 30, 100, 20)), "requestId": "req_replay"},
            claude_line("user", "x1", "look"),
            {
                **reply("x2", "msg_agent", {"type": "text", "text": "Found it."}, usage(1, 9, 50)),
                "requestId": "req_agent",
            },
        ],
    )

    main, agent = import_transcript(main_path, owner)

    assert import_report(main)["usage"] == {
        "uncached_input": 4,
        "output": 30,
        "cache_read": 100,
        "cache_write": 20,
    }
    assert import_report(agent)["usage"] == {
        "uncached_input": 1,
        "output": 9,
        "cache_read": 50,
        "cache_write": 0,
    }
    assert agent.messages.filter(external_id="x0").exists()  # the replayed line is kept


def claude_tool_round(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A prompt, one Bash call, and its ``tool_result`` block ``result`` (merged over defaults)."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git commit"}}
    block = {"type": "tool_result", "tool_use_id": "t1", "content": "done", **result}
    return [
        claude_line("user", "u1", "commit it"),
        reply("a1", "msg_1", call, usage(10, 5)),
        claude_line("user", "u2", [block]),
    ]


@pytest.mark.parametrize(
    ("result", "flag"),
    [
        ({"is_error": True, "content": "pre-commit hook failed: ruff found 1 issue"}, True),
        ({"is_error": False}, False),
        ({}, None),
    ],
)
def test_a_claude_tool_result_keeps_its_error_flag(
    tmp_path: Path, owner: User, result: dict[str, Any], flag: bool | None
) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", claude_tool_round(result))

    [main] = import_transcript(path, owner)

    assert main.messages.get(external_id="u2").tool_error is flag


@pytest.mark.parametrize(
    ("output", "flag"),
    [
        ("Chunk ID: a1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nboom", True),
        ("Exit code: 0\nWall time: 0.2 seconds\nOutput:\nok", False),
        ('{"output": "E501", "metadata": {"exit_code": 2, "duration_seconds": 0.1}}', True),
        ({"output": "ok", "metadata": {"exit_code": 0}}, False),
        ("Chunk ID: a2\nProcess running with session ID 7\nOutput:\nExit code: 1", None),
        ("plain text", None),
    ],
)
def test_a_codex_tool_output_keeps_its_exit_code_as_an_error_flag(
    tmp_path: Path, owner: User, output: object, flag: bool | None
) -> None:
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            *codex_start(),
            codex_line(
                "response_item",
                {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": "c1"},
            ),
            codex_line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": output},
            ),
        ],
    )

    [main] = import_transcript(path, owner)

    assert main.messages.get(external_id="c1:output").tool_error is flag
