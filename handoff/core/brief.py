"""The brief (docs/spec.md, Brief): validation, fence stripping, the size cap, rendering."""

from __future__ import annotations

import json
import re
from typing import Any

from common.text import first_unstorable

# Field -> what it holds (docs/spec.md, Brief). ``goal`` is a string, the rest lists.
BRIEF_FIELDS: dict[str, str] = {
    "goal": "The current user objective",
    "decisions": "Chosen options, accepted corrections",
    "constraints": "User requirements, permissions, prohibitions",
    "artifacts": "Absolute paths, workspace, input versions, key evidence",
    "verified": "What was actually verified, kept distinct from what was merely done",
    "pending": "Unfinished work and the concrete reason it is blocked",
    "next_steps": "Specific next actions",
    "uncertainties": "Unknowns, unverified items, details the earlier summaries may have dropped",
}
LIST_FIELDS = tuple(name for name in BRIEF_FIELDS if name != "goal")
MAX_BRIEF_CHARS = 40_000

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


class BriefError(ValueError):
    """The model's output is not a valid brief; the handoff fails rather than seed garbage."""


def strip_fences(text: str) -> str:
    """Return ``text`` without a surrounding Markdown code fence (```json … ```)."""
    match = _FENCE.match(text)
    return match.group("body") if match else text.strip()


def validate_brief(obj: Any) -> dict[str, Any]:
    """Return the brief with exactly the schema's fields, or raise ``BriefError``.

    ``goal`` must be a non-empty string; every other field a list of strings (a missing list
    counts as empty). Unknown fields are refused. No text may hold a character the database
    cannot store (NUL, a lone surrogate): the message names the field (``goal``,
    ``decisions[2]``, counted from 0), so a brief from the model or an edit is refused before
    anything is written. The serialized brief must not exceed ``MAX_BRIEF_CHARS`` characters.
    """
    if not isinstance(obj, dict):
        raise BriefError(f"the brief must be a JSON object, not {type(obj).__name__}")
    unknown = sorted(set(obj) - set(BRIEF_FIELDS))
    if unknown:
        raise BriefError(f"unknown brief field(s): {', '.join(unknown)}")
    goal = obj.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise BriefError("goal must be a non-empty string")
    _refuse_unstorable("goal", goal)
    brief: dict[str, Any] = {"goal": goal.strip()}
    for name in LIST_FIELDS:
        items = obj.get(name, [])
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise BriefError(f"{name} must be a list of strings")
        for index, item in enumerate(items):
            _refuse_unstorable(f"{name}[{index}]", item)
        brief[name] = [i.strip() for i in items if i.strip()]
    size = len(json.dumps(brief, ensure_ascii=False))
    if size > MAX_BRIEF_CHARS:
        raise BriefError(f"the brief is {size} characters; the cap is {MAX_BRIEF_CHARS}")
    return brief


def _refuse_unstorable(field: str, text: str) -> None:
    """Raise ``BriefError`` naming ``field`` when ``text`` holds a character the database
    cannot store."""
    found = first_unstorable(text)
    if found is not None:
        raise BriefError(f"{field} holds {found}, which the database cannot store")


def parse_brief(text: str) -> dict[str, Any]:
    """Strip fences, parse JSON and validate; raise ``BriefError`` on any failure."""
    try:
        obj = json.loads(strip_fences(text))
    except json.JSONDecodeError as exc:
        raise BriefError(f"the brief is not valid JSON: {exc.msg} at position {exc.pos}") from exc
    return validate_brief(obj)


HEADINGS = {
    "decisions": "Decisions",
    "constraints": "Constraints",
    "artifacts": "Artifacts",
    "verified": "Verified",
    "pending": "Pending",
    "next_steps": "Next steps",
    "uncertainties": "Uncertainties",
}


def render_brief(brief: dict[str, Any], *, source_title: str = "") -> str:
    """Render a validated brief as the successor's first message (Markdown text)."""
    origin = f" from “{source_title}”" if source_title else ""
    lines = [f"# Handoff brief{origin}", "", f"**Goal:** {brief['goal']}"]
    for name, heading in HEADINGS.items():
        if brief.get(name):
            lines += ["", f"## {heading}", *(f"- {item}" for item in brief[name])]
    return "\n".join(lines)
