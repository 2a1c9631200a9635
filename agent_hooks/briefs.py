"""The brief as a terminal session reads it: a compact rendering within the runtime's limit,
the full brief in a file, and the record's marker.

Claude Code cuts a hook's added context to a preview past about 10 000 characters, so its
rendering stays within ``CLAUDE_CHARS`` (8 000); Codex spills added context past about 2 500
tokens, so its rendering stays within ``CODEX_TOKENS`` (estimated at four characters a
token). Both name the full brief's file (``handoff.terminal_brief``) and carry the marker
that identifies the record in a successor's log (``handoff.core.terminal``).
"""

from __future__ import annotations

from handoff.core.brief import render_brief
from handoff.core.terminal import marker
from handoff.models import HandoffRecord
from handoff.terminal_brief import brief_file

CLAUDE_CHARS = 8_000
CODEX_TOKENS = 2_400
CHARS_PER_TOKEN = 4
CUT = "\n…(cut: the whole brief is in the file named above)"


def limit(runtime: str) -> int:
    """Return the most characters the runtime's added context may hold."""
    return CLAUDE_CHARS if runtime == "claude" else CODEX_TOKENS * CHARS_PER_TOKEN


def context(record: HandoffRecord, *, runtime: str, source_title: str, carried: str) -> str:
    """Return the added context that seeds a successor: head (file, marker), the brief cut to
    the runtime's limit, and the prompt carried over from the source (``carried``, "" for
    none), which is never cut."""
    path = brief_file(record, source_title)
    head = (
        f"This session continues a handed-off session {marker(record.pk)}. "
        f"Its brief follows; the whole brief is in {path}.\n\n"
    )
    tail = (
        f"\n\nThe user's last prompt, carried over from the old session:\n{carried}"
        if carried
        else ""
    )
    room = limit(runtime) - len(head) - len(tail)
    body = render_brief(record.brief or {}, source_title=source_title)
    if len(body) > room:
        body = body[: max(0, room - len(CUT))] + CUT
    return head + body + tail
