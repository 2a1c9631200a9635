"""The offline summary's kept digest: folded over a log in parts, stored and
read back at any point, it gives exactly the brief built from the whole log at once; a crash
while it is stored leaves the old digest or the new one and the brief stays right; a compaction
starts it afresh; it stays bounded however long the log grows.

The logs are every sample and case log of the project and of ``../shared`` (the shared ones are
skipped with a reason when absent), each imported as a user would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection
from shared_files import CASES, SAMPLES, TRANSCRIPTS

from handoff import services, summarizer
from handoff.core.offline_brief import brief_of, offline_brief
from handoff.digest import per_session
from handoff.digest.fold import Digest
from handoff.models import SummaryDigest
from host.compaction import compact
from host.models import Message, Role, Session, SourceKind
from host.signals import session_idle

pytestmark = pytest.mark.django_db

LOGS = (
    sorted(
        [*SAMPLES.glob("*.jsonl"), *(SAMPLES / "briefs").glob("*.jsonl")],
        key=lambda p: p.name,
    )
    + [TRANSCRIPTS / name for name in sorted(p.name for p in TRANSCRIPTS.glob("*.jsonl"))]
    + [CASES / name for name in sorted(p.name for p in CASES.glob("*.jsonl"))]
)


def controller() -> services.SessionController:
    host = services.session_controller()
    assert host is not None
    return host


def imported(path: Path) -> Session:
    if not path.is_file():
        pytest.skip(f"log not found at {path}")
    out = StringIO()
    call_command("import_transcript", str(path), "--json", stdout=out, stderr=StringIO())
    return Session.objects.get(pk=json.loads(out.getvalue().splitlines()[0])["session"])


def cuts(length: int) -> Iterator[int]:
    """Every point of a short log; of a long one 40 spread over it and the last ten."""
    if length <= 80:
        yield from range(length + 1)
        return
    yield from sorted({*range(0, length, length // 40), *range(length - 10, length + 1)})


def stored_again(digest: Digest) -> Digest:
    """``digest`` written as the database stores it and read back."""
    return Digest.from_json(json.loads(json.dumps(digest.to_json())))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_digest_folded_in_parts_gives_the_brief_of_the_whole_log(path):
    session = imported(path)
    context = controller().effective_context(session)
    whole = offline_brief(context, cwd=session.cwd)

    for cut in cuts(len(context)):
        first = stored_again(Digest(cwd=session.cwd).read(context[:cut]))
        assert brief_of(first.read(context[cut:]).result()) == whole, f"cut at entry {cut}"


def message_cut(context: list[dict[str, Any]]) -> int:
    """A point of the context after a stored message (as an idle leaves it), near its middle."""
    return next(
        i
        for i in range(len(context) // 2, len(context) + 1)
        if context[i - 1].get("seq") and not context[i - 1].get("compacted")
    )


def idle_at(session: Session, context: list[dict[str, Any]]) -> int:
    """Store the digest an idle at ``message_cut`` would have left; return its ``seq``."""
    digest = Digest(cwd=session.cwd).read(context[: message_cut(context)])
    per_session.store(session, digest)
    return digest.seq


@pytest.mark.parametrize("name", ["claude-code-2.x-epic.jsonl", "codex-fork.jsonl"])
def test_the_summary_reads_the_kept_digest_and_the_entries_after_it(name):
    session = imported(SAMPLES / name)
    host = controller()
    context = host.effective_context(session)
    seq = idle_at(session, context)
    assert 0 < seq < session.revision

    assert summarizer.summarize_session(session, host) == offline_brief(context, cwd=session.cwd)
    assert SummaryDigest.objects.get(session=session).seq == context[-1]["seq"]


@pytest.mark.django_db(transaction=True)
def test_a_crash_while_the_digest_is_stored_leaves_the_old_one_and_the_brief_right():
    session = imported(SAMPLES / "claude-code-2.x-epic.jsonl")
    host = controller()
    context = host.effective_context(session)
    old = idle_at(session, context)

    def crash(execute, sql, params, many, ctx):
        if sql.startswith('UPDATE "handoff_summarydigest"'):
            raise DatabaseError("server closed the connection unexpectedly")
        return execute(sql, params, many, ctx)

    with connection.execute_wrapper(crash), pytest.raises(DatabaseError):
        per_session.refresh(session, host)

    assert SummaryDigest.objects.get(session=session).seq == old
    assert per_session.brief(session, host) == offline_brief(context, cwd=session.cwd)
    assert SummaryDigest.objects.get(session=session).seq == context[-1]["seq"]


def test_an_unreadable_stored_digest_is_read_afresh():
    session = imported(SAMPLES / "codex-fork.jsonl")
    host = controller()
    context = host.effective_context(session)
    idle_at(session, context)
    SummaryDigest.objects.filter(session=session).update(state={"files": "half written"})

    assert per_session.brief(session, host) == offline_brief(context, cwd=session.cwd)


def test_a_compaction_after_the_kept_digest_starts_it_afresh():
    session = imported(SAMPLES / "claude-code-2.x-epic.jsonl")
    host = controller()
    idle_at(session, host.effective_context(session))
    compact(session)
    Message.objects.create(
        session=session,
        seq=session.revision + 100,
        role=Role.USER,
        source_kind=SourceKind.USER,
        content="Now only write the changelog, never touch the tests.",
    )
    session = Session.objects.get(pk=session.pk)

    brief = per_session.brief(session, host)

    assert brief == offline_brief(host.effective_context(session), cwd=session.cwd)
    assert any("never touch the tests" in rule for rule in brief["constraints"])


def test_a_session_turning_idle_folds_its_new_entries_into_the_kept_digest():
    session = imported(SAMPLES / "codex-fork.jsonl")

    session_idle.send(sender=Session, session=session)

    kept = SummaryDigest.objects.get(session=session)
    assert kept.seq == Message.objects.filter(session=session).latest("seq").seq
    context = controller().effective_context(session)
    assert brief_of(Digest.from_json(kept.state).result()) == offline_brief(
        context, cwd=session.cwd
    )


def long_log(exchanges: int) -> list[dict[str, Any]]:
    """A log of ``exchanges`` exchanges, each of its texts new: a request stating a rule and a
    decision, an answer to a question, a failing then a passing test run, an edit of a file of
    its own, a todo list, and the assistant's text naming a file and a decision."""
    log: list[dict[str, Any]] = []

    def add(role: str, content: str, tool: str = "", kind: str = "") -> None:
        entry = {"role": role, "source_kind": kind or role, "content": content, "tool_name": tool}
        log.append({**entry, "seq": len(log) + 1})

    for n in range(exchanges):
        add("user", f"Never touch module {n}. We'll use engine {n} instead of the old one.")
        add(
            "assistant", json.dumps({"questions": [{"question": f"Which {n}?"}]}), "AskUserQuestion"
        )
        add(
            "tool", f'User has answered your questions: "Which {n}?"="only {n}".', "AskUserQuestion"
        )
        add("assistant", json.dumps({"command": f"pytest tests/t{n}.py"}), "Bash")
        add("tool", f"1 failed, {n} passed\nExit code 1", "Bash")
        add("assistant", json.dumps({"command": f"pytest tests/u{n}.py"}), "Bash")
        add("tool", f"{n} passed", "Bash")
        add("assistant", json.dumps({"file_path": f"/w/src/m{n}.py", "content": ""}), "Write")
        add("tool", f"File created successfully at: /w/src/m{n}.py", "Write")
        todos = [{"content": f"step {n}.{i}", "status": "completed"} for i in range(3)]
        add("assistant", json.dumps({"todos": todos}), "TodoWrite")
        add("assistant", f"Done: closed task-{n}.1 in /w/src/m{n}.py. I decided to keep {n}.")
    return log


def test_the_kept_digest_stays_bounded_as_the_log_grows():
    sizes = {n: len(json.dumps(Digest(cwd="/w").read(long_log(n)).to_json())) for n in (400, 2000)}

    assert sizes[2000] < sizes[400] * 1.2
