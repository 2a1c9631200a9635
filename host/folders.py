"""The runtimes' session folders on the machine the server runs on, and who follows which.

``follow_sessions`` without folders follows the ones users switched on in Settings →
Conversation Collaboration (docs/api.md, `follow_sessions`): the product follows only its own
machine's folders, so every user is offered the same ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from host.models import FollowedFolder
from host.signals import folder_switched


@dataclass(frozen=True)
class RuntimeFolder:
    """A runtime's session folder: ``runtime`` (its name, shown), ``path`` (absolute)."""

    runtime: str
    path: Path

    @property
    def exists(self) -> bool:
        """Whether the folder is there now."""
        return self.path.is_dir()


def runtime_folders(
    environ: Mapping[str, str] = os.environ, home: Path | None = None
) -> list[RuntimeFolder]:
    """Return where Claude Code and Codex write their session logs, Claude Code first.

    Claude Code: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``; Codex:
    ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``. ``~`` is ``home`` (default: the
    server user's home, ``%USERPROFILE%`` on Windows), the same on Linux, macOS and Windows.
    """
    home = Path.home() if home is None else home
    claude = environ.get("CLAUDE_CONFIG_DIR")
    codex = environ.get("CODEX_HOME")
    return [
        RuntimeFolder(
            "Claude Code", ((Path(claude) if claude else home / ".claude") / "projects").absolute()
        ),
        RuntimeFolder(
            "Codex", ((Path(codex) if codex else home / ".codex") / "sessions").absolute()
        ),
    ]


def switched_on(user_id: int) -> set[str]:
    """Return the paths of the folders the user ``user_id`` follows (none by default)."""
    return set(FollowedFolder.objects.filter(owner_id=user_id).values_list("path", flat=True))


def folder_rows(user_id: int) -> list[dict[str, Any]]:
    """Return each runtime folder as Settings shows it to the user ``user_id``:
    ``{"runtime", "path" (str), "exists", "on"}``."""
    on = switched_on(user_id)
    return [
        {"runtime": f.runtime, "path": str(f.path), "exists": f.exists, "on": str(f.path) in on}
        for f in runtime_folders()
    ]


def switch_folder(user_id: int, path: str, on: bool) -> bool:
    """Follow (``on``) or stop following the runtime folder ``path`` for the user ``user_id``;
    return whether that changed anything (a repeated switch changes nothing).

    Raises ``ValueError`` when ``path`` is not one of ``runtime_folders()``: a user follows only
    the runtimes' folders, never a path of their choosing. A change is announced in its
    transaction (``host.signals.folder_switched``), so the user's other tabs show it.
    """
    if path not in {str(folder.path) for folder in runtime_folders()}:
        raise ValueError(_("%(path)s is not a runtime's sessions folder.") % {"path": path})
    with transaction.atomic():
        if on:
            changed = FollowedFolder.objects.get_or_create(owner_id=user_id, path=path)[1]
        else:
            changed = FollowedFolder.objects.filter(owner_id=user_id, path=path).delete()[0] > 0
        if changed:
            folder_switched.send(sender=FollowedFolder, owner_id=user_id, path=path, on=on)
    return changed


def followed_folders() -> dict[Path, User]:
    """Return every switched-on folder with the user it is followed for: the user who switched
    it on first, when several did (a log is imported once, into one user's sessions)."""
    found: dict[Path, User] = {}
    for row in FollowedFolder.objects.select_related("owner").order_by("created", "pk"):
        if row.owner.is_active:
            found.setdefault(Path(row.path), row.owner)
    return found
