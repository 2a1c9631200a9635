"""The full brief of a record waiting for a terminal session, in a file the successor reads
(docs/design.md, Handing off a terminal session through its hooks).

A successor opened by the new-terminal command (``handoff.core.terminal``) may run without the
product's hooks, so nothing can add the brief to its context: its prompt names this file
instead. One ``<record id>.md`` each in ``settings.AGENT_HOOKS_BRIEF_DIR`` (default
``<BASE_DIR>/var/briefs``).
"""

from __future__ import annotations

from pathlib import Path

from handoff.conf import handoff_settings
from handoff.core.brief import render_brief
from handoff.models import HandoffRecord


def brief_file(record: HandoffRecord, source_title: str) -> Path:
    """Write the record's full brief (Markdown) to its file and return the file's path.

    Written again at each call (the brief a review may have edited); a crash half-way leaves
    the previous text or a partial one, written whole at the next call. Raises ``OSError``
    when the folder cannot be written."""
    folder = handoff_settings().brief_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.pk}.md"
    path.write_text(render_brief(record.brief or {}, source_title=source_title) + "\n")
    return path.absolute()
