"""``python manage.py recover_handoffs [--json]``: recover stuck records (DESIGN.md mapping)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from handoff.recovery import recover


class Command(BaseCommand):
    help = "Move stuck handoff records on (crash recovery; a record never moves backwards)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print one JSON list.")

    def handle(self, *args: Any, **options: Any) -> None:
        done = recover()
        if options["json"]:
            self.stdout.write(json.dumps([item.as_dict() for item in done]))
            return
        for item in done:
            self.stdout.write(f"{item.record}: {item.before} -> {item.after} ({item.action})")
        self.stdout.write(f"{len(done)} record(s) recovered.")
