"""Each hook first makes the follower catch up on its session's log (docs/spec.md, Token sources:
counts come from the log only; a hook never writes figures itself).

``catch_up`` imports the unread lines of the payload's ``transcript_path`` through the live
importer (``host.importers.live.follow_step``: under the log's row lock, from its stored
offset, so a hook and ``follow_sessions`` never import a line twice) and returns the host
session the runtime's session id names, marked as running the product's hooks.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.contrib.auth.models import User

from agent_hooks.payload import Hook
from host.external import by_external_id, note_hooks
from host.folders import runtime_folders
from host.importers.live import follow_step
from host.models import Session

logger = logging.getLogger(__name__)


def log_path(hook: Hook) -> Path | None:
    """Return the session log the hook names: an absolute ``.jsonl`` path inside the folders
    where the runtimes write their logs on this machine (``host.folders.runtime_folders``),
    else None: a payload cannot make the server read any other file."""
    path = Path(hook.transcript) if hook.transcript else None
    if path is None or not path.is_absolute() or path.suffix != ".jsonl":
        return None
    resolved = path.resolve()
    if not any(resolved.is_relative_to(found.path.resolve()) for found in runtime_folders()):
        logger.warning("hook %s names a log outside the runtimes' folders", hook.delivery)
        return None
    return path


def catch_up(owner: User, hook: Hook) -> Session | None:
    """Import what the hook's log gained (step after step while more waits) and return its
    session (None before the runtime wrote a record of it). A log that cannot be read is
    logged and skipped: the hook's answer never waits on it."""
    path = log_path(hook)
    if path is not None:
        try:
            step = follow_step(path, owner, settle=True)
            while step.more and not step.failed:  # a log grown past one step's part
                step = follow_step(path, owner, settle=True)
        except OSError:
            logger.warning("the log of hook %s could not be read", hook.delivery)
        else:
            if step.failed:
                logger.warning(
                    "the log of session %s is not followed: %s", hook.session_key, step.failed
                )
    session = by_external_id(owner.pk, hook.session_key)
    if session is not None:
        note_hooks(session)
    return session
