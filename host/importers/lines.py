"""Read a JSONL transcript one line at a time (the file is never loaded whole)."""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

from host.importers.errors import TranscriptError
from host.usage import MAX_CALL_TOKENS

JsonObject = dict[str, Any]

# The largest context window a session stores (its column is a 32-bit integer), tokens.
MAX_WINDOW = 2**31 - 1

# NUL cannot be stored in a PostgreSQL text column; it is read as U+FFFD, the replacement
# character (tool output sometimes carries one).
NUL = "\x00"
REPLACEMENT = "\ufffd"


def _without_nul(value: Any) -> Any:
    """Return ``value`` (parsed JSON) with every NUL in its strings and keys replaced."""
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT)
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    return value


def read_lines(path: Path) -> Generator[tuple[int, JsonObject], None, None]:
    """Yield ``(line number, object)`` for each non-blank line of ``path``, 1-based.

    Raises ``TranscriptError`` naming the line when it is not UTF-8, not JSON, or not a JSON
    object with a string ``type``; ``OSError`` when the file cannot be read. A NUL character
    in a string is read as U+FFFD (the database cannot store it).
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise TranscriptError(path, number, f"not valid JSON ({exc})") from exc
            if b"\\u0000" in raw:
                value = _without_nul(value)
            if not isinstance(value, dict) or not isinstance(value.get("type"), str):
                raise TranscriptError(path, number, 'not a JSON object with a "type"')
            yield number, value


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
