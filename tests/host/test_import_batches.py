"""Imports write in batches: a few statements per thousand log entries, the figures exactly those
of appending each entry alone (docs/design.md, "Imports write in batches")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host import log
from host.importers import TranscriptError, import_report, import_transcript
from host.importers.writer import BATCH_ENTRIES
from host.models import Message, Role, Session, SessionEvent, SessionEventKind, SourceKind
from host.usage import Usage, projection_of

PROMPT_EVERY = 10


@pytest.fixture
def owner(db: None) -> User:
    return get_user_model().objects.create_user("ada", password="x")


def _line(kind: str, uuid: str, session: str, content: Any, **message: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": session,
        "cwd": "/work/long",
        "message": {"role": kind, "content": content, **message},
    }


def _usage(n: int) -> dict[str, int]:
    return {
        "input_tokens": n % 7,
        "output_tokens": 10 + n % 5,
        "cache_read_input_tokens": 1000 + n,
        "cache_creation_input_tokens": 30,
    }


def long_log(session: str, responses: int, first: int = 0) -> list[dict[str, Any]]:
    """A Claude Code log of ``responses`` calls numbered from ``first``: a prompt every
    ``PROMPT_EVERY`` calls, each call a text line and a tool_use line (one response, its usage
    repeated), then its tool result; the model changes half-way."""
    lines = []
    for n in range(first, first + responses):
        if n % PROMPT_EVERY == 0:
            lines.append(_line("user", f"{session}-p{n}", session, f"Step {n}: go on"))
        model = "claude-opus-4-6" if n < first + responses // 2 else "claude-sonnet-4-5"
        reply = {"id": f"msg_{n}", "model": model, "usage": _usage(n)}
        text = {"type": "text", "text": f"Running check {n}."}
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "make"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok " * (n % 40)}
        lines += [
            _line("assistant", f"{session}-a{n}", session, [text], **reply),
            _line("assistant", f"{session}-b{n}", session, [call], **reply),
            _line("user", f"{session}-r{n}", session, [result]),
        ]
    return lines


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_long_log_is_written_in_a_few_statements_with_exact_figures(
    tmp_path: Path, owner: User
) -> None:
    responses = BATCH_ENTRIES  # about 3 messages and a turn start per call: several batches
    prompts = responses // PROMPT_EVERY
    lines = long_log("long", responses)
    damaged = write_jsonl(tmp_path / "damaged.jsonl", [*lines, {"type": "assistant"}])
    with pytest.raises(TranscriptError):
        import_transcript(damaged, owner)
    assert not Session.objects.exists() and not Message.objects.exists()  # rolled back whole

    with CaptureQueriesContext(connection) as queries:
        [main] = import_transcript(write_jsonl(tmp_path / "long.jsonl", lines), owner)

    report = import_report(main)
    # Written one at a time, each message took about seven statements (21 000 here).
    assert len(queries) < report["messages"] / 15
    assert report["messages"] == prompts + 3 * responses
    assert report["turns"] == prompts + responses  # each prompt, each call answering a result
    expected = [_usage(n) for n in range(responses)]
    assert report["usage"] == {
        "uncached_input": sum(u["input_tokens"] for u in expected),
        "output": sum(u["output_tokens"] for u in expected),
        "cache_read": sum(u["cache_read_input_tokens"] for u in expected),
        "cache_write": 30 * responses,
    }
    last = expected[-1]
    assert report["tokens"]["context"]["value"] == last["input_tokens"] + 1000 + responses - 1 + 30
    assert report["model"] == "claude-sonnet-4-5"
    entries = sorted(
        [(m.seq, "message", m.starts_turn) for m in main.messages.all()]
        + [(e.seq, e.kind, e.data.get("message_seq")) for e in main.events.all()]
    )
    assert [seq for seq, *_ in entries] == list(range(1, main.revision + 1))
    for (seq, kind, detail), (_, next_kind, next_detail) in zip(entries, entries[1:], strict=False):
        if kind == "message" and detail:  # a turn start follows the message that starts it
            assert (next_kind, next_detail) == (SessionEventKind.TURN_START, seq)
    selections = main.events.filter(kind=SessionEventKind.MODEL_SELECTION)
    assert [e.data["model"] for e in selections] == ["claude-opus-4-6", "claude-sonnet-4-5"]
    switch = main.messages.filter(model="claude-sonnet-4-5").order_by("seq").first()
    assert switch is not None and switch.seq == selections[1].seq + 1


def test_a_resumed_copy_counts_nothing_twice_with_one_look_up_per_batch(
    tmp_path: Path, owner: User
) -> None:
    def thinking(session: str) -> dict[str, Any]:  # a call that left no visible message
        block = {"type": "thinking", "thinking": "…", "signature": "x"}
        return _line("assistant", f"{session}-t", session, [block], id="msg_t", usage=_usage(99))

    original = [*long_log("a", 30), thinking("a")]
    first = import_transcript(write_jsonl(tmp_path / "a.jsonl", original), owner)[0]
    # The resumed session's copy of a's calls under b's uuids, then calls of its own.
    copy = [*long_log("b", 30), thinking("b"), *long_log("b", 3, first=30)]

    with CaptureQueriesContext(connection) as queries:
        [resumed] = import_transcript(write_jsonl(tmp_path / "b.jsonl", copy), owner)

    look_ups = [q for q in queries if "response_id" in q["sql"] and q["sql"].startswith("SELECT")]
    assert len(look_ups) == 1
    usage = import_report(resumed)["usage"]
    assert usage["output"] == sum(_usage(n)["output_tokens"] for n in range(30, 33))
    assert import_report(first)["usage"]["output"] == sum(
        _usage(n)["output_tokens"] for n in [*range(30), 99]
    )
    # The thinking call's usage stays with a, on an empty message that carries it.
    assert first.messages.filter(role=Role.ASSISTANT, content="").count() == 1
    assert not resumed.messages.filter(role=Role.ASSISTANT, content="").exists()


@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="PostgreSQL infers a partial index's condition itself"
)
def test_the_look_up_of_counted_responses_reads_their_index(tmp_path: Path, owner: User) -> None:
    import_transcript(write_jsonl(tmp_path / "a.jsonl", long_log("a", 3)), owner)
    with CaptureQueriesContext(connection) as queries:
        import_transcript(write_jsonl(tmp_path / "b.jsonl", long_log("b", 3)), owner)
    [look_up, *_] = [
        q["sql"] for q in queries if "response_id" in q["sql"] and "SELECT" in q["sql"]
    ]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {look_up}")
        plan = " ".join(str(row) for row in cursor.fetchall())
    assert "message_response_id" in plan


MESSAGES = st.lists(
    st.tuples(
        st.sampled_from([Role.USER, Role.ASSISTANT, Role.TOOL]),
        # What either database stores: no NUL (PostgreSQL refuses it), no lone surrogate.
        st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=30),
        st.none() | st.tuples(*[st.integers(0, 10**6)] * 4),
        st.booleans(),
    ),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=MESSAGES)
def test_appending_entries_at_once_leaves_what_appending_each_leaves(
    owner: User, batch: list[tuple[str, str, tuple[int, int, int, int] | None, bool]]
) -> None:
    one_by_one = Session.objects.create(owner=owner)
    at_once = Session.objects.create(owner=owner)
    log.select_model(one_by_one, "m", live=False)
    for role, content, usage, starts in batch:
        log.append_message(
            one_by_one,
            role=role,
            source_kind=SourceKind.SYSTEM,
            content=content,
            usage=Usage(*usage) if usage else None,
            starts_turn=starts,
            live=False,
        )
    seqs = iter(log.reserve_seqs(at_once, len(batch) + 1))
    events = [
        SessionEvent(
            session=at_once,
            seq=next(seqs),
            kind=SessionEventKind.MODEL_SELECTION,
            data={"model": "m", "source": "user"},
        )
    ]
    messages = [
        Message(
            session=at_once,
            seq=next(seqs),
            role=role,
            source_kind=SourceKind.SYSTEM,
            content=content,
            starts_turn=starts,
            **log.usage_columns(Usage(*usage) if usage else None),
        )
        for role, content, usage, starts in batch
    ]
    log.append_entries(at_once, messages, events)

    def state(session: Session) -> tuple[object, ...]:
        session.refresh_from_db()
        usage = projection_of(session)
        return (
            session.revision,
            session.turns,
            session.blank,
            session.model,
            usage.uncached_input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.context_tokens,
            usage.context_seq,
            usage.effective_chars,
            list(session.messages.values_list("seq", "role", "content", "output_tokens")),
        )

    assert state(at_once) == state(one_by_one)
