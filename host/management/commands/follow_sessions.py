"""``python manage.py follow_sessions [DIR …] [--owner USER] [--once]``: follow live session logs.

Imports the Claude Code session logs and Codex rollouts under each DIR (a single log may be
named too) as their runtimes append to them, with the rules of ``import_transcript``, and keeps
following them (``host.importers.following``) until stopped; ``--once`` imports what is there
and exits. Without DIR it follows the runtimes' folders users switched on in Settings →
Conversation Collaboration, each for the user who did (``SwitchedFollower``: switches made
while it runs are picked up within seconds; with none on it idles). The first look at the
folders prints its progress (logs, messages, rate) every ``--progress`` seconds and a
summary; then one line per log that gained lines. Each damaged line is printed as
``path:line: reason``; a log that cannot be imported is printed with why and no longer read.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext

from host.importers.following import Follower, SwitchedFollower
from host.importers.live import Step
from host.management.commands.import_transcript import resolve_owner


class Command(BaseCommand):
    help = "Follow Claude Code session logs and Codex rollouts as they are written."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folders", nargs="*", type=Path, metavar="DIR", help="logs folder")
        parser.add_argument("--owner", default=None, help="username owning the sessions")
        parser.add_argument("--once", action="store_true", help="import what is there, exit")
        parser.add_argument(
            "--progress", type=float, default=2.0, help="seconds between progress lines"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Follow the folders (or the switched-on ones); return after one pass with ``--once``.

        Raises ``CommandError`` for an unknown ``--owner``, or ``--owner`` without DIR.
        """
        if options["folders"]:
            follower = Follower(
                options["folders"], resolve_owner(options["owner"]), report=self.report
            )
        elif options["owner"] is not None:
            raise CommandError(
                gettext("--owner names whose sessions the named folders feed: name a DIR too.")
            )
        else:
            follower = SwitchedFollower([], None, report=self.report)
        self.started = time.monotonic()
        self.last_progress = self.started
        self.every = options["progress"]
        self.totals = {"logs": 0, "lines": 0, "messages": 0, "damaged": 0, "failed": 0}
        self.first_scan = True
        if options["once"]:
            follower.once()
            self.summary()
            return
        follower.reconcile()
        self.summary()
        self.first_scan = False
        asyncio.run(follower.run())

    def report(self, step: Step) -> None:
        """Count ``step``; print its damaged lines, its failure, and progress or a line."""
        self.totals["logs"] += 1 if step.lines else 0
        self.totals["lines"] += step.lines
        self.totals["messages"] += step.messages
        self.totals["damaged"] += len(step.notes)
        for note in step.notes:
            self.stderr.write(str(note))
        if step.failed:
            self.totals["failed"] += 1
            self.stderr.write(gettext("not followed: %(reason)s") % {"reason": step.failed})
        now = time.monotonic()
        if not self.first_scan:
            self.stdout.write(
                gettext("%(path)s: %(messages)d messages")
                % {"path": step.path, "messages": step.messages}
            )
        elif now - self.last_progress >= self.every:
            self.last_progress = now
            self.stdout.write(self.progress(now))

    def progress(self, now: float) -> str:
        """Return the first scan's progress: logs, messages and messages a second so far."""
        seconds = max(now - self.started, 1e-9)
        return gettext("%(logs)d logs, %(messages)d messages (%(rate).0f messages/s)") % {
            **self.totals,
            "rate": self.totals["messages"] / seconds,
        }

    def summary(self) -> None:
        """Print the first scan's summary."""
        seconds = time.monotonic() - self.started
        self.stdout.write(
            gettext(
                "Imported %(messages)d messages from %(lines)d lines of %(logs)d logs in "
                "%(seconds).1f s; %(damaged)d damaged lines, %(failed)d logs not followed."
            )
            % {**self.totals, "seconds": seconds}
        )
