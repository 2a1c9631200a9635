"""The handed-off source's title: archived in name only, ``· 接续xxxxxx``.

docs/spec.md, The transaction (step 8).
"""

from __future__ import annotations

SUFFIX = " · 接续"
TAG_LENGTH = 6


def handed_off_title(title: str, successor_id: str) -> str:
    """Return ``title`` with ``· 接续`` and the first six characters of the successor's id.

    Idempotent: a title that already carries this successor's suffix is returned unchanged.
    """
    tag = successor_id.replace("-", "")[:TAG_LENGTH]
    suffixed = f"{title}{SUFFIX}{tag}"
    return title if title.endswith(f"{SUFFIX}{tag}") else suffixed
