"""``python manage.py seed_demo``: the demo user, workspace and conversation (idempotent)."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand

from host.demo import DEMO_PASSWORD, DEMO_USERNAME, seed_demo


class Command(BaseCommand):
    help = "Create the demo user, workspace and a conversation long enough to hand off."

    def handle(self, *args: Any, **options: Any) -> None:
        created = seed_demo()
        for session in created:
            self.stdout.write(f"Seeded demo session {session.id} “{session.title}”.")
        port = os.environ.get("PORT", "8000")
        self.stdout.write(
            self.style.SUCCESS(
                f"Open http://127.0.0.1:{port}/ and sign in as {DEMO_USERNAME} / {DEMO_PASSWORD}."
            )
        )
