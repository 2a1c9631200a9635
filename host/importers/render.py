"""Plain-text renderings of transcript content blocks, shared by the importers."""

from __future__ import annotations

import json
from typing import Any

IMAGE = "[image]"


def compact_json(value: Any) -> str:
    """Render a tool call's input (any JSON value) on one line, without extra spaces."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def block_text(content: Any) -> str:
    """Render message content: a string, or a list of text / image blocks joined by newlines.

    Text blocks (``text``, ``input_text``, ``output_text``) give their text, image blocks
    ``[image]``; anything else is rendered as compact JSON so nothing silently disappears.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return compact_json(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and str(block.get("type", "")).endswith("image"):
            parts.append(IMAGE)
        else:
            parts.append(compact_json(block))
    return "\n".join(parts)
