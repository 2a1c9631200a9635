"""Merge the product's hook entries into a runtime's settings, and take them out again.

Built against Claude Code 2.1 (settings: https://code.claude.com/docs/en/settings; hooks:
https://code.claude.com/docs/en/hooks; status line: https://code.claude.com/docs/en/statusline)
and Codex CLI 0.145+ (https://developers.openai.com/codex/hooks). Both read the same shape::

    {"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command",
                                                         "command": "...", "timeout": 5}]}]}}

Claude Code keeps it in ``settings.json`` (user: ``~/.claude/settings.json``, or
``$CLAUDE_CONFIG_DIR/settings.json``; project scope: ``<dir>/.claude/settings.local.json``, the
file that is not committed); Codex in ``hooks.json`` (user: ``$CODEX_HOME/hooks.json``, else
``~/.codex/hooks.json``; project scope: ``<dir>/.codex/hooks.json``). ``~`` is the home folder
on Linux, macOS and Windows alike (``%USERPROFILE%`` on Windows).

The rules (docs/operations.md, "Agent runtime hooks"):

- Every other entry of the file is kept as it is; the product's own entries are the handlers
  whose command runs ``agent_hooks/hook.py``. Installing replaces them, so installing twice
  leaves one entry per event.
- The runtime's hook ``timeout`` (seconds) is longer than the command's own deadline (10 s for
  SessionStart, 1 s otherwise): 15 s for SessionStart, 5 s for the others (3 s for Codex's
  SessionEnd, the most Codex allows it), so an answer printed in time is always read.
- Before the first change the file's bytes are copied to ``<file>.session-handoff.bak``.
  Uninstalling restores exactly those bytes when nothing else changed the file meanwhile, and
  deletes a file the install created; otherwise it removes only the product's entries.
- Every write goes to a temporary file in the same folder that then replaces the original, so
  a crash half-way leaves either the old file or the new one, never a torn one. The backup is
  written before the settings file; a crash between the two leaves the backup only.
- The bearer token is never written into a settings file: it lives in the 0600 token file
  (``token_path``), which the command names.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

RUNTIMES = ("claude", "codex")
HOOK_SCRIPT = Path(__file__).resolve().with_name("hook.py")
"""The hook command's script, named by absolute path in every installed entry."""
OURS = re.compile(r"agent_hooks[\\/]+hook\.py")
"""A handler whose command matches this is one of the product's (whichever checkout)."""
BACKUP_SUFFIX = ".session-handoff.bak"

EVENTS: dict[str, dict[str, int]] = {
    "claude": {
        "SessionStart": 15,
        "SessionEnd": 5,
        "UserPromptSubmit": 5,
        "Stop": 5,
        "SubagentStart": 5,
        "SubagentStop": 5,
        "PreCompact": 5,
        "PostCompact": 5,
    },
    "codex": {
        "SessionStart": 15,
        "SessionEnd": 3,
        "UserPromptSubmit": 5,
        "Stop": 5,
        "PreCompact": 5,
        "PostCompact": 5,
    },
}
"""Per runtime, the events the product hooks and the runtime-side ``timeout`` (seconds) of
each: longer than the command's deadline. Claude Code's SessionEnd hooks share a 1.5 s budget
that a settings file's longer ``timeout`` raises; Codex clamps SessionEnd to 3 s. Codex has no
subagent events."""

CLAUDE_MANAGED_SETTINGS = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
    "win32": Path("C:/ProgramData/ClaudeCode/managed-settings.json"),
}
"""Where Claude Code reads the organisation's managed settings, per ``sys.platform``."""
CODEX_REQUIREMENTS = {
    "linux": Path("/etc/codex/requirements.toml"),
    "darwin": Path("/etc/codex/requirements.toml"),
}
"""Where Codex reads the administrator's requirements (which may force hooks off)."""


class InstallError(Exception):
    """The install, uninstall or status cannot go on; the message says why. Nothing changed."""


@dataclass(frozen=True)
class Target:
    """One runtime's settings file the product's hooks go into.

    ``scope`` is ``user`` or ``project``; ``project`` is the project folder for the project
    scope (else None).
    """

    runtime: str
    path: Path
    scope: str
    project: Path | None = None


@dataclass
class Outcome:
    """What an install or uninstall did, in sentences for the user (no token in any)."""

    lines: list[str] = field(default_factory=list)


def platform_key() -> str:
    """Return ``linux``, ``darwin`` or ``win32`` for this machine (other Unixes count as Linux)."""
    return sys.platform if sys.platform in ("darwin", "win32") else "linux"


def loopback_server(url: str) -> str:
    """Return ``url`` without a trailing slash when it is an ``http://`` URL of this machine.

    The server must run on the same machine as the runtime (docs/design.md: no handoff across
    machines): its host must be ``localhost`` or a loopback address (127.0.0.0/8, ::1).
    Raises ``InstallError`` otherwise.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if parts.scheme != "http" or not loopback:
        raise InstallError(
            f"--server {url}: the server must run on this machine, at an http:// address on "
            "localhost, 127.0.0.1 or ::1 (the hooks hand off sessions of this machine only)."
        )
    if parts.query or parts.fragment:
        raise InstallError(f"--server {url}: give the server's address without a query.")
    return url.rstrip("/")


def home(env: Mapping[str, str]) -> Path:
    """Return the user's home folder (``HOME``, else ``USERPROFILE`` on Windows)."""
    value = env.get("HOME") or env.get("USERPROFILE")
    if not value:
        raise InstallError("cannot tell the home folder: neither HOME nor USERPROFILE is set.")
    return Path(value)


def settings_path(runtime: str, scope: str, project: Path | None, env: Mapping[str, str]) -> Path:
    """Return the settings file of ``runtime`` for ``scope`` (``user`` or ``project``)."""
    if scope == "project":
        assert project is not None
        return (
            project / ".claude" / "settings.local.json"
            if runtime == "claude"
            else project / ".codex" / "hooks.json"
        )
    if runtime == "claude":
        base = env.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else home(env) / ".claude") / "settings.json"
    return codex_home(env) / "hooks.json"


def codex_home(env: Mapping[str, str]) -> Path:
    """Return Codex's folder: ``$CODEX_HOME``, else ``~/.codex``."""
    base = env.get("CODEX_HOME")
    return Path(base) if base else home(env) / ".codex"


def token_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    """Return the token file: ``%APPDATA%\\session-handoff\\token`` on Windows, else
    ``$XDG_CONFIG_HOME/session-handoff/token`` (``~/.config`` when unset)."""
    if (platform or platform_key()) == "win32" and env.get("APPDATA"):
        return Path(env["APPDATA"]) / "session-handoff" / "token"
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else home(env) / ".config") / "session-handoff" / "token"


def python_for_hooks() -> str:
    """Return the interpreter the command runs with: this one's real file (a virtualenv's
    ``python`` resolves to its base interpreter, which ``-I -S`` runs with the standard library
    only)."""
    return os.path.realpath(sys.executable)


def hook_command(runtime: str, server: str, token_file: Path, *, status_line: bool = False) -> str:
    """Return the shell command a runtime runs for the product's hook (or status line)."""
    words = [
        python_for_hooks(),
        "-I",
        "-S",
        str(HOOK_SCRIPT),
        "--runtime",
        runtime,
        "--server",
        server,
        "--token-file",
        str(token_file),
    ]
    if status_line:
        words.append("--status-line")
    if platform_key() == "win32":  # forward slashes: Git Bash, cmd and PowerShell read them
        return subprocess.list2cmdline(word.replace("\\", "/") for word in words)
    return shlex.join(words)


def is_ours(handler: object) -> bool:
    """Whether a settings handler is one of the product's (its command runs ``hook.py``)."""
    return isinstance(handler, dict) and bool(OURS.search(str(handler.get("command", ""))))


def load(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """Return the file's bytes (None when it does not exist) and its JSON object.

    Raises ``InstallError`` when the file is not a JSON object or its ``hooks`` is not one.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        document = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first.") from exc
    if not isinstance(document, dict) or not isinstance(document.get("hooks", {}), dict):
        raise InstallError(f"{path}: expected a JSON object whose 'hooks' is an object.")
    return raw, document


def dump(document: dict[str, Any]) -> bytes:
    """Return ``document`` as the settings files are written: 2-space JSON and a newline."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` through a temporary file in its folder.

    The new file gets ``mode`` when given (set before any byte is written), else the replaced
    file's permission bits, else the usual ones for a new file (0666 less the umask).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = existing_mode(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.chmod(temporary, mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def existing_mode(path: Path) -> int:
    """Return ``path``'s permission bits, or 0666 less the umask when it does not exist."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def without_ours(document: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``document`` with the product's handlers taken out.

    A matcher group left without handlers is dropped, an event left without groups too (one
    that had none is dropped as well), and ``hooks`` when it is left empty; everything else is
    kept in its order. Uninstalling compares documents through this function, so an empty
    ``hooks`` or event list the user had counts as unchanged.
    """
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return dict(document)
    kept_events: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept_events[event] = groups
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept_groups.append(group)
                continue
            rest = [h for h in handlers if not is_ours(h)]
            if rest:
                kept_groups.append({**group, "hooks": rest})
        if kept_groups:
            kept_events[event] = kept_groups
    result = {key: value for key, value in document.items() if key != "hooks"}
    if kept_events:
        result["hooks"] = kept_events
    return result


def with_ours(document: dict[str, Any], runtime: str, commands: dict[str, str]) -> dict[str, Any]:
    """Return ``document`` with the product's handler for each event of ``commands`` (event →
    command), replacing any the product had installed before: one matcher group per event,
    appended after the user's own groups, with the runtime-side ``timeout`` of ``EVENTS``."""
    result = without_ours(document)
    hooks = dict(result.get("hooks", {}))
    for event, command in commands.items():
        handler = {"type": "command", "command": command, "timeout": EVENTS[runtime][event]}
        hooks[event] = [*hooks.get(event, []), {"hooks": [handler]}]
    result["hooks"] = hooks
    return result


def installed_events(document: dict[str, Any]) -> list[str]:
    """Return the events that have one of the product's handlers, in the file's order."""
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [
        event
        for event, groups in hooks.items()
        if isinstance(groups, list)
        and any(
            is_ours(handler)
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for handler in group["hooks"]
        )
    ]


def backup_path(path: Path) -> Path:
    """Return where the settings file's bytes from before the first install are kept."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def install(target: Target, server: str, token_file: Path, *, status_line: bool = False) -> Outcome:
    """Merge the product's hooks for ``target.runtime`` into ``target.path``.

    Writes the backup first (when the file exists and holds none of the product's entries yet;
    a second install keeps the first backup, and a stale backup of a file that no longer exists
    is removed), then the merged file. With
    ``status_line`` (Claude Code only) the product's status line is installed when the file has
    none, else the outcome prints the command for the user to combine with their own.
    Raises ``InstallError`` (nothing changed) on an unreadable file, or one where an event the
    product hooks is not a list of matcher groups (the entry cannot be kept as it is beside
    the product's).
    """
    raw, document = load(target.path)
    for event, groups in document.get("hooks", {}).items():
        if event in EVENTS[target.runtime] and not isinstance(groups, list):
            raise InstallError(
                f"{target.path}: hooks.{event} is not a list of matcher groups "
                '([{"matcher": …, "hooks": [...]}]); fix it first.'
            )
    commands = {
        event: hook_command(target.runtime, server, token_file) for event in EVENTS[target.runtime]
    }
    merged = with_ours(document, target.runtime, commands)
    outcome = Outcome()
    if status_line:
        merged = _with_status_line(merged, server, token_file, outcome)
    backup = backup_path(target.path)
    if raw is None:
        backup.unlink(missing_ok=True)
    elif not installed_events(document):
        write_atomically(backup, raw)
        outcome.lines.append(f"Backed up {target.path} to {backup}.")
    if raw is not None and load_bytes_equal(raw, merged):
        outcome.lines.append(f"{target.path} already holds the hooks; nothing to change.")
    else:
        write_atomically(target.path, dump(merged))
        outcome.lines.append(
            f"Installed the {target.runtime} hooks ({', '.join(commands)}) in {target.path}."
        )
    return outcome


def same_content(before: bytes, remaining: dict[str, Any]) -> bool:
    """Whether the backup's bytes hold what is left once the product's entries are out."""
    try:
        document = json.loads(before) if before.strip() else {}
    except ValueError:
        return False
    return isinstance(document, dict) and without_ours(document) == remaining


def load_bytes_equal(raw: bytes, document: dict[str, Any]) -> bool:
    """Whether the file's ``raw`` bytes already parse to ``document``."""
    try:
        return bool(json.loads(raw) == document)
    except ValueError:
        return False


def _with_status_line(
    document: dict[str, Any], server: str, token_file: Path, outcome: Outcome
) -> dict[str, Any]:
    """Add the product's Claude Code status line when the document has none of the user's."""
    command = hook_command("claude", server, token_file, status_line=True)
    current = document.get("statusLine")
    if current is None or is_ours(current):
        outcome.lines.append("Installed the status line (the handoff meter).")
        return {**document, "statusLine": {"type": "command", "command": command}}
    outcome.lines.append(
        "You have a status line of your own, left as it is. To combine it with the handoff "
        "meter, have your status line command pass its stdin on to this one and print its "
        "line too:\n"
        f"  {command}"
    )
    return document


def uninstall(target: Target) -> Outcome:
    """Take the product's hooks (and status line) out of ``target.path``.

    When the file then equals the backup's content, the backup's exact bytes are put back and
    the backup removed; when the install created the file (no backup) and nothing else is left
    in it, the file is deleted; otherwise only the product's entries are removed and the backup
    is kept. Raises ``InstallError`` (nothing changed) on an unreadable file.
    """
    raw, document = load(target.path)
    outcome = Outcome()
    if raw is None:
        outcome.lines.append(f"{target.path} does not exist; nothing to uninstall.")
        return outcome
    remaining = without_ours(document)
    if is_ours(remaining.get("statusLine")):
        remaining = {k: v for k, v in remaining.items() if k != "statusLine"}
    backup = backup_path(target.path)
    before = backup.read_bytes() if backup.exists() else None
    if before is not None and same_content(before, remaining):
        write_atomically(target.path, before)
        backup.unlink()
        outcome.lines.append(f"Restored {target.path} as it was before the install.")
    elif before is None and not remaining:
        target.path.unlink()
        outcome.lines.append(f"Removed {target.path} (the install had created it).")
    elif remaining == document:
        outcome.lines.append(f"{target.path} holds none of the product's hooks.")
    else:
        write_atomically(target.path, dump(remaining))
        kept = f"; the backup stays at {backup}" if before is not None else ""
        outcome.lines.append(f"Removed the product's hooks from {target.path}{kept}.")
    return outcome


def write_token(path: Path, token: str) -> None:
    """Write ``token`` to ``path`` readable by its owner only (0600; its folder 0700 when
    created). Atomic: the old token stays until the new file replaces it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomically(path, (token + "\n").encode("utf-8"), mode=0o600)


def read_token(path: Path) -> str | None:
    """Return the token stored in ``path``, None when there is none."""
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
