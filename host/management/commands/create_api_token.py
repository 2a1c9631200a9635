"""``python manage.py create_api_token USER``: print a new bearer token for the JSON API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from host.auth import issue_token


class Command(BaseCommand):
    help = "Create a bearer token for USER and print it (only its SHA-256 digest is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="username of the token's owner")

    def handle(self, *args: Any, **options: Any) -> None:
        """Print the token on one line; an unknown user raises ``CommandError``, nothing stored."""
        user_model = get_user_model()
        username = options["user"]
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist as exc:
            raise CommandError(f"No user named {username!r}.") from exc
        self.stdout.write(issue_token(user))
