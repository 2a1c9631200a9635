"""Read a JSONL transcript one line at a time (the file is never loaded whole).

Logs that real agents leave behind are damaged in a few known ways: a crash pads the file with
NUL bytes or cuts its last line short, a tool result carries bytes that are not UTF-8 or
escaped lone surrogates, tool output carries NUL characters. A damaged line is repaired when its
record can still be read (the damage is replaced by U+FFFD, the replacement character, or the
padding removed) and skipped when it cannot; either way it is noted as ``file:line: reason``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.text import UNSTORABLE, unstorable_kind
from host.importers.errors import TranscriptError
from host.usage import MAX_CALL_TOKENS

JsonObject = dict[str, Any]

# The largest context window a session stores (its column is a 32-bit integer), tokens.
MAX_WINDOW = 2**31 - 1

REPLACEMENT = "\ufffd"
# The escapes that may put an unstorable character into a parsed string (cheap pre-check).
UNSTORABLE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
NUL_BYTE = b"\x00"
PADDING = b"\x00 \t\r\n"


@dataclass(frozen=True)
class LineNote:
    """A transcript line the import repaired or skipped; ``str()`` reads ``path:line: reason``."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def _storable(value: Any, found: set[str]) -> Any:
    """Return ``value`` (parsed JSON) with NULs and lone surrogates in strings and keys replaced.

    Adds the name of each kind replaced (``NUL characters``, ``lone surrogates``) to ``found``.
    """
    if isinstance(value, str):
        for char in UNSTORABLE.findall(value):
            found.add(f"{unstorable_kind(char)}s")
        return UNSTORABLE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [_storable(item, found) for item in value]
    if isinstance(value, dict):
        return {_storable(k, found): _storable(v, found) for k, v in value.items()}
    return value


def _parse(raw: bytes) -> tuple[Any, list[str]]:
    """Parse one raw line; return ``(value, repairs)``. Raises ``ValueError`` when unreadable."""
    repairs = ["NUL padding removed"] if NUL_BYTE in raw else []
    raw = raw.strip(PADDING)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        repairs.append("bytes that are not UTF-8 stored as U+FFFD")
    value = json.loads(text)
    if UNSTORABLE_ESCAPE.search(raw):
        found: set[str] = set()
        value = _storable(value, found)
        repairs += [f"{kind} stored as U+FFFD" for kind in sorted(found)]
    return value, repairs


def read_lines(
    path: Path, notes: list[LineNote] | None = None
) -> Generator[tuple[int, JsonObject], None, None]:
    """Yield ``(line number, object)`` for each readable record of ``path``, 1-based.

    Blank lines are passed over. A damaged line is repaired (NUL padding removed; bytes that
    are not UTF-8, NUL characters and lone surrogates stored as U+FFFD) or, when it still is
    not a JSON object with a string ``type`` (a line cut short by a crash, NUL bytes only), skipped;
    each is appended to ``notes`` as a ``LineNote``. Raises ``OSError`` when the file cannot be
    read.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            value = parse_line(path, number, raw, notes)
            if value is not None:
                yield number, value


def parse_line(
    path: Path, number: int, raw: bytes, notes: list[LineNote] | None = None
) -> JsonObject | None:
    """Return the record of line ``number`` of ``path`` (``raw``: its bytes), None when blank
    or damaged beyond reading; repairs and skips are noted as ``read_lines`` says."""
    if not raw.strip():
        return None
    try:
        value, repairs = _parse(raw)
    except ValueError as exc:
        reason = "only NUL bytes" if not raw.strip(PADDING) else f"not valid JSON ({exc})"
        _note(notes, path, number, f"skipped: {reason}")
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        _note(notes, path, number, 'skipped: not a JSON object with a "type"')
        return None
    if repairs:
        _note(notes, path, number, f"repaired: {'; '.join(repairs)}")
    return value


def _note(notes: list[LineNote] | None, path: Path, number: int, reason: str) -> None:
    if notes is not None:
        notes.append(LineNote(path, number, reason))


class LineReader:
    """Typed access to one line's fields; a missing or mistyped field raises ``TranscriptError``."""

    def __init__(self, path: Path, number: int) -> None:
        self.path = path
        self.number = number

    def fail(self, reason: str) -> TranscriptError:
        """Return the error for this line (the caller raises it)."""
        return TranscriptError(self.path, self.number, reason)

    def obj(self, parent: Mapping[str, Any], key: str) -> JsonObject:
        """Return ``parent[key]``, which must be a JSON object."""
        value = parent.get(key)
        if not isinstance(value, dict):
            raise self.fail(f'missing object "{key}"')
        return value

    def text(self, parent: Mapping[str, Any], key: str) -> str:
        """Return ``parent[key]``, which must be a string."""
        value = parent.get(key)
        if not isinstance(value, str):
            raise self.fail(f'missing string "{key}"')
        return value

    def count(self, parent: Mapping[str, Any], key: str, most: int = MAX_CALL_TOKENS) -> int:
        """Return ``parent[key]`` as a token count: an integer from 0 to ``most``, 0 when
        absent/null. ``most`` defaults to what one model call may report."""
        value = parent.get(key)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= most:
            raise self.fail(f'"{key}" is not a token count (0 to {most})')
        return value

    def window(self, parent: Mapping[str, Any], key: str) -> int | None:
        """Return ``parent[key]`` as a context window in tokens, None when it is no integer."""
        value = parent.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        if not 0 <= value <= MAX_WINDOW:
            raise self.fail(f'"{key}" is not a context window (0 to {MAX_WINDOW})')
        return value
