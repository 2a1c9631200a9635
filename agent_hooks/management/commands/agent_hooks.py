"""``python manage.py agent_hooks install|uninstall|status``: the runtimes' hooks for handoff.

    agent_hooks install   --runtime claude|codex --server URL --user NAME
                          [--scope user | --scope project DIR] [--settings-file FILE]
                          [--status-line]
    agent_hooks uninstall --runtime claude|codex [--scope …] [--settings-file FILE]
    agent_hooks status    --runtime claude|codex [--server URL] [--scope …] [--settings-file FILE]

``install`` writes a bearer token for ``--user`` to the 0600 token file (kept when the file
already holds one of that user's tokens) and merges the hook entries into the runtime's
settings (``agent_hooks.install``); ``uninstall`` takes them out again; ``status`` says what is
installed, whether the server answers, and what would stop the runtime from running the hooks
(``agent_hooks.hook_status``). The token is never printed, logged or put in a settings file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent_hooks import hook_status
from agent_hooks.install import (
    EVENTS,
    RUNTIMES,
    InstallError,
    Target,
    install,
    installed_events,
    is_ours,
    load,
    loopback_server,
    read_token,
    settings_path,
    token_path,
    uninstall,
    write_token,
)
from host.auth import issue_token, token_digest
from host.models import ApiToken

SERVER_IN_COMMAND = re.compile(r"--server\s+['\"]?([^\s'\"]+)")


class Command(BaseCommand):
    help = "Install, uninstall or check the Claude Code / Codex hooks that hand sessions off."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=("install", "uninstall", "status"))
        parser.add_argument("--runtime", required=True, choices=RUNTIMES)
        parser.add_argument("--server", help="the product's URL on this machine (http://…)")
        parser.add_argument("--user", help="install: the user whose sessions the hooks report")
        parser.add_argument(
            "--scope",
            nargs="+",
            default=["user"],
            metavar="user|project DIR",
            help="the user's settings (default) or one project folder's",
        )
        parser.add_argument(
            "--settings-file",
            type=Path,
            help="this settings file instead (Django keeps --settings for its settings module)",
        )
        parser.add_argument(
            "--status-line",
            action="store_true",
            help="install: also the Claude Code status line showing the handoff meter",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the action; bad arguments raise ``CommandError`` before anything changes."""
        target = self.target(options)
        try:
            if options["action"] == "install":
                lines = self.install(target, options)
            elif options["action"] == "uninstall":
                lines = uninstall(target).lines
            else:
                lines = self.status(target, options)
        except InstallError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:  # a write failed: the file it was replacing is as it was
            raise CommandError(f"{exc.filename or ''} {exc.strerror or exc}".strip()) from exc
        for line in lines:
            self.stdout.write(line)

    def target(self, options: dict[str, Any]) -> Target:
        """Return the settings file the action works on."""
        scope = options["scope"]
        if scope == ["user"]:
            project = None
        elif len(scope) == 2 and scope[0] == "project":
            project = Path(scope[1]).expanduser().resolve()
            if not project.is_dir():
                raise CommandError(f"--scope project {scope[1]}: not a folder.")
        else:
            raise CommandError("--scope is 'user' or 'project DIR'.")
        runtime = options["runtime"]
        try:
            path = options["settings_file"] or settings_path(
                runtime, "project" if project else "user", project, os.environ
            )
        except InstallError as exc:
            raise CommandError(str(exc)) from exc
        return Target(runtime, Path(path), "project" if project else "user", project)

    def install(self, target: Target, options: dict[str, Any]) -> list[str]:
        """Check the arguments, write the token file, then merge the entries."""
        if not options["server"] or not options["user"]:
            raise CommandError("install needs --server URL and --user NAME.")
        if options["status_line"] and target.runtime != "claude":
            raise CommandError("--status-line is for Claude Code only.")
        server = loopback_server(options["server"])
        user = self.user(options["user"])
        token_file = token_path(os.environ)
        lines = [self.ensure_token(user, token_file)]
        lines += install(target, server, token_file, status_line=options["status_line"]).lines
        return [*lines, hook_status.RESTART_NOTE]

    def user(self, username: str) -> Any:
        """Return the active user named ``username``; raises ``CommandError`` otherwise."""
        user_model = get_user_model()
        try:
            return user_model._default_manager.get(username=username, is_active=True)
        except user_model.DoesNotExist as exc:
            raise CommandError(f"No active user named {username!r}.") from exc

    def ensure_token(self, user: Any, token_file: Path) -> str:
        """Keep the token file when it holds one of ``user``'s tokens, else write a new one.

        The token row is stored before the file is written: a crash between the two leaves an
        unused token, and the old file still in place.
        """
        current = read_token(token_file)
        if current and ApiToken.objects.filter(user=user, digest=token_digest(current)).exists():
            return f"Kept the token of {user.get_username()} in {token_file}."
        write_token(token_file, issue_token(user))
        return f"Wrote a new token for {user.get_username()} to {token_file} (mode 0600)."

    def status(self, target: Target, options: dict[str, Any]) -> list[str]:
        """Describe the installed hooks, the server's answer and what may disable the hooks."""
        raw, document = load(target.path)
        events = installed_events(document)
        if raw is None or not events:
            lines = [f"No {target.runtime} hooks of the product in {target.path}."]
        else:
            missing = [event for event in EVENTS[target.runtime] if event not in events]
            lines = [f"Installed in {target.path}: {', '.join(events)}."]
            if missing:
                lines.append(f"Missing events (install again): {', '.join(missing)}.")
        if target.runtime == "claude" and is_ours(document.get("statusLine")):
            lines.append("The status line shows the handoff meter.")
        server = options["server"] or self.installed_server(document)
        if server:
            lines.append(
                hook_status.server_answer(
                    loopback_server(server), read_token(token_path(os.environ))
                )
            )
        blockers = (
            hook_status.claude_blockers(target, os.environ)
            if target.runtime == "claude"
            else hook_status.codex_blockers(target, os.environ, document)
        )
        lines += blockers or ["Nothing found that stops the runtime from running them."]
        return [*lines, hook_status.RESTART_NOTE]

    def installed_server(self, document: dict[str, Any]) -> str | None:
        """Return the ``--server`` URL named by the product's installed entries, if any."""
        for groups in (document.get("hooks") or {}).values():
            for group in groups if isinstance(groups, list) else []:
                for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                    match = SERVER_IN_COMMAND.search(str(handler.get("command", "")))
                    if is_ours(handler) and match:
                        return match.group(1)
        return None
