"""Read a JSONL transcript one line at a time (the file is never loaded whole)."""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

from host.importers.errors import TranscriptError

JsonObject = dict[str, Any]


def read_lines(path: Path) -> Generator[tuple[int, JsonObject], None, None]:
    """Yield ``(line number, object)`` for each non-blank line of ``path``, 1-based.

    Raises ``TranscriptError`` naming the line when it is not UTF-8, not JSON, or not a JSON
    object with a string ``type``; ``OSError`` when the file cannot be read.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise TranscriptError(path, number, f"not valid JSON ({exc})") from exc
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

    def count(self, parent: Mapping[str, Any], key: str) -> int:
        """Return ``parent[key]`` as a token count: a non-negative integer, 0 when absent/null."""
        value = parent.get(key)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(f'"{key}" is not a token count')
        return value
