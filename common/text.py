"""Text the database cannot hold, defined once for every app.

PostgreSQL refuses a NUL character in ``text`` and ``jsonb`` ("unsupported Unicode escape
sequence"), and a lone surrogate (U+D800–U+DFFF outside a pair) cannot be encoded as UTF-8 at
all, on any database. Input that carries one is refused with the field named (a brief), or
repaired (a transcript line), before anything is written. Plain Python: the handoff's core
may import it.
"""

from __future__ import annotations

import re

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""One character the database cannot store: NUL or a lone surrogate (a surrogate in a ``str``
is always lone: decoders pair valid ones)."""


def unstorable_kind(char: str) -> str:
    """Name what ``char`` (a match of ``UNSTORABLE``) is: ``NUL character`` or ``lone
    surrogate``."""
    return "NUL character" if char == "\x00" else "lone surrogate"


def first_unstorable(text: str) -> str | None:
    """Return what the first character of ``text`` that the database cannot store is, as a
    phrase for an error message (``a NUL character (\\x00)``, ``a lone surrogate (U+D800)``),
    or None when ``text`` can be stored as it is."""
    match = UNSTORABLE.search(text)
    if match is None:
        return None
    char = match.group()
    code = "\\x00" if char == "\x00" else f"U+{ord(char):04X}"
    return f"a {unstorable_kind(char)} ({code})"
