"""Follow session logs while their runtime writes them: import what each one gained.

One ``follow_step`` reads a log from its stored offset (``host.models.FollowedFile``) up to its
last newline — a line still being written waits for the next step — and imports those lines
with the importers' own rules (docs/api.md, `import_transcript`: subagent files, resumed
sessions' copies and Codex forks count each API response once; a damaged line is reported and
skipped) in one transaction that also stores the new offset and the importer's parse state. The
step claims the file's row first (``SELECT … FOR UPDATE``; SQLite's immediate transactions
serialize writers), so two followers, or a follower restarted half-way, never import a line
twice. A log replaced by another file, or shorter than its offset, is read again from its start
into the session it fed: what the session has (messages by external id, its compactions, each
counted API response) is not added again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from django.contrib.auth.models import User
from django.db import transaction

from host.importers.claude import ClaudeImporter
from host.importers.codex import CodexImporter
from host.importers.errors import AlreadyImported, TranscriptError
from host.importers.importer import CLAUDE, CODEX, format_of
from host.importers.lines import JsonObject, LineNote, parse_line
from host.models import FollowedFile, Message, Runtime, Session, SessionEvent
from host.signals import entry_appended

# Most bytes one step reads (a longer line is read whole all the same).
MAX_PART = 8 * 1024 * 1024

Importer = ClaudeImporter | CodexImporter


@dataclass
class Step:
    """What one ``follow_step`` did to one log.

    ``lines``: lines read (blank and damaged ones included); ``messages``: messages stored;
    ``notes``: the damaged lines repaired or skipped (``path:line: reason``); ``failed``: why
    the log is no longer followed ("" while it is); ``more``: complete lines wait beyond
    ``MAX_PART``; ``waiting``: a subagent log whose main log has no session yet; ``settled``:
    nothing of the log is left queued (its last response counted), so it needs no settling.
    """

    path: Path
    lines: int = 0
    messages: int = 0
    session_id: str | None = None
    notes: list[LineNote] = field(default_factory=list)
    failed: str = ""
    more: bool = False
    waiting: bool = False
    settled: bool = True


def main_log_of(path: Path) -> Path | None:
    """Return the main log a 2.x subagent log (``<main>/subagents/agent-*.jsonl``) belongs to,
    None for any other log."""
    if path.parent.name == "subagents" and path.name.startswith("agent-"):
        folder = path.parent.parent
        return folder.with_name(folder.name + ".jsonl")
    return None


def follow_step(path: Path, owner: User, *, settle: bool = False) -> Step:
    """Import what ``path`` gained since the last step for ``owner``; return what it did.

    ``settle`` (the log went quiet): the open API response is closed and every queued message
    appended, so the page shows the whole log; more lines of that response later replace its
    usage. Entries appended to a session that existed before the step are announced
    (``entry_appended``), and each session touched is announced (``session_changed``), inside
    the transaction; each is marked as a session of its runtime (``Runtime``: its input belongs to
    the terminal). A log breaking its format's rules, or whose session was imported already,
    is marked ``failed`` and no longer read. Raises ``OSError`` when the log cannot be read.
    """
    step = Step(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return step
    with handle:
        try:
            with transaction.atomic():
                _step(handle, owner, step, settle)
        except (TranscriptError, AlreadyImported) as error:
            step.failed = str(error)
            FollowedFile.objects.filter(owner=owner, path=str(path)).update(failed=step.failed)
    return step


def _claim(owner: User, path: Path) -> FollowedFile:
    """Return the log's row, locked until the transaction ends (created on first sight)."""
    row, _ = FollowedFile.objects.get_or_create(owner=owner, path=str(path))
    return FollowedFile.objects.select_for_update().get(pk=row.pk)


def _step(handle: BinaryIO, owner: User, step: Step, settle: bool) -> None:
    row = _claim(owner, step.path)
    if row.failed:
        step.failed = row.failed
        return
    stat = os.fstat(handle.fileno())
    rereading: Session | None = None
    if (row.device, row.inode) != (stat.st_dev, stat.st_ino) or stat.st_size < row.offset:
        rereading = row.session if row.offset else None
        row.device, row.inode, row.offset, row.lines, row.state = stat.st_dev, stat.st_ino, 0, 0, {}
    part = _read_part(handle, row.offset)
    step.more = len(part) >= MAX_PART
    step.settled = row.state.get("settled", True)
    if not part and (not settle or step.settled):
        if rereading is not None:
            row.save()
        return
    records = []
    for raw in part[:-1].split(b"\n") if part else []:
        row.lines += 1
        step.lines += 1
        value = parse_line(step.path, row.lines, raw, step.notes)
        if value is not None:
            records.append((row.lines, value))
    importer = _importer(step, owner, row, records, rereading)
    if importer is None:
        if step.waiting:
            step.lines, step.notes, step.settled = 0, [], False
            return
        row.offset += len(part)
        row.save()
        return
    before = {writer.session.pk: writer.session.revision for writer in importer.writers()}
    importer.feed(records)
    if settle:
        importer.settle()
    runtime = Runtime.CODEX if isinstance(importer, CodexImporter) else Runtime.CLAUDE
    for writer in importer.writers():
        session = writer.session
        if session.runtime != runtime:  # its input belongs to the runtime's terminal
            Session.objects.filter(pk=session.pk).update(runtime=runtime)
            session.runtime = runtime
        writer.write_settled()
        writer.write_back(f"Imported {step.path.stem}", created=session.pk not in before)
        step.messages += _announce_entries(session, before.get(session.pk))
    writers = importer.writers()
    step.session_id = str(writers[0].session.pk) if writers else None
    row.session = writers[0].session if writers else None
    row.offset += len(part)
    kind = CODEX if isinstance(importer, CodexImporter) else CLAUDE
    row.state = {"format": kind, "importer": importer.state(), "settled": settle}
    step.settled = settle
    row.save()


def _read_part(handle: BinaryIO, offset: int) -> bytes:
    """Return the bytes from ``offset`` up to the last newline within ``MAX_PART`` (a longer
    first line whole once it is complete); b"" when no complete line waits."""
    handle.seek(offset)
    data = handle.read(MAX_PART)
    end = data.rfind(b"\n")
    if end >= 0:
        return data[: end + 1]
    if len(data) < MAX_PART:
        return b""
    rest = handle.readline()
    return data + rest if rest.endswith(b"\n") else b""


def _importer(
    step: Step,
    owner: User,
    row: FollowedFile,
    records: list[tuple[int, JsonObject]],
    rereading: Session | None,
) -> Importer | None:
    """Return the log's importer with its parse state taken up; None before its first record
    (or, for a subagent log, before its main has a session: ``step.waiting``)."""
    kind = row.state.get("format")
    if kind is None:
        if not records:
            return None
        number, first = records[0]
        kind = format_of(step.path, number, first)
    if kind == CODEX:
        importer: Importer = CodexImporter(step.path, owner, rereading=rereading)
    else:
        main_log = main_log_of(step.path)
        main = None
        if main_log is not None:
            found = FollowedFile.objects.filter(owner=owner, path=str(main_log)).first()
            main = found.session if found is not None else None
            if main is None:
                step.waiting = True
                return None
        importer = ClaudeImporter(step.path, owner, subagent_of=main, rereading=rereading)
    if "importer" in row.state:
        importer.restore(row.state["importer"])
    return importer


def _announce_entries(session: Session, revision: int | None) -> int:
    """Send ``entry_appended`` for each entry after ``revision`` (None: the session is new,
    shown whole by its ``session.added``); return how many messages were stored."""
    since = revision or 0
    messages = list(Message.objects.filter(session=session, seq__gt=since))
    if revision is not None:
        events = SessionEvent.objects.filter(session=session, seq__gt=since)
        entries: list[Any] = sorted([*messages, *events], key=lambda entry: entry.seq)
        for entry in entries:
            entry_appended.send(sender=Session, session=session, entry=entry)
    return len(messages)
