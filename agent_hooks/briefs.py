"""The brief as a terminal session reads it: a compact rendering within the runtime's limit,
the full brief in a file, and the record's marker.

Claude Code cuts a hook's added context to a preview past about 10 000 characters, so its
rendering stays within ``CLAUDE_CHARS`` (8 000); Codex spills added context past about 2 500
tokens, so its rendering stays within ``CODEX_TOKENS`` (estimated at four characters a
token). Both name the full brief's file (``settings.AGENT_HOOKS_BRIEF_DIR``, default
``<BASE_DIR>/var/briefs``, one ``<record id>.md`` each) and carry the marker
that identifies the record in a successor's log (``handoff.core.terminal``).
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from handoff.core.brief import render_brief
from handoff.core.terminal import marker
from handoff.models import HandoffRecord

CLAUDE_CHARS = 8_000
CODEX_TOKENS = 2_400
CHARS_PER_TOKEN = 4
CUT = "\n…(cut: the whole brief is in the file named above)"


def limit(runtime: str) -> int:
    """Return the most characters the runtime's added context may hold."""
    return CLAUDE_CHARS if runtime == "claude" else CODEX_TOKENS * CHARS_PER_TOKEN


def brief_file(record: HandoffRecord, source_title: str) -> Path:
    """Write the record's full brief (Markdown) to its file and return the file's path.

    Written again at each call (the brief a review may have edited); raises ``OSError`` when
    the folder cannot be written."""
    folder = Path(getattr(settings, "AGENT_HOOKS_BRIEF_DIR", settings.BASE_DIR / "var" / "briefs"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.pk}.md"
    path.write_text(render_brief(record.brief or {}, source_title=source_title) + "\n")
    return path.absolute()


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
