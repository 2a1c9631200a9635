"""``manage.py follow_sessions``: logs followed while they are written end with the figures a
whole import of the same files gives (``host.importers.live``, ``host.importers.following``).

The logs are the project's samples (``samples/``: Claude Code 2.x with subagents and a
compaction, 1.x with inline sidechains, a forked Codex rollout, a damaged log) and a resumed
session's copy made from the 2.x log here; they are appended in chunks that cut lines in half.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from shared_files import SAMPLES

from follower import sources as follower_sources
from follower.events import Resync, current_event_id, deliver, events_after
from host.composer import submit
from host.follow import Kind as SessionKind
from host.importers import following, import_transcript, live
from host.importers.following import Follower
from host.importers.live import follow_step
from host.importers.writer import SessionWriter
from host.models import FollowedFile, Session
from host.sidebar import row_context
from host.signals import entries_appended
from host.usage import context_tokens, session_usage

EPIC = "claude-code-2.x-epic"
SUBAGENTS = [
    f"{EPIC}/subagents/agent-a3f9e21.jsonl",
    f"{EPIC}/subagents/agent-acompact-7c1d05.jsonl",
]
LOGS = [f"{EPIC}.jsonl", *SUBAGENTS, "claude-code-1.x-sidechains.jsonl", "codex-fork.jsonl"]
RESUMED = "resumed.jsonl"


def resumed_copy() -> bytes:
    """A resumed session's log: a new session id, a copy of the 2.x log's first prompt and
    first response (same ``message.id``), then a prompt and a response of its own."""
    lines = [json.loads(line) for line in (SAMPLES / f"{EPIC}.jsonl").read_text().splitlines()]
    prompt = next(line for line in lines if line["type"] == "user")
    first = next(line for line in lines if line["type"] == "assistant")
    copied = [line for line in lines if line.get("message", {}).get("id") == first["message"]["id"]]
    new_id = "5e55e55e-0000-4000-8000-00000000000b"
    own_prompt = {**prompt, "uuid": "r-prompt", "message": {"role": "user", "content": "Go on."}}
    own_answer = {
        **first,
        "uuid": "r-answer",
        "requestId": "req_resumed_own",
        "message": {
            **first["message"],
            "id": "msg_resumed_own",
            "content": [{"type": "text", "text": "Going on."}],
            "usage": {"input_tokens": 3, "output_tokens": 40, "cache_read_input_tokens": 900,
                      "cache_creation_input_tokens": 20},
        },
    }  # fmt: skip
    out = [{**line, "sessionId": new_id} for line in [prompt, *copied, own_prompt, own_answer]]
    return "".join(json.dumps(line) + "\n" for line in out).encode()


def sources() -> dict[str, bytes]:
    """Each log's whole content by its path under a logs folder."""
    found = {name: (SAMPLES / name).read_bytes() for name in LOGS}
    return found | {RESUMED: resumed_copy()}


def figures(owner: User) -> dict[str, tuple[Any, ...]]:
    """Each session's figures by external id: usage, context, turns, compactions, model, title,
    cwd, status, and the non-empty messages' roles and contents in order."""
    result = {}
    for session in Session.objects.filter(owner=owner):
        messages = tuple(
            (m.role, m.content, m.tool_error)
            for m in session.messages.order_by("seq")
            if m.content or m.role != "assistant"
        )
        result[session.external_id] = (
            session_usage(session),
            context_tokens(session),
            session.turns,
            session.compactions,
            session.model,
            session.title,
            session.cwd,
            session.status,
            messages,
        )
    return result


def expected(django_user_model: Any, folder: Path, contents: dict[str, bytes]) -> dict[str, Any]:
    """The figures of a whole import of ``contents`` (written under ``folder``) by another user."""
    other = django_user_model.objects.create_user("whole")
    for name, data in contents.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for name in contents:
        if "/subagents/" not in name:
            import_transcript(folder / name, other)
    return figures(other)


def append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(data)


@pytest.mark.django_db
def test_cut_chunks_a_restart_and_quiet_points_end_exact(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """Every log appended in chunks that cut lines in half, the follower stepped between
    chunks, settled at random quiet points and replaced by a fresh one (a restart) half-way:
    the figures equal a whole import's and nothing is counted twice."""
    contents = sources()
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    rng = random.Random(30)
    cursors = dict.fromkeys(contents, 0)
    follower = Follower([logs], owner, quiet=0)
    rounds = 0
    while any(cursors[name] < len(data) for name, data in contents.items()):
        for name, data in contents.items():
            if name == RESUMED and cursors[f"{EPIC}.jsonl"] < len(contents[f"{EPIC}.jsonl"]):
                continue  # a session is resumed once its runtime left it
            cut = min(len(data), cursors[name] + rng.randint(1, 900))
            append(logs / name, data[cursors[name] : cut])
            cursors[name] = cut
        for path in follower.logs():
            follower.step(path, settle=rng.random() < 0.3)
        rounds += 1
        if rounds == 20:
            follower = Follower([logs], owner, quiet=0)  # a restart: only the stored offsets
    follower.once()
    assert figures(owner) == right
    follower.once()  # again: nothing more
    assert figures(owner) == right


@pytest.mark.django_db
def test_a_line_without_its_newline_waits(owner: User, tmp_path: Path) -> None:
    """Half a line is not read: the offset stays before it until its newline arrives."""
    data = (SAMPLES / "codex-fork.jsonl").read_bytes()
    log = tmp_path / "rollout.jsonl"
    first_newline = data.index(b"\n") + 1
    log.write_bytes(data[: first_newline + 10])
    follow_step(log, owner, settle=True)
    assert FollowedFile.objects.get(path=str(log)).offset == first_newline
    append(log, data[first_newline + 10 :])
    follow_step(log, owner, settle=True)
    assert FollowedFile.objects.get(path=str(log)).offset == len(data)


@pytest.mark.django_db
def test_truncated_and_replaced_logs_are_read_again_without_counting_twice(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """A log cut back to half its lines and written on, and one replaced by another file (a new
    inode) with the same lines and more: read again, each response counts once."""
    contents = {name: data for name, data in sources().items() if "/subagents/" not in name}
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    for name, data in contents.items():
        append(logs / name, data[: len(data) * 2 // 3])
    follower = Follower([logs], owner, quiet=0)
    follower.once()
    for index, (name, data) in enumerate(contents.items()):
        path = logs / name
        half = data[: data.index(b"\n", len(data) // 3) + 1]
        if index % 2:
            path.write_bytes(half)  # truncated in place (same inode)
            follower.once()
            append(path, data[len(half) :])
        else:
            replacement = path.with_suffix(".tmp")
            replacement.write_bytes(data)
            os.replace(replacement, path)  # another inode at the path
    follower.once()
    assert figures(owner) == right


@pytest.mark.django_db(transaction=True)
def test_two_followers_at_once_import_nothing_twice(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """Two followers stepping the same logs at the same time (a second ``follow_sessions``
    started by mistake): the file's row is claimed per step, so the figures are a whole
    import's."""
    contents = {"codex-fork.jsonl": (SAMPLES / "codex-fork.jsonl").read_bytes()}
    contents[f"{EPIC}.jsonl"] = (SAMPLES / f"{EPIC}.jsonl").read_bytes()
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    for name, data in contents.items():
        append(logs / name, data)
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            for _ in range(3):
                Follower([logs], owner, quiet=0).once()
        except BaseException as error:  # reported by the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=follow) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert figures(owner) == right


WRITER = """
import sys, time
source, target, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
import random
rng = random.Random(seed)
data = open(source, "rb").read()
at = 0
with open(target, "ab", buffering=0) as out:  # one descriptor held open, as Codex does
    while at < len(data):
        cut = min(len(data), at + rng.randint(50, 1500))
        out.write(data[at:cut])
        at = cut
        time.sleep(0.01)
"""


@pytest.mark.django_db
def test_a_writer_process_appending_over_time(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """A separate process appends a rollout through one open descriptor, in chunks cutting
    lines, while the follower polls it (and is restarted half-way): the figures end exact."""
    name = "codex-fork.jsonl"
    right = expected(django_user_model, tmp_path / "whole", {name: (SAMPLES / name).read_bytes()})
    logs = tmp_path / "logs"
    logs.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(SAMPLES / name), str(logs / name), "7"]
    )
    follower = Follower([logs], owner, quiet=0.05)
    looks = 0
    while writer.poll() is None:
        follower.reconcile()
        looks += 1
        if looks == 5:
            follower = Follower([logs], owner, quiet=0.05)
    assert writer.wait() == 0
    follower.once()
    assert looks > 5
    assert figures(owner) == right


@pytest.mark.django_db
def test_damaged_lines_are_reported_and_skipped(owner: User, tmp_path: Path) -> None:
    """``--once`` on the damaged sample prints each damaged line as ``path:line: reason`` and
    a summary, and imports the readable records."""
    (tmp_path / "damaged.jsonl").write_bytes((SAMPLES / "claude-code-damaged.jsonl").read_bytes())
    out, err = StringIO(), StringIO()
    with translation.override("en"):
        call_command(
            "follow_sessions", str(tmp_path), "--once", "--owner", "ada", stdout=out, stderr=err
        )
    assert f"{tmp_path / 'damaged.jsonl'}:11: skipped: not valid JSON" in err.getvalue()
    assert ":4: repaired: lone surrogates stored as U+FFFD" in err.getvalue()
    assert "3 damaged lines" in out.getvalue()
    session = Session.objects.get(owner=owner)
    assert session.turns == 5


@pytest.mark.django_db
def test_a_followed_session_is_of_its_runtime_and_takes_no_input_here(
    owner: User, tmp_path: Path
) -> None:
    """A followed log's sessions are its runtime's (listed with it and the model); the composer
    refuses input for them, saying it belongs in the terminal, and logs nothing."""
    for name in ("codex-fork.jsonl", f"{EPIC}.jsonl"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    Follower([tmp_path], owner).once()
    codex = Session.objects.get(owner=owner, external_id__startswith="019ab3e2")
    claude = Session.objects.get(owner=owner, external_id__startswith="7c3e91d2")
    assert (codex.runtime, claude.runtime) == ("codex", "claude")
    row = render_to_string("chat/_session_row.html", row_context(codex))
    assert "Codex · gpt-5.2-codex" in row
    revision = codex.revision
    result = submit(codex, owner, "run the tests again", client_id="c-1")
    assert (result.kind, result.text) == (
        "error",
        "this session runs in Codex: type its input in its terminal",
    )
    codex.refresh_from_db()
    assert codex.revision == revision
    client = Client()
    client.force_login(owner)
    page = client.get(f"/s/{codex.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'This conversation runs in <span translate="no">Codex</span>: type its input' in page


@pytest.mark.django_db
def test_a_response_settled_half_way_counts_with_its_last_line(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """A response whose first line (streamed, few output tokens) is settled before its last
    line arrives: the last line's usage replaces the first's, as a whole import counts it."""
    lines = [json.loads(line) for line in (SAMPLES / f"{EPIC}.jsonl").read_text().splitlines()]
    prompt = next(line for line in lines if line["type"] == "user")
    answer = next(line for line in lines if line["type"] == "assistant")
    usage = {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 700,
             "cache_creation_input_tokens": 30}  # fmt: skip
    reading = [{"type": "text", "text": "Reading the code."}]
    first_message = {**answer["message"], "id": "msg_split", "content": reading, "usage": usage}
    first = {**answer, "uuid": "a-1", "message": first_message}
    done = [{"type": "text", "text": "Done."}]
    last_message = {**first_message, "content": done, "usage": {**usage, "output_tokens": 120}}
    last = {**first, "uuid": "a-2", "message": last_message}
    text = [json.dumps(line) + "\n" for line in (prompt, first, last)]
    right = expected(django_user_model, tmp_path / "whole", {"split.jsonl": "".join(text).encode()})
    log = tmp_path / "split.jsonl"
    log.write_text(text[0] + text[1])
    follow_step(log, owner, settle=True)
    append(log, text[2].encode())
    follow_step(log, owner, settle=True)
    assert figures(owner) == right
    assert session_usage(Session.objects.get(owner=owner)).output == 120


@pytest.mark.django_db(transaction=True)
def test_the_loop_reads_appends_as_they_come(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """``follow_sessions`` without ``--once``: its loop (file events, polls) imports each
    append within seconds, until stopped."""
    name = "codex-fork.jsonl"
    data = (SAMPLES / name).read_bytes()
    right = expected(django_user_model, tmp_path / "whole", {name: data})
    logs = tmp_path / "logs"
    logs.mkdir()
    follower = Follower([logs], owner, quiet=0.1)
    loop = asyncio.new_event_loop()
    task = loop.create_task(follower.run())

    def run_loop() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)
        connection.close()

    thread = threading.Thread(target=run_loop)
    thread.start()
    try:
        half = data.index(b"\n", len(data) // 2) + 1
        append(logs / name, data[:half])
        wait_for(lambda: FollowedFile.objects.filter(offset=half).exists())
        append(logs / name, data[half:])
        wait_for(lambda: figures(owner) == right)
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join()
        loop.close()


def wait_for(condition: Callable[[], bool], seconds: float = 20) -> None:
    """Return once ``condition()`` holds; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the follower did not catch up"
        time.sleep(0.05)


@pytest.mark.django_db
def test_a_subagent_log_seen_before_its_main_is_read_once_the_main_is(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """A subagent's log written before its main's first line waits, and is read on a later
    look though it did not change meanwhile."""
    contents = {name: (SAMPLES / name).read_bytes() for name in (f"{EPIC}.jsonl", *SUBAGENTS)}
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    for name in SUBAGENTS:
        append(logs / name, contents[name])
    follower = Follower([logs], owner, quiet=0)
    follower.reconcile()
    follower.reconcile()  # quiet since: they would settle now
    assert not Session.objects.filter(owner=owner).exists()
    append(logs / f"{EPIC}.jsonl", contents[f"{EPIC}.jsonl"])
    follower.reconcile()
    follower.reconcile()  # the quiet logs settle
    assert figures(owner) == right


def interleaved() -> bytes:
    """A Claude Code log whose one response calls two tools on two lines, each followed by its
    result before the response's next line (as Claude Code writes parallel calls)."""
    lines = [json.loads(line) for line in (SAMPLES / f"{EPIC}.jsonl").read_text().splitlines()]
    prompt = next(line for line in lines if line["type"] == "user")
    answer = next(line for line in lines if line["type"] == "assistant")
    out = [prompt]
    for index in (1, 2):
        call = {"type": "tool_use", "id": f"toolu_{index}", "name": "Read", "input": {"n": index}}
        message = {**answer["message"], "id": "msg_parallel", "content": [call]}
        out.append({**answer, "uuid": f"call-{index}", "message": message})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": "ok"}
        out.append({**prompt, "uuid": f"result-{index}", "message": {"role": "user",
                    "content": [result]}})  # fmt: skip
    final = {**answer["message"], "id": "msg_final", "content": [{"type": "text", "text": "Ok."}]}
    out.append({**answer, "uuid": "final", "message": final})
    own = "5e55e55e-0000-4000-8000-00000000000c"
    return "".join(json.dumps({**line, "sessionId": own}) + "\n" for line in out).encode()


@pytest.mark.django_db
def test_settling_after_every_line_ends_exact(
    owner: User, django_user_model: Any, tmp_path: Path
) -> None:
    """Each line appended alone and the log settled after it (a log quiet between every
    line): turns, usage and messages end as a whole import's, parallel tool calls too."""
    contents = {name: (SAMPLES / name).read_bytes() for name in (f"{EPIC}.jsonl", *SUBAGENTS)}
    contents["parallel.jsonl"] = interleaved()
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    follower = Follower([logs], owner, quiet=0)
    for name, data in contents.items():
        for line in data.splitlines(keepends=True):
            append(logs / name, line)
            follower.step((logs / name).absolute(), settle=True)
    assert figures(owner) == right


@pytest.mark.django_db
def test_a_log_longer_than_a_part_commits_each_part_with_its_offset(
    owner: User, django_user_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first scan of logs longer than one part (``MAX_PART``, made small here) imports
    them a part per transaction: a crash in the third part keeps the first two with their
    offset, and the follower started again imports the rest, ending as a whole import."""
    contents = {name: data for name, data in sources().items() if name != RESUMED}
    right = expected(django_user_model, tmp_path / "whole", contents)
    logs = tmp_path / "logs"
    for name, data in contents.items():
        append(logs / name, data)
    monkeypatch.setattr(live, "MAX_PART", 4000)
    written = SessionWriter.write_settled
    parts = 0

    def crash_at_third(writer: SessionWriter) -> None:
        nonlocal parts
        parts += 1
        if parts == 3:
            raise RuntimeError("killed half-way")
        written(writer)

    monkeypatch.setattr(SessionWriter, "write_settled", crash_at_third)
    with pytest.raises(RuntimeError):
        Follower([logs], owner, quiet=0).once()
    [row] = FollowedFile.objects.filter(owner=owner, offset__gt=0)
    assert 4000 <= row.offset < len(contents[f"{EPIC}.jsonl"])
    assert row.session is not None and row.session.messages.exists()
    monkeypatch.setattr(SessionWriter, "write_settled", written)
    Follower([logs], owner, quiet=0).once()
    assert figures(owner) == right


def newest_event(owner: User) -> int:
    """The owner's newest event id, once what committed is numbered (``deliver``)."""
    deliver(owner.pk)
    return current_event_id(owner.pk)


def session_entries(owner: User, after: int) -> list[dict[str, Any]]:
    """The payloads of the owner's ``session.entry`` events numbered after ``after``; asserts
    that no other event was published (the session's row did not change)."""
    frames = events_after(owner.pk, after)
    assert not isinstance(frames, Resync)
    assert {f["kind"] for f in frames} == {SessionKind.SESSION_ENTRY}
    return [f["payload"] for f in frames]


@pytest.mark.django_db
def test_each_step_publishes_one_entry_event_per_session(owner: User, tmp_path: Path) -> None:
    """Lines appended to a followed session reach its pages in one event per step: a few lines
    carry their entries, each its own fragment; more than ``LIVE_ENTRIES`` have the page read
    its log again (``refresh``) instead of one event per message. Its row, unchanged, is not
    published again."""
    lines = (SAMPLES / f"{EPIC}.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "logs" / f"{EPIC}.jsonl"
    append(log, b"".join(lines[:4]))
    follow_step(log, owner, settle=True)
    last = newest_event(owner)
    append(log, b"".join(lines[4:8]))
    step = follow_step(log, owner, settle=True)
    [few] = session_entries(owner, last)
    assert 1 < len([f for f in few["fragments"] if f["unless"]]) <= step.messages
    assert not few["refresh"]
    last = newest_event(owner)
    append(log, b"".join(lines[8:]))
    step = follow_step(log, owner, settle=True)
    assert step.messages > live.LIVE_ENTRIES
    [many] = session_entries(owner, last)
    assert many["refresh"] and many["session_id"] == step.session_id


@pytest.mark.django_db(transaction=True)
def test_the_loop_settles_a_quiet_log_when_it_is_due_not_at_a_poll(
    owner: User, django_user_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log written once and left quiet has its last response counted by the loop once it
    has been quiet for ``quiet`` seconds: the loop wakes for it (no stat poll here, their
    interval made an hour)."""
    name = f"{EPIC}.jsonl"
    data = (SAMPLES / name).read_bytes()
    right = expected(django_user_model, tmp_path / "whole", {name: data})
    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr(following, "POLL", 3600.0)
    follower = Follower([logs], owner, quiet=0.1)
    loop = asyncio.new_event_loop()
    task = loop.create_task(follower.run())

    def run_loop() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)
        connection.close()

    thread = threading.Thread(target=run_loop)
    thread.start()
    try:
        append(logs / name, data)
        wait_for(lambda: figures(owner) == right)
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join()
        loop.close()


@pytest.mark.django_db
def test_an_append_to_a_followed_log_is_a_few_statements(owner: User, tmp_path: Path) -> None:
    """One model call appended to a followed rollout (three lines) costs its step a few
    statements, whatever the log holds already: the row claimed in one, the session read
    once, the batch written without a savepoint, and no user, workspace or session write-back
    when the session's columns did not change (the follower's announcement left out here)."""
    lines = (SAMPLES / "codex-fork.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "rollout.jsonl"
    append(log, b"".join(lines[:20]))
    follow_step(log, owner)
    append(log, b"".join(lines[20:23]))
    entries_appended.disconnect(dispatch_uid="host.follow.entries")
    try:
        with CaptureQueriesContext(connection) as queries:
            step = follow_step(log, owner)
    finally:
        follower_sources.connect()
    assert step.messages == 2
    # Claim, session, 2 response look-ups, numbering, 2 inserts, projection, turns, read back,
    # the new entries (messages, events), the offset: 13 (and the transaction's own).
    assert len(queries) <= 15, [query["sql"][:60] for query in queries]
