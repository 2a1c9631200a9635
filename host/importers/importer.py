"""Import one transcript file (format detected from its content) in one transaction."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from host.importers.claude import ClaudeImporter
from host.importers.codex import CodexImporter
from host.importers.errors import TranscriptError
from host.importers.lines import JsonObject, read_lines
from host.models import Session

CLAUDE = "claude-code"
CODEX = "codex"
CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "progress", "file-history-snapshot",
     "queue-operation"}
)  # fmt: skip


def detect_format(path: Path) -> str:
    """Return ``"codex"`` or ``"claude-code"`` from the first line of ``path``.

    Raises ``TranscriptError`` for an empty file, a malformed first line, or a first line that
    belongs to neither format.
    """
    with closing(read_lines(path)) as lines:
        first = next(lines, None)
    if first is None:
        raise TranscriptError(path, None, "empty transcript")
    number, line = first
    return _format_of(path, number, line)


def _format_of(path: Path, number: int, line: JsonObject) -> str:
    if line["type"] in CODEX_TYPES and isinstance(line.get("payload"), dict):
        return CODEX
    if line["type"] in CLAUDE_TYPES or "sessionId" in line:
        return CLAUDE
    raise TranscriptError(path, number, "neither a Claude Code session log nor a Codex rollout")


def subagent_files(path: Path) -> list[Path]:
    """Return the 2.x subagent logs beside a Claude Code log: ``<stem>/subagents/agent-*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def import_transcript(path: Path, owner: User) -> list[Session]:
    """Import ``path`` for ``owner``; return the main session first, then its subagents.

    The file, and for a 2.x Claude Code log its ``subagents/`` folder, is one
    ``transaction.atomic()``: a malformed line (``TranscriptError`` naming file and line) or a
    crash half-way leaves nothing of it in the database. Raises ``AlreadyImported`` (nothing
    written) when the owner already has the transcript's session, ``OSError`` when unreadable.
    """
    kind = detect_format(path)
    with transaction.atomic():
        if kind == CODEX:
            return _run(CodexImporter(path, owner), path)
        sessions = _run(ClaudeImporter(path, owner), path)
        main = sessions[0]
        for agent_file in subagent_files(path):
            sessions += _run(ClaudeImporter(agent_file, owner, subagent_of=main), agent_file)
        return sessions


def _run(importer: ClaudeImporter | CodexImporter, path: Path) -> list[Session]:
    with closing(read_lines(path)) as lines:
        return importer.run(lines)
