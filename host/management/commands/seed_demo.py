"""``python manage.py seed_demo [--reset]``: the demo user, workspace and conversations.

Idempotent; ``--reset`` first deletes the demo user and all it owns, so the demo starts afresh
(nothing else needs deleting by hand). Its messages are in the active language
(``LANGUAGE_CODE``: English unless the deployment chooses ``zh-hans``).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils.translation import gettext, ngettext

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
            deleted = ngettext(
                "Reset the demo: %(count)d session of %(user)s deleted.",
                "Reset the demo: %(count)d sessions of %(user)s deleted.",
                removed,
            )
            self.stdout.write(deleted % {"count": removed, "user": DEMO_USERNAME})
        created = seed_demo()
        for session in created:
            seeded = gettext("Seeded demo session %(id)s “%(title)s”.")
            self.stdout.write(seeded % {"id": session.id, "title": session.title})
        self.stdout.write(self.style.SUCCESS(f"{where()} {sign_in()}"))


def sign_in() -> str:
    """The demo's credentials, said in the active language."""
    return gettext("Sign in as %(user)s / %(password)s.") % {
        "user": DEMO_USERNAME,
        "password": DEMO_PASSWORD,
    }


def where() -> str:
    """Where the demo is served: ``make run`` passes its ``PORT`` here; run alone, this command
    cannot know the port of a server already running, so it says how that is decided."""
    port = os.environ.get("PORT")
    if port:
        return gettext("Open http://127.0.0.1:%(port)s/.") % {"port": port}
    return gettext(
        "Open the running server's address: `make run` serves http://127.0.0.1:8000/, or "
        "the port it was started with (`make run PORT=…`)."
    )
