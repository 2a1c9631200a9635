"""``python manage.py recover_handoffs [--json] [--every SECONDS]``: recover stuck records.

Applies the recovery table of docs/spec.md, Recovery, once, or with ``--every`` forever at that
interval (the Procfile's ``recovery`` process: start-up and then periodically). Each record is
recovered in its own transaction, so a crash half-way leaves every record either moved on or as it
was. With ``--every``, a pass the database could not serve (an outage, ``too many clients``) is
reported on stderr and the next pass comes at the next interval: the process keeps running.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import InterfaceError, OperationalError, close_old_connections

from handoff.recovery import recover


class Command(BaseCommand):
    help = "Move stuck handoff records on (crash recovery; a record never moves backwards)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print one JSON list per pass.")
        parser.add_argument(
            "--every",
            type=float,
            default=0,
            metavar="SECONDS",
            help="Run again every SECONDS (> 0) until interrupted; default: once.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        every: float = options["every"]
        if every <= 0:
            self._pass(as_json=options["json"])
            return
        while True:
            try:
                self._pass(as_json=options["json"])
            except (OperationalError, InterfaceError) as exc:
                self.stderr.write(f"Database unavailable ({exc}); next pass in {every:g} s.")
                close_old_connections()
            time.sleep(every)

    def _pass(self, *, as_json: bool) -> None:
        done = recover()
        if as_json:
            self.stdout.write(json.dumps([item.as_dict() for item in done]))
            return
        for item in done:
            self.stdout.write(f"{item.record}: {item.before} -> {item.after} ({item.action})")
        self.stdout.write(f"{len(done)} record(s) recovered.")
