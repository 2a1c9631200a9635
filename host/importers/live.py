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

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
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
from host.signals import entries_appended, log_followed

logger = logging.getLogger(__name__)

# Most bytes one step reads (a longer line is read whole all the same): a few batches
# (``host.importers.writer.BATCH_ENTRIES``) of real logs, about 2 000 messages of the
# benchmark's. A log with more unread is imported in steps of this size, each its own
# transaction with its offset, read line by line (memory holds a batch, not the part) and
# holding a database lock one part long. Smaller parts cost a first scan more of each step's
# fixed work (its follower events): 1 MiB took a fifth more CPU on 36 MiB of logs.
MAX_PART = 4 * 1024 * 1024

Importer = ClaudeImporter | CodexImporter
Record = tuple[int, JsonObject]
# Most entries one step announces one by one (``entries_appended``); a page told of more reads
# its log again.
LIVE_ENTRIES = 50


@dataclass
class Step:
    """What one ``follow_step`` did to one log.

    ``lines``: lines read (blank and damaged ones included); ``messages``: messages stored;
    ``notes``: the damaged lines repaired or skipped (``path:line: reason``); ``failed``: why
    the log is no longer followed ("" while it is); ``more``: complete lines wait beyond
    ``MAX_PART``; ``waiting``: a subagent log whose main log has no session yet; ``settled``:
    nothing of the log is left queued (its last response counted), so it needs no settling;
    ``main``: the main session the step wrote to (None for a subagent's log).
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
    main: Session | None = field(default=None, repr=False)


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
    if step.messages and step.main is not None:
        _announce_followed(step.main)
    return step


def _announce_followed(session: Session) -> None:
    """Send ``log_followed`` for the main session a step stored messages in; a receiver's
    error is logged, the step stands."""
    for receiver, outcome in log_followed.send_robust(sender=Session, session=session):
        if isinstance(outcome, Exception):
            logger.error("log_followed receiver %r failed", receiver, exc_info=outcome)


def _claim(owner: User, path: Path) -> FollowedFile:
    """Return the log's row, locked until the transaction ends (created on first sight). One
    statement once the row exists."""
    rows = FollowedFile.objects.select_for_update()
    row = rows.filter(owner=owner, path=str(path)).first()
    if row is None:
        created, _ = FollowedFile.objects.get_or_create(owner=owner, path=str(path))
        row = rows.get(pk=created.pk)
    return row


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
    handle.seek(row.offset)
    part = _Part(handle)
    records = _records(step, row, part.lines())
    first = next(records, None)
    step.settled = row.state.get("settled", True)
    if not part.size and (not settle or step.settled):
        if rereading is not None:
            row.save()
        return
    importer = _importer(step, owner, row, first, rereading)
    if importer is None:
        if step.waiting:
            step.lines, step.notes, step.settled = 0, [], False
            return
        step.more = part.size >= MAX_PART
        row.offset += part.size
        row.save()
        return
    before = {writer.session.pk: writer.session.revision for writer in importer.writers()}
    importer.feed(chain([first], records) if first is not None else records)
    step.more = part.size >= MAX_PART
    settle = settle and not step.more  # the log is quiet only once its last line is read
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
    if row.session is not None and row.session.parent_id is None:
        step.main = row.session
    row.offset += part.size
    kind = CODEX if isinstance(importer, CodexImporter) else CLAUDE
    row.state = {"format": kind, "importer": importer.state(), "settled": settle}
    step.settled = settle
    row.save()


@dataclass
class _Part:
    """The complete lines of a log from where its handle stands, read one at a time: at least
    one line, then none past ``MAX_PART`` bytes, and never a line without its newline (it is
    still being written). ``size``: the bytes of the lines read so far."""

    handle: BinaryIO
    size: int = 0

    def lines(self) -> Iterator[bytes]:
        """Yield each complete line, its newline left out."""
        while self.size < MAX_PART:
            raw = self.handle.readline()
            if not raw.endswith(b"\n"):
                return
            self.size += len(raw)
            yield raw[:-1]


def _records(step: Step, row: FollowedFile, lines: Iterator[bytes]) -> Iterator[Record]:
    """Yield ``(line number, record)`` for each readable line of ``lines``, counting every line
    in ``row`` and ``step`` and noting the damaged ones in ``step.notes``."""
    for raw in lines:
        row.lines += 1
        step.lines += 1
        value = parse_line(step.path, row.lines, raw, step.notes)
        if value is not None:
            yield row.lines, value


def _importer(
    step: Step,
    owner: User,
    row: FollowedFile,
    first: Record | None,
    rereading: Session | None,
) -> Importer | None:
    """Return the log's importer with its parse state taken up; None before its first record
    (``first``: the first of this step, None when it has none) or, for a subagent log, before
    its main has a session (``step.waiting``)."""
    kind = row.state.get("format")
    if kind is None:
        if first is None:
            return None
        kind = format_of(step.path, *first)
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
    """Send ``entries_appended`` once for the entries after ``revision`` (None: the session is
    new, shown whole by its ``session.added``): the entries themselves when there are at most
    ``LIVE_ENTRIES``, else None (the page reads its log again). Return how many messages were
    stored."""
    since = revision or 0
    messages = Message.objects.filter(session=session, seq__gt=since)
    if revision is None:
        return messages.count()
    few = list(messages.order_by("seq")[: LIVE_ENTRIES + 1])
    count = len(few) if len(few) <= LIVE_ENTRIES else messages.count()
    entries: list[Any] | None = None
    if count <= LIVE_ENTRIES:
        entries = [*few, *SessionEvent.objects.filter(session=session, seq__gt=since)]
        entries = (
            sorted(entries, key=lambda entry: entry.seq) if len(entries) <= LIVE_ENTRIES else None
        )
    if entries != []:
        entries_appended.send(sender=Session, session=session, entries=entries)
    return count
