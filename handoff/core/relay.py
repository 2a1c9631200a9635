"""Relay ids: deterministic, so a retried forward adds nothing.

docs/spec.md, Forwarding and cycles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def relay_id(source_id: str, message_ids: Sequence[str]) -> str:
    """Return ``sha256("<source>:forward:<id1>,<id2>…")`` as 64 hex characters.

    Raises ``ValueError`` when ``message_ids`` is empty (there is nothing to relay).
    """
    if not message_ids:
        raise ValueError("a relay needs at least one message id")
    raw = f"{source_id}:forward:{','.join(str(m) for m in message_ids)}"
    return hashlib.sha256(raw.encode()).hexdigest()
