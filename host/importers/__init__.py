"""Transcript import: Claude Code session logs and Codex CLI rollouts → sessions.

docs/api.md, ``import_transcript``, shows the command.

``import_transcript(path, owner)`` detects the format from the content, streams the file line by
line (repairing or skipping damaged lines, each noted as a ``LineNote``) and writes it in one
transaction through ``host.log``; ``import_report(session)`` gives the
figures ``manage.py import_transcript --json`` prints.
"""

from __future__ import annotations

from host.importers.errors import AlreadyImported, TranscriptError
from host.importers.importer import detect_format, import_transcript
from host.importers.lines import LineNote
from host.importers.summary import import_report

__all__ = [
    "AlreadyImported",
    "LineNote",
    "TranscriptError",
    "detect_format",
    "import_report",
    "import_transcript",
]
