"""Import one transcript file (format detected from its content) in one transaction."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from host.importers.claude import ClaudeImporter
from host.importers.codex import CodexImporter
from host.importers.errors import TranscriptError
from host.importers.lines import JsonObject, LineNote, read_lines
from host.importers.responses import ResponseLedger
from host.models import Session

CLAUDE = "claude-code"
CODEX = "codex"
CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "progress", "file-history-snapshot",
     "queue-operation"}
)  # fmt: skip


def detect_format(path: Path, notes: list[LineNote] | None = None) -> str:
    """Return ``"codex"`` or ``"claude-code"`` from the first readable record of ``path``.

    Damaged lines before that record are appended to ``notes``. Raises ``TranscriptError`` for
    a file without any readable record (empty, or every line damaged) or whose first record
    belongs to neither format.
    """
    with closing(read_lines(path, notes)) as lines:
        first = next(lines, None)
    if first is None:
        raise TranscriptError(path, None, "no valid record in this transcript")
    number, line = first
    return format_of(path, number, line)


def format_of(path: Path, number: int, line: JsonObject) -> str:
    """Return ``"codex"`` or ``"claude-code"`` for a log whose first record is ``line``.

    Raises ``TranscriptError`` (at ``path:number``) when it belongs to neither format.
    """
    if line["type"] in CODEX_TYPES and isinstance(line.get("payload"), dict):
        return CODEX
    if line["type"] in CLAUDE_TYPES or "sessionId" in line:
        return CLAUDE
    raise TranscriptError(path, number, "neither a Claude Code session log nor a Codex rollout")


def subagent_files(path: Path) -> list[Path]:
    """Return the 2.x subagent logs beside a Claude Code log: ``<stem>/subagents/agent-*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def import_transcript(
    path: Path, owner: User, notes: list[LineNote] | None = None
) -> list[Session]:
    """Import ``path`` for ``owner``; return the main session first, then its subagents.

    Every readable record is imported; each damaged line repaired or skipped is appended to
    ``notes`` (``LineNote``: ``path:line: reason``, see ``host.importers.lines``). The file, and
    for a 2.x Claude Code log its ``subagents/`` folder, is one ``transaction.atomic()``: a
    record that breaks its format's rules (``TranscriptError`` naming file and line), a file
    without any readable record, or a crash half-way leaves nothing of it in the database.
    Raises ``AlreadyImported`` (nothing written) when the owner already has the transcript's
    session, ``OSError`` when unreadable.
    """
    before_first: list[LineNote] = []
    try:
        kind = detect_format(path, before_first)
    except TranscriptError:
        if notes is not None:
            notes += before_first  # the import reads them again when it goes on
        raise
    with transaction.atomic():
        if kind == CODEX:
            return _run(CodexImporter(path, owner), path, notes)
        ledger = ResponseLedger(owner)
        sessions = _run(ClaudeImporter(path, owner, ledger=ledger), path, notes)
        main = sessions[0]
        for agent_file in subagent_files(path):
            agent = ClaudeImporter(agent_file, owner, subagent_of=main, ledger=ledger)
            sessions += _run(agent, agent_file, notes)
        return sessions


def _run(
    importer: ClaudeImporter | CodexImporter, path: Path, notes: list[LineNote] | None
) -> list[Session]:
    with closing(read_lines(path, notes)) as lines:
        return importer.run(lines)
