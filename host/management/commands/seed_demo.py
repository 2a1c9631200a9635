"""``python manage.py seed_demo [--reset]``: the demo user, workspace and conversations.

Idempotent; ``--reset`` first deletes the demo user and all it owns, so the demo starts afresh
(nothing else needs deleting by hand).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from host.demo import DEMO_PASSWORD, DEMO_USERNAME, reset_demo, seed_demo


class Command(BaseCommand):
    help = "Create the demo user, workspace and a conversation long enough to hand off."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Delete the demo user and everything it owns first, then seed it afresh.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["reset"]:
            removed = reset_demo()
            self.stdout.write(f"Reset the demo: {removed} session(s) of {DEMO_USERNAME} deleted.")
        created = seed_demo()
        for session in created:
            self.stdout.write(f"Seeded demo session {session.id} “{session.title}”.")
        self.stdout.write(self.style.SUCCESS(f"{where()} {SIGN_IN}"))


SIGN_IN = f"Sign in as {DEMO_USERNAME} / {DEMO_PASSWORD}."


def where() -> str:
    """Where the demo is served: ``make run`` passes its ``PORT`` here; run alone, this command
    cannot know the port of a server already running, so it says how that is decided."""
    port = os.environ.get("PORT")
    if port:
        return f"Open http://127.0.0.1:{port}/."
    return (
        "Open the running server's address: `make run` serves http://127.0.0.1:8000/, or "
        "the port it was started with (`make run PORT=…`)."
    )
