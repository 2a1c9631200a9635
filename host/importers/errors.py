"""Errors of the transcript import; the command turns them into its messages."""

from __future__ import annotations

from pathlib import Path


class TranscriptError(ValueError):
    """A transcript that cannot be imported: malformed line, unknown format, no session in it.

    ``line`` is the 1-based line number of the offending line, or None when the whole file is at
    fault. ``str()`` reads ``path:line: reason`` so the user can open the exact spot.
    """

    def __init__(self, path: Path, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")


class AlreadyImported(Exception):
    """The transcript's session already exists for this owner; re-importing adds nothing."""

    def __init__(self, path: Path, external_id: str, session_id: str) -> None:
        self.path = path
        self.external_id = external_id
        self.session_id = session_id
        super().__init__(f"{path}: already imported as session {session_id}")
